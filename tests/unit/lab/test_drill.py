"""`kubesched drill c3`: a spread constraint no node can satisfy, told apart from scarcity."""

from __future__ import annotations

import json
import re

import pytest

from kubesched.cli.main import main
from kubesched.lab.drill import run_c3

SPREAD_STUCK = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
    "2 node(s) didn't match pod topology spread constraints. no new claims to deallocate, "
    "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
    "2 No preemption victims found for incoming pod."
)
SCHEDULER_REASONS = {"Preempted", "FailedScheduling", "Scheduled"}
SCARCE = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. no new claims to deallocate, "
    "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
)


def test_replicas_stuck_by_spread_and_a_pod_stuck_by_scarcity_have_different_messages():
    pods = {p.name: p for p in run_c3().pods}
    assert pods["web-0"].node in ("a-1", "a-2")
    for name in ("web-1", "web-2", "web-3"):
        assert pods[name].node is None
        assert pods[name].message == SPREAD_STUCK
        assert pods[name].rejected_by == ["PodTopologySpread", "TaintToleration"]
    assert pods["big"].node is None
    assert pods["big"].message == SCARCE
    assert pods["big"].rejected_by == ["NodeResourcesFit", "TaintToleration"]


def test_honoring_taints_leaves_the_tainted_zone_out_and_the_replicas_schedule():
    pods = {p.name: p for p in run_c3(taints_policy="Honor").pods}
    assert all(pods[f"web-{i}"].node in ("a-1", "a-2") for i in range(4))
    assert pods["big"].node is None


