"""`kubesched drill c3`: a spread constraint no node can satisfy, told apart from scarcity."""

from __future__ import annotations

import json
import re

from kubesched.cli.drill import run_c3
from kubesched.cli.main import main

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
    from kubesched.cli.drill import run_c2

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
    from kubesched.cli.drill import run_c2

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
    from kubesched.cli.drill import run_c2

    story = run_c2()
    failed = next(line for line in story.lines if line.kind == "queue.move" and "ScheduleAttemptFailure" in line.text)
    assert failed.site.startswith("kubesched.queue.scheduling_queue:")
    assert failed.upstream == [
        "S/backend/queue/scheduling_queue.go:905-965",
        "S/backend/queue/unschedulable_pods.go:27-112",
    ]
    assert all(line.upstream for line in story.lines if not line.kind.startswith("kubelet."))


def test_c2_with_only_the_protected_node_left_violates_the_budget_and_says_so():
    from kubesched.cli.drill import run_c2

    story = run_c2(pdb_blocks=True)
    assert story.placements["urgent"] == "node-2"
    assert story.placements["cache-b"] is None
    chosen = next(line for line in story.lines if line.kind == "preemption.chosen")
    assert "chosen by the only candidate among [node-2: 1 victim(s), 1 PDB violation(s)]" in chosen.text


def test_c4_two_schedulers_race_and_each_pod_is_bound_once_with_the_loser_forgetting():
    from kubesched.cli.drill import run_c4

    race = run_c4()
    assert all(race.bound.values()) and set(race.winners) == set(race.bound)
    assert race.conflicts and all("is already assigned to node" in line for line in race.conflicts)
    assert all(line.endswith("its assumed pod is forgotten") for line in race.conflicts if "kubesched lost" in line)
    assert race.cache_agrees  # the node is not double-counted in kubesched's cache


def test_c4_a_scheduler_killed_between_assume_and_bind_loses_nothing_after_a_restart():
    from kubesched.cli.drill import run_c4

    crash = run_c4(crash=True)
    assert crash.assumed_at_crash  # some pods were assumed, not bound, when the process died
    assert all(crash.bound.values())
    assert crash.overcommitted == [] and crash.rejected_by_kubelet == 0 and crash.cache_agrees
