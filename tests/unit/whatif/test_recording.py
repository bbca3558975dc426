"""Recordings: what a recorder writes of a cluster (and of a relist), what a file that is not a
recording gets, and what a replay makes of the changes on virtual time."""

from __future__ import annotations

import io
import json

import pytest
from lightkube.models import core_v1 as m
from lightkube.resources import core_v1

from builders import make_node, make_pod, secret
from kubesched.clock import VirtualClock
from kubesched.cluster import Gone
from kubesched.config import default_config
from kubesched.scheduler.discovery import plugin_registry
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.storage.store import DEFAULT_WATCH_LATENCY
from kubesched.whatif.record import Recorder, RecordingError, load
from kubesched.whatif.replay import differences, recorded, replay


class ForgetfulCluster:
    """A memory cluster whose first pod watch finds its version compacted away, after `meanwhile`
    changed the store: the recorder must list again and write the difference."""

    def __init__(self, store: MemoryStore, meanwhile) -> None:
        self.inner = MemoryCluster(store)
        self.meanwhile = meanwhile
        self.forgot = False

    def watch(self, kind, **options):
        if kind is core_v1.Pod and not self.forgot:
            self.forgot = True
            self.meanwhile()
            raise Gone("too old resource version")
        return self.inner.watch(kind, **options)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def record(store, clock, body, *, cluster=None, duration=10.0) -> list[dict]:
    out = io.StringIO()
    recorder = Recorder(cluster or MemoryCluster(store), out, clock=clock)

    async def main():
        await clock.sleep(0.5)
        await body()
        await clock.sleep(1.0)  # the last changes delivered

    clock.run_alongside(main(), [lambda: recorder.run(duration=duration)])
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert recorder.changes == len(lines) - 1 - sum(1 for line in lines[1:] if line.get("initial"))
    return lines


def shown(lines):
    return [(line["type"], line["object"]["kind"], line["object"]["metadata"]["name"]) for line in lines]


def test_the_start_is_listed_then_every_change_written_with_its_time():
    clock = VirtualClock()
    store = MemoryStore(clock=clock)
    store.create(make_node("n1").obj)
    old = make_pod("old").req(cpu="1").obj
    old.spec.containers[0].env = [m.EnvVar(name="TOKEN", value="s3cr3t")]
    store.create(old)
    store.create(secret("creds"))
    cluster = MemoryCluster(store)

    async def body():
        await cluster.create(make_pod("new").obj)
        await clock.sleep(1.0)
        await cluster.delete(core_v1.Pod, "old", namespace="default", grace_period_seconds=0)

    lines = record(store, clock, body)
    assert lines[0]["kubeschedRecording"] == 1 and "Secret" not in lines[0]["kinds"]
    initial = [line for line in lines[1:] if line.get("initial")]
    assert ("ADDED", "Node", "n1") in shown(initial) and ("ADDED", "Pod", "old") in shown(initial)
    assert all(line["object"]["kind"] != "Secret" for line in lines[1:])
    listed = next(line["object"] for line in initial if line["object"]["metadata"]["name"] == "old")
    assert listed["spec"]["containers"][0]["env"] == [{"name": "TOKEN"}]  # names only, as a snapshot keeps them
    changes = [line for line in lines[1:] if not line.get("initial")]
    assert shown(changes) == [("ADDED", "Pod", "new"), ("DELETED", "Pod", "old")]
    # when the watch delivered them: the change's time and the store's watch latency
    assert [line["t"] for line in changes] == [0.5 + DEFAULT_WATCH_LATENCY, 1.5 + DEFAULT_WATCH_LATENCY]
    assert "managedFields" not in changes[0]["object"]["metadata"]


def test_a_watch_that_cannot_resume_lists_again_and_writes_the_difference():
    clock = VirtualClock()
    store = MemoryStore(clock=clock)
    for name in ("kept", "changed", "gone"):
        store.create(make_pod(name).obj)

    def meanwhile():
        store.delete(core_v1.Pod, "gone", namespace="default", grace_period_seconds=0)
        store.patch(core_v1.Pod, "changed", {"metadata": {"labels": {"tier": "web"}}}, namespace="default")
        store.create(make_pod("arrived").obj)

    async def body():
        await clock.sleep(0)

    lines = record(store, clock, body, cluster=ForgetfulCluster(store, meanwhile))
    changes = [line for line in lines[1:] if not line.get("initial")]
    assert shown(changes) == [("DELETED", "Pod", "gone"), ("ADDED", "Pod", "arrived"), ("MODIFIED", "Pod", "changed")]
    assert changes[0]["object"]["metadata"]["uid"]  # a deletion names the uid it had
    assert changes[2]["object"]["metadata"]["labels"] == {"tier": "web"}


