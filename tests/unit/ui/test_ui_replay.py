"""Drill c2's trace replayed: the cluster and the queue at each moment of the preemption, in the
documents the live pages are drawn from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp import web

from builders import fetch_all
from kubesched.cli.main import main
from kubesched.lab.book import LABS
from kubesched.lab.drill import run_c2
from kubesched.lab.harness import recording
from kubesched.trace import JsonLinesSink, ListSink
from kubesched.ui import Recording, RecordingError, mount_replay
from kubesched.ui.documents import PodFilter
from kubesched.workloads import runner
from kubesched.workloads.cases import select


@pytest.fixture(scope="module")
def c2(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    path = tmp_path_factory.mktemp("c2") / "c2.jsonl"
    with path.open("w") as out:
        run_c2(sinks=[JsonLinesSink(out)])
    return Recording.load(path)


def moment(recording: Recording, kind: str, pod: str) -> float:
    return next(r.time for r in recording.records if r.kind == kind and r.pod == pod)


def where(recording: Recording, at: float) -> dict[str, tuple[str | None, str]]:
    document = recording.cluster(at, PodFilter())
    return {p["name"]: (p["node"], p["chip"]) for p in document["pods"] + document["unscheduled"]}


def test_the_victim_leaves_and_the_preemptor_arrives_at_the_recorded_moments(c2):
    arrived = moment(c2, "store.pod.added", "default/urgent")
    chosen = moment(c2, "preemption.chosen", "default/urgent")
    gone = moment(c2, "store.pod.deleted", "default/batch-b")
    bound = moment(c2, "store.pod.bound", "default/urgent")
    assert arrived < chosen < gone < bound
    before = where(c2, arrived - 0.001)
    assert "urgent" not in before and before["batch-b"] == ("node-0", "Running")
    claimed = where(c2, chosen)
    assert claimed["urgent"] == (None, "Unschedulable") and claimed["batch-b"] == ("node-0", "Terminating")
    urgent = c2.pod("default/urgent", chosen)
    assert urgent is not None and urgent["pod"]["nominatedNode"] == "node-0"
    assert urgent["queue"]["queue"] == "unschedulablePods"
    emptied = where(c2, gone)
    assert "batch-b" not in emptied and emptied["urgent"][0] is None
    after = where(c2, bound)
    assert after["urgent"][0] == "node-0"
    node0 = next(n for n in c2.cluster(bound, PodFilter())["nodes"] if n["name"] == "node-0")
    assert node0["requested"]["cpu"] == 1500 + 2000 and node0["allocatable"]["cpu"] == 4000
    assert node0["pods"] == ["default/batch-a", "default/urgent"]


def test_a_pods_timeline_stops_at_the_moment_asked_for(c2):
    chosen = moment(c2, "preemption.chosen", "default/urgent")
    bound = moment(c2, "store.pod.bound", "default/urgent")
    kinds = [row["kind"] for row in c2.pod("default/urgent", chosen)["timeline"]]
    assert "preemption.chosen" in kinds and "bind.done" not in kinds
    assert "bind.done" in [row["kind"] for row in c2.pod("default/urgent", bound)["timeline"]]
    assert c2.pod("default/urgent", chosen - 5) is None  # not yet created


def test_the_slider_stops_at_the_moments_worth_stopping_at(c2):
    document = c2.document()
    assert document["start"] == c2.records[0].time and document["end"] == c2.records[-1].time
    assert moment(c2, "store.pod.deleted", "default/batch-b") in document["marks"]
    assert moment(c2, "store.pod.bound", "default/urgent") in document["marks"]


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("", "no trace records"),
        ("not json\n", ":1: not a trace record"),
        ('{"time": 1.0, "kind": "x", "site": "s"}\n[1, 2]\n', ":2: not a trace record"),
    ],
)
def test_a_file_that_is_not_a_recorded_trace_is_named_with_its_line(tmp_path: Path, content, error):
    path = tmp_path / "trace.jsonl"
    path.write_text(content)
    with pytest.raises(RecordingError, match=error):
        Recording.load(path)


def test_the_replays_json_answers_bad_moments_and_missing_pods(c2):
    app = web.Application()
    mount_replay(app, c2)
    chosen = moment(c2, "preemption.chosen", "default/urgent")
    answers = fetch_all(
        app,
        "/ui/api/replay",
        f"/ui/api/cluster?at={chosen}",
        "/ui/api/cluster?at=soon",
        "/ui/api/cluster?at=nan",
        f"/ui/api/pods/default/urgent?at={chosen - 5}",
        "/ui/api/stream",
    )
    assert answers["/ui/api/replay"][0] == 200
    status, _, body = answers[f"/ui/api/cluster?at={chosen}"]
    assert status == 200 and json.loads(body)["pending"]["unschedulable"] == 1
    for bad in ("/ui/api/cluster?at=soon", "/ui/api/cluster?at=nan"):
        status, _, body = answers[bad]
        assert status == 400 and json.loads(body)["message"].startswith("at: expected seconds on the recording's clock")
    status, _, body = answers[f"/ui/api/pods/default/urgent?at={chosen - 5}"]
    assert status == 404 and "does not exist at this moment" in json.loads(body)["message"]
    assert answers["/ui/api/stream"][0] == 404  # a recording is not live


def test_a_labs_clusters_are_recorded_for_its_replay():
    with recording() as clusters:
        result = LABS["5.1.6"].run(seed=1)
    assert result.check is not None and result.check.passed
    assert clusters and all(kept.records for kept in clusters)
    replayed = Recording(clusters[-1].records)
    document = replayed.cluster(replayed.end, PodFilter())
    assert document["nodes"] and document["unscheduled"]  # three ways to make every node refuse: none placed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["lab", "run", "5.2.2", "--ui"], "--ui: lab 5.2.2 runs against a live cluster: open its own UI instead"),
        (["lab", "run", "5.1.4", "--ui"], "--ui: lab 5.1.4 runs no cluster to replay"),
        (["lab", "run", "5.1.6", "--ui", "--ui-bind", "x"], "--ui-bind: expected HOST:PORT, got 'x'"),
    ],
)
def test_a_lab_that_cannot_be_replayed_says_why_in_one_line(capsys, argv, message):
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == message


def test_a_bench_run_traced_for_the_ui_replays_its_placements():
    kept = ListSink()
    result = runner.run(select("SchedulingBasic/5Nodes"), sinks=[kept])
    replayed = Recording(kept.records)
    document = replayed.cluster(replayed.end, PodFilter())
    bound = [p for p in document["pods"] if p["node"]]
    assert len(document["nodes"]) == 5 and len(bound) == result.to_json()["scheduled"] + 5  # measured + init pods


def test_a_bench_with_the_ui_is_one_run(capsys):
    assert main(["bench", "SchedulingBasic/5Nodes", "--ui", "--repeat", "2"]) == 2
    assert capsys.readouterr().err.strip() == "--ui: one traced run, without --repeat or --profile"