def test_the_drill_command_prints_both_runs_as_json(capsys):
    assert main(["drill", "c3", "--output", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {p["name"]: p["message"] for p in out["ignore"]["pods"]}["web-1"] == SPREAD_STUCK
    assert all(p["node"] for p in out["honor"]["pods"] if p["name"].startswith("web-"))


def _kinds(story, pod):
    return [line.kind for line in story.lines if line.pod == pod]


def test_c2_tells_the_preemption_from_choice_to_binding():
    from kubesched.lab.drill import run_c2

    story = run_c2()
    assert story.placements["urgent"] == "node-0"
    assert story.placements["batch-b"] is None  # the victim; batch-a, started earlier, was reprieved
    assert story.placements["batch-a"] == "node-0" and story.placements["report"] == "node-1"
    chosen = next(line for line in story.lines if line.kind == "preemption.chosen")
    assert "chosen by lowest most-important victim priority" in chosen.text  # 100 on node-0 beats 200 on node-1
    assert "node-2: 1 victim(s), 1 PDB violation(s)" in chosen.text
    assert chosen.site.startswith("kubesched.framework.preemption:")
    assert _kinds(story, "default/urgent") == [
        "queue.move",
        "queue.pop",
        "preemption.chosen",
        "cycle.failed",
        "nomination.set",
        "queue.move",
        "queue.move",  # out of unschedulablePods when its victim is gone
        "queue.pop",
        "cycle.selected",
        "bind.done",
        "kubelet.running",
    ]
    woke = [line.text for line in story.lines if line.pod == "default/urgent" and line.kind == "queue.move"][-1]
    assert woke == "unschedulablePods → activeQ on AssignedPodDelete (NodeResourcesFit hint: Queue)"
    assert _kinds(story, "default/batch-b") == ["preemption.victim", "kubelet.killed"]


def test_c2_shows_the_events_kubectl_describe_lists_and_explains_the_preemptor():
    from kubesched.lab.drill import run_c2

    story = run_c2()
    seen = [(e.pod, e.type, e.reason, e.message) for e in story.events if e.reason in SCHEDULER_REASONS]
    preempted = [e for e in seen if e[2] == "Preempted"]
    assert [(pod, kind) for pod, kind, _, _ in preempted] == [("batch-b", "Normal")]
    assert re.fullmatch(r"Preempted by pod [0-9a-f-]{36} on node node-0", preempted[0][3])
    assert [e[1:3] for e in seen if e[0] == "urgent"] == [("Warning", "FailedScheduling"), ("Normal", "Scheduled")]
    assert ("urgent", "Normal", "Scheduled", "Successfully assigned default/urgent to node-0") in seen
    first, second = story.explained["attempts"]
    assert first["result"] == "unschedulable" and first["preemption"]["nominatedNode"] == "node-0"
    assert first["preemption"]["victims"] == ["default/batch-b"]
    assert first["preemption"]["reprieved"] == ["default/batch-a"]  # started earlier: put back first, and fit
    assert second["result"] == "scheduled" and second["nominatedNodeFirst"] == "node-0"


def test_c2_steps_carry_kubescheds_site_and_kube_schedulers():
    from kubesched.lab.drill import run_c2

    story = run_c2()
    failed = next(line for line in story.lines if line.kind == "queue.move" and "ScheduleAttemptFailure" in line.text)
    assert failed.site.startswith("kubesched.queue.scheduling_queue:")
    assert failed.upstream == (
        "S/backend/queue/scheduling_queue.go:905-965",
        "S/backend/queue/unschedulable_pods.go:27-112",
    )
    assert all(line.upstream for line in story.lines if not line.kind.startswith("kubelet."))


def test_c2_with_only_the_protected_node_left_violates_the_budget_and_says_so():
    from kubesched.lab.drill import run_c2

    story = run_c2(pdb_blocks=True)
    assert story.placements["urgent"] == "node-2"
    assert story.placements["cache-b"] is None
    chosen = next(line for line in story.lines if line.kind == "preemption.chosen")
    assert "chosen by the only candidate among [node-2: 1 victim(s), 1 PDB violation(s)]" in chosen.text


def test_c4_two_schedulers_race_and_each_pod_is_bound_once_with_the_loser_forgetting():
    from kubesched.lab.drill import run_c4

    race = run_c4()
    assert all(race.bound.values()) and set(race.winners) == set(race.bound)
    assert race.conflicts and all("is already assigned to node" in line for line in race.conflicts)
    assert all(line.endswith("its assumed pod is forgotten") for line in race.conflicts if "kubesched lost" in line)
    assert race.cache_agrees  # the node is not double-counted in kubesched's cache


def test_c4_a_scheduler_killed_between_assume_and_bind_loses_nothing_after_a_restart():
    from kubesched.lab.drill import run_c4

    crash = run_c4(crash=True)
    assert crash.assumed_at_crash  # some pods were assumed, not bound, when the process died
    assert all(crash.bound.values())
    assert crash.overcommitted == [] and crash.rejected_by_kubelet == 0 and crash.cache_agrees


BIG = (
    "0/5 nodes are available: 5 Insufficient cpu. no new claims to deallocate, "
    "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."
)
INFRA = (
    "0/5 nodes are available: 1 node(s) had untolerated taint(s), 4 node(s) didn't match Pod's node "
    "affinity/selector. no new claims to deallocate, preemption: 0/5 nodes are available: "
    "5 Preemption is not helpful for scheduling."
)
NVME = (
    "0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector. no new claims to "
    "deallocate, preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."
)


@pytest.fixture(scope="module")
def backlog():
    from kubesched.lab.drill import run_c1

    return run_c1()


def test_c1_backlog_messages_are_kube_schedulers_and_name_the_rejecting_plugins(backlog):
    found = {d.group: (d.pods, d.message, d.from_message, d.from_explain) for d in backlog.diagnoses}
    assert found == {
        "big": (20, BIG, {"NodeResourcesFit": 5}, {"NodeResourcesFit": 5}),
        "infra": (15, INFRA, {"NodeAffinity": 4, "TaintToleration": 1}, {"NodeAffinity": 4, "TaintToleration": 1}),
        "nvme": (15, NVME, {"NodeAffinity": 5}, {"NodeAffinity": 5}),
    }
    assert len(backlog.per_pod) == 50
    assert all(p["fromMessage"] == p["fromExplain"] and p["fromMessage"] for p in backlog.per_pod.values())


@pytest.mark.parametrize(
    ("pod", "event", "plugin", "hint_fn", "then"),
    [
        ("default/infra-00", "NodeUpdateNodeTaint", "NodeAffinity", False, "bound to node-4 at t+60.005 s"),
        ("default/nvme-00", "NodeAdd", "NodeAffinity", True, "bound to node-5 at t+90.005 s"),
    ],
)
def test_c1_a_cluster_event_whose_hint_says_queue_lets_pods_out(backlog, pod, event, plugin, hint_fn, then):
    exit_ = next(e for e in backlog.exits if e.pod == pod and e.then.startswith("bound"))
    assert (exit_.exit, exit_.event, exit_.plugin, exit_.hint, exit_.hint_fn, exit_.then) == (
        "cluster event",
        event,
        plugin,
        "Queue",
        hint_fn,
        then,
    )
    assert "S/backend/queue/scheduling_queue.go:1253-1350" in exit_.upstream


def test_c1_pods_that_fit_nowhere_leave_by_the_five_minute_flush_and_come_back(backlog):
    flushed = [e for e in backlog.exits if e.exit == "UnschedulableTimeout"]
    assert [e.pod for e in flushed] == ["default/big-00"]
    (e,) = flushed
    assert e.plugin == "" and 300 < e.waited <= 330  # more than 5 minutes, found by the 30-second loop
    assert e.then.startswith("tried again at once, fits nowhere still: back to unschedulablePods")
    assert e.upstream == ["S/backend/queue/scheduling_queue.go:985-1003"]
    assert backlog.pending_at_end == {"active": 0, "backoff": 0, "unschedulable": 20, "gated": 0}


def test_c1_cites_the_line_that_formats_insufficient_cpu_and_no_stale_path(backlog):
    assert backlog.citations["the Insufficient cpu reason (NodeResourcesFit)"] == (
        "S/framework/plugins/noderesources/fit.go:678-765"
    )
    cited = [
        *backlog.citations.values(),
        *(u for steps in backlog.followed.values() for s in steps for u in s.upstream),
    ]
    assert cited and not any("internal/" in c for c in cited)


def test_c1_json_is_identical_for_a_seed(capsys):
    assert main(["drill", "c1", "--seed", "3", "--output", "json"]) == 0
    first = capsys.readouterr().out
    assert main(["drill", "c1", "--seed", "3", "--output", "json"]) == 0
    assert capsys.readouterr().out == first
    assert json.loads(first)["diagnoses"][0]["message"] == BIG


def test_c3_explains_its_stuck_replica_node_by_node():
    attempt = run_c3().explained["attempts"][-1]
    assert [(g["plugin"], g["nodes"]) for g in attempt["filter"]] == [
        ("PodTopologySpread", ["a-1", "a-2"]),
        ("TaintToleration", ["b-1"]),
    ]


def test_c4_explains_a_pod_kubesched_lost_with_its_bind_error():
    from kubesched.lab.drill import run_c4

    attempt = run_c4().explained["attempts"][-1]
    assert attempt["result"] == "scheduled"  # the scheduling cycle found a host...
    assert attempt["outcomes"]["Bind"]["code"] == "Error"  # ...and the API server refused the Binding
    assert "is already assigned to node" in attempt["outcomes"]["Bind"]["reasons"][0]