HEADER = '{"kubeschedRecording": 1, "started": "2026-12-07T00:00:00Z", "kinds": []}'
POD = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ":1: not a kubesched recording"),
        ('{"kubeschedRecording": 2}\n', ":1: not a kubesched recording (no header line of format 1)"),
        (HEADER + "\n{nope\n", ":2: not JSON (Expecting property name enclosed in double quotes)"),
        (HEADER + '\n{"t": 0, "type": "ADDED"}\n', ":2: a change needs an object"),
        (HEADER + '\n{"t": 0, "type": "ADDED", "object": {"kind": "Pod", "metadata": {}}}\n', ":2: object: kind"),
        (HEADER + f'\n{{"t": 0, "type": "BOOKMARK", "object": {POD}}}\n', ":2: type: 'BOOKMARK' is not one of"),
        (
            HEADER
            + f'\n{{"t": 2, "type": "ADDED", "object": {POD}}}\n{{"t": 1, "type": "DELETED", "object": {POD}}}\n',
            ":3: t: expected seconds, not before the line above (1)",
        ),
        (
            HEADER + f'\n{{"t": 1, "type": "ADDED", "object": {POD}}}\n'
            f'{{"t": 1, "type": "ADDED", "initial": true, "object": {POD}}}\n',
            ":3: an initial object after the changes began",
        ),
    ],
)
def test_a_file_that_is_not_a_recording_is_named_with_its_line(text, message, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(RecordingError) as raised:
        load(path)
    assert str(raised.value).startswith(f"{path}{message}")


def test_replay_cli_names_a_bad_recording_and_exits_2(tmp_path, capsys):
    from kubesched.cli.main import main

    path = tmp_path / "bad.jsonl"
    path.write_text("hello\n")
    assert main(["replay", str(path)]) == 2
    assert capsys.readouterr().err.strip() == f"{path}:1: not JSON (Expecting value)"


def pod_doc(name, *, cpu, uid, scheduler="default-scheduler", node=None, phase="Pending"):
    spec = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node:
        spec["nodeName"] = node
    meta = {"name": name, "namespace": "default", "uid": uid}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def node_doc(name, cpu):
    node = make_node(name).capacity(cpu=cpu).obj
    return node.to_dict()


def recording_file(tmp_path, initial, changes):
    lines = [HEADER]
    lines += [json.dumps({"t": 0, "type": "ADDED", "initial": True, "object": o}) for o in initial]
    lines += [json.dumps({"t": t, "type": kind, "object": o}) for t, kind, o in changes]
    path = tmp_path / "made.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return load(path)


def test_replay_applies_the_changes_at_their_times_and_the_scheduler_decides(tmp_path):
    big = pod_doc("big", cpu="1500m", uid="u-big")
    waiting = pod_doc("waiting", cpu="1", uid="u-waiting")
    other = pod_doc("other", cpu="100m", uid="u-other", scheduler="someone-else")
    recording = recording_file(
        tmp_path,
        [node_doc("n1", "2"), node_doc("n2", "2")],
        [
            (1.0, "ADDED", big),
            (1.01, "MODIFIED", {**big, "spec": {**big["spec"], "nodeName": "n2"}}),
            (2.0, "ADDED", waiting),
            (2.01, "MODIFIED", {**waiting, "spec": {**waiting["spec"], "nodeName": "n1"}}),
            (3.0, "ADDED", other),
            (4.0, "MODIFIED", {**other, "spec": {**other["spec"], "nodeName": "n1"}}),
            (6.0, "DELETED", big),
        ],
    )
    registry = plugin_registry()
    outcome = replay(recording, config=default_config(registry), registry=registry, label="default", settle=5.0)
    assert set(outcome.pods) == {"u-big", "u-waiting"}  # the other scheduler's pod is not ours to place
    assert outcome.pods["u-big"].created == 1.0 and outcome.pods["u-big"].waited == 0.0
    assert outcome.pods["u-waiting"].node != outcome.pods["u-big"].node  # no room beside the big one
    live = recorded(recording, schedulers=["default-scheduler"])
    assert {p.key: p.node for p in live.pods.values()} == {"default/big": "n2", "default/waiting": "n1"}
    assert live.pods["u-waiting"].waited == pytest.approx(0.01)
    fast = replay(recording, config=default_config(registry), registry=registry, label="x2", speed=2.0, settle=1.0)
    assert fast.pods["u-waiting"].created == 1.0  # its 2 s at twice the speed
    moved = {p.key for uid, p in live.pods.items() if outcome.pods[uid].node != p.node}
    assert {d.pod for d in differences([live, outcome])} == moved


def test_a_pod_another_scheduler_placed_is_bound_where_and_when_recorded(tmp_path):
    other = pod_doc("other", cpu="3500m", uid="u-other", scheduler="someone-else")
    mine = pod_doc("mine", cpu="1", uid="u-mine")
    recording = recording_file(
        tmp_path,
        [node_doc("small", "2"), node_doc("large", "4")],
        [
            (1.0, "ADDED", other),
            (4.0, "MODIFIED", {**other, "spec": {**other["spec"], "nodeName": "large"}}),
            (5.0, "ADDED", mine),
        ],
    )
    registry = plugin_registry()
    outcome = replay(recording, config=default_config(registry), registry=registry, label="d", settle=1.0)
    assert list(outcome.pods) == ["u-mine"] and outcome.refused == 0
    assert outcome.pods["u-mine"].node == "small"  # the large node holds the other scheduler's pod


def test_replay_writes_each_runs_trace_for_the_ui_timeline(tmp_path, capsys):
    from kubesched import ui
    from kubesched.cli.main import main

    mine = pod_doc("mine", cpu="1", uid="u-mine")
    recording_file(tmp_path, [node_doc("n1", "2")], [(1.0, "ADDED", mine)])
    traces = tmp_path / "traces"
    assert main(["replay", str(tmp_path / "made.jsonl"), "--traces", str(traces), "--settle", "1s"]) == 0
    assert f"trace of default: {traces / '1.jsonl'} (kubesched ui FILE shows its timeline)" in capsys.readouterr().out
    shown = ui.Recording.load(traces / "1.jsonl")
    bound = [r for r in shown.records if r.kind == "bind.done"]
    assert [(r.pod, r.node) for r in bound] == [("default/mine", "n1")]


def test_replay_json_holds_each_configs_cluster_as_compare_reports_it(tmp_path, capsys):
    from kubesched import ui
    from kubesched.cli.main import main

    mine = pod_doc("mine", cpu="1", uid="u-mine")
    recording_file(tmp_path, [node_doc("small", "2"), node_doc("large", "4")], [(1.0, "ADDED", mine)])
    most = tmp_path / "most.yaml"
    most.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "  - schedulerName: default-scheduler\n    pluginConfig:\n      - name: NodeResourcesFit\n"
        "        args: {scoringStrategy: {type: MostAllocated}}\n"
    )
    default = tmp_path / "default.yaml"
    default.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    argv = ["replay", str(tmp_path / "made.jsonl"), "--config", str(default), "--config", str(most), "--settle", "1s"]
    assert main([*argv, "--output", "json"]) == 0
    out = tmp_path / "replay.json"
    out.write_text(capsys.readouterr().out)
    report = ui.load_comparison(out)  # what `kubesched ui --compare` shows side by side
    placed = {c["config"]: {n["name"]: n["pods"] for n in c["nodes"]} for c in report["configs"]}
    assert placed == {
        str(default): {"small": [], "large": ["default/mine"]},
        str(most): {"small": ["default/mine"], "large": []},
    }


