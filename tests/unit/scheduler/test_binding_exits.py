"""Every exit of the scheduling cycle past the search and of the binding cycle, on the virtual
clock, as v1.36.2 takes them: where the pod goes, what FailedScheduling and the PodScheduled
condition say, Unreserve and the forgotten assumption, the nomination cleared, and which events
of the attempt still count (S/schedule_one.go:313-361, 202-253, 397-536, 1200-1299)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from lightkube.resources import core_v1

from builders import late_plugin, make_pod
from kubesched.framework import Registry, Status
from kubesched.framework.status import Code
from kubesched.trace import Tracer

NO = Status(Code.UNSCHEDULABLE, "no room in the plan")
ON_ONE_NODE = "0/1 nodes are available: 1 no room in the plan."
BOOM = Status(Code.ERROR, "boom")
WAIT = Status(Code.WAIT)


def _setup(harness, clock, **verdicts: Any):
    plugin = late_plugin(**verdicts)
    extra = Registry()
    extra.register("Late", plugin)
    tracer = Tracer(clock.now, keep=True)
    points = ("reserve", "permit", "preBind", "bind")
    plugins: dict[str, Any] = {p: {"enabled": [{"name": "Late"}]} for p in points}
    if "bind" in verdicts:
        plugins["bind"]["disabled"] = [{"name": "*"}]  # Late alone binds; otherwise it skips and DefaultBinder binds
    h = harness(config={"profiles": [{"plugins": plugins}]}, extra=extra, tracer=tracer)
    h.node("n1", cpu=4)
    h.start()
    return h, tracer, plugin


def _moves(tracer: Tracer, pod: str) -> list[tuple[str, str, str]]:
    return [
        (r.details["from"], r.details["to"], r.details["event"])
        for r in tracer.records
        if r.kind == "queue.move" and r.pod == pod
    ]


def _condition(pod: Any) -> Any:
    return next(c for c in pod.status.conditions if c.type == "PodScheduled")


@dataclass(frozen=True)
class Exit:
    verdicts: dict[str, Any]
    queue: str  # where the failed attempt left the pod
    message: str  # FailedScheduling's, and the PodScheduled condition's
    reason: str  # the condition's reason
    rejectors: list[str]  # the plugins the queue holds against it


EXITS = {
    "Reserve rejects": Exit({"reserve": NO}, "unschedulablePods", ON_ONE_NODE, "Unschedulable", ["Late"]),
    "Reserve errs": Exit({"reserve": BOOM}, "backoffQ", 'running Reserve plugin "Late": boom', "SchedulerError", []),
    "Permit rejects": Exit({"permit": NO}, "unschedulablePods", ON_ONE_NODE, "Unschedulable", ["Late"]),
    "Permit errs": Exit({"permit": BOOM}, "backoffQ", 'running Permit plugin "Late": boom', "SchedulerError", []),
    "Permit times out": Exit(
        {"permit": WAIT, "permit_timeout": 3.0},
        "unschedulablePods",
        "0/1 nodes are available: 1 rejected due to timeout after waiting 3s at plugin Late.",
        "Unschedulable",
        ["Late"],
    ),
    # Past Permit the queue is done with the pod: a rejection is reported in the plugin's words,
    # names no rejecting plugin, and so backs off like an error (S/schedule_one.go:446-453).
    "PreBind rejects": Exit({"pre_bind": NO}, "backoffQ", "no room in the plan", "Unschedulable", []),
    "PreBind errs": Exit({"pre_bind": BOOM}, "backoffQ", 'running PreBind plugin "Late": boom', "SchedulerError", []),
    "Bind rejects": Exit({"bind": NO}, "backoffQ", "no room in the plan", "Unschedulable", []),
    "Bind errs": Exit({"bind": BOOM}, "backoffQ", 'running Bind plugin "Late": boom', "SchedulerError", []),
}


@pytest.mark.parametrize("exit_", EXITS.values(), ids=EXITS.keys())
def test_each_late_exit_requeues_reports_and_releases_as_upstream(harness, clock, exit_):
    h, tracer, plugin = _setup(harness, clock, **exit_.verdicts)
    h.store.create(make_pod("a").req(cpu="1").obj)
    clock.advance(3.5)
    pod = h.pod("a")
    assert pod.spec.nodeName is None
    failed = ("inFlight", exit_.queue, "ScheduleAttemptFailure")
    assert _moves(tracer, "default/a")[:2] == [("", "activeQ", "PodAdd"), failed]
    assert ("FailedScheduling", exit_.message) in h.events("a")
    condition = _condition(pod)
    assert (condition.status, condition.reason, condition.message) == ("False", exit_.reason, exit_.message)
    assert "Unreserve a" in plugin.log  # every exit past Reserve unreserves ...
    assert h.scheduler.cache.pod(pod.metadata.uid) is None  # ... and forgets the assumed pod
    pending = next(p for p in h.scheduler.queue.snapshot() if p.key == "default/a")
    assert pending.rejected_by == exit_.rejectors


def test_a_rejection_at_prebind_is_retried_after_the_error_backoff_and_then_binds(harness, clock):
    h, tracer, plugin = _setup(harness, clock, pre_bind=NO)
    h.store.create(make_pod("a").obj)
    clock.advance(0.5)
    plugin.verdicts.pop("pre_bind")
    clock.advance(2)
    assert h.pod("a").spec.nodeName == "n1"
    assert _moves(tracer, "default/a") == [
        ("", "activeQ", "PodAdd"),
        ("inFlight", "backoffQ", "ScheduleAttemptFailure"),  # 1 s: the first consecutive error
        ("backoffQ", "activeQ", "BackoffComplete"),
    ]
    assert plugin.log.count("PreBind a") == 2


def test_the_queue_is_done_with_a_pod_before_prebind_but_not_while_it_waits_at_permit(harness, clock):
    h, _, _ = _setup(harness, clock, permit=WAIT, permit_timeout=2.0, pre_bind_seconds=5.0)
    fwk = h.scheduler.profiles["default-scheduler"]
    h.store.create(make_pod("a").obj)
    clock.advance(1)
    uid = h.pod("a").metadata.uid
    assert uid in h.scheduler.queue.in_flight  # waiting at Permit: events are still kept for it
    fwk.waiting_pods.get(uid).allow("Late")
    clock.advance(1)
    assert uid not in h.scheduler.queue.in_flight  # in PreBind: Done was called before it
    assert h.scheduler.cache.is_assumed(uid)
    clock.advance(5)
    assert h.pod("a").spec.nodeName == "n1"


def test_an_event_during_prebind_is_not_held_for_the_pod_an_event_during_permit_is(harness, clock):
    # Both attempts are rejected while a node joins. At Permit the join is replayed against the
    # rejecting plugin's Node/Add registration: backoffQ, not unschedulablePods. At PreBind there
    # is nothing to replay; the pod backs off because the failure names no rejector.
    h, tracer, _ = _setup(harness, clock, permit=WAIT, permit_timeout=2.0)
    h.store.create(make_pod("a").obj)
    clock.advance(1)
    h.node("n2", cpu=4)
    clock.advance(2)
    assert _moves(tracer, "default/a")[1] == ("inFlight", "backoffQ", "ScheduleAttemptFailure")
    assert h.scheduler.queue.in_flight.events == 0  # nothing left behind for a pod no longer in flight


def test_a_pod_waiting_for_the_room_a_failed_binding_frees_is_moved_the_pod_itself_backs_off(harness, clock):
    h, tracer, plugin = _setup(harness, clock, pre_bind=NO, pre_bind_seconds=2.0)
    h.store.create(make_pod("a").req(cpu="3").obj)
    clock.advance(0.5)
    h.store.create(make_pod("b").req(cpu="3").obj)
    clock.advance(0.5)
    assert h.scheduler.queue.where("default/b") == "unschedulablePods"  # a's assumed cpu fills n1
    clock.advance(1.5)  # a's PreBind rejects it
    b_moves = _moves(tracer, "default/b")
    assert b_moves[2][0] == "unschedulablePods" and b_moves[2][2] == "AssignedPodDelete"
    assert [m for m in _moves(tracer, "default/a") if m[2] == "AssignedPodDelete"] == []  # not by its own release
    assert _moves(tracer, "default/a")[1] == ("inFlight", "backoffQ", "ScheduleAttemptFailure")
    clock.advance(0.5)
    assert "PreBind b" in plugin.log  # b got the room a's failed binding gave back


def test_a_failed_binding_clears_the_pods_nomination(harness, clock):
    h, _, _ = _setup(harness, clock, pre_bind=BOOM)
    h.store.create(make_pod("a").obj)
    h.store.patch(core_v1.Pod, "a", {"status": {"nominatedNodeName": "n1"}}, namespace="default", subresource="status")
    clock.advance(0.5)
    assert h.pod("a").status.nominatedNodeName is None  # clearNominatedNode, written with the condition
    assert h.scheduler.queue.nominator.node_of(h.pod("a").metadata.uid) is None