def test_replay_ui_needs_two_configurations(tmp_path, capsys):
    from kubesched.cli.main import main

    recording_file(tmp_path, [node_doc("n1", "2")], [])
    assert main(["replay", str(tmp_path / "made.jsonl"), "--ui"]) == 2
    assert capsys.readouterr().err.strip() == (
        "--ui: shows two or more replayed configurations side by side (--config twice)"
    )


def test_custom_resources_are_recorded_and_replayed_with_their_definitions(tmp_path):
    from builders import plugins_crd
    from kubesched.cluster.custom import custom_resource

    group = custom_resource(group="scheduling.x-k8s.io", version="v1alpha1", kind="PodGroup", plural="podgroups")
    clock = VirtualClock()
    store = MemoryStore(clock=clock)
    store.create(make_node("n1").obj)
    store.create(plugins_crd("podgroups"))
    store.create(group(metadata={"name": "g1", "namespace": "default"}, spec={"minMember": 2}))
    cluster = MemoryCluster(store)

    async def body():
        await cluster.create(group(metadata={"name": "g2", "namespace": "default"}, spec={"minMember": 3}))

    lines = record(store, clock, body)
    initial = shown([line for line in lines[1:] if line.get("initial")])
    assert ("ADDED", "PodGroup", "g1") in initial
    changes = [line for line in lines[1:] if not line.get("initial")]
    assert shown(changes) == [("ADDED", "PodGroup", "g2")]
    path = tmp_path / "groups.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    registry = plugin_registry()
    outcome = replay(load(path), config=default_config(registry), registry=registry, label="d", settle=1.0)
    assert outcome.refused == 0, outcome.reasons
    assert outcome.store is not None
    assert [g.metadata.name for g in outcome.store.list(group).items] == ["g1", "g2"]
