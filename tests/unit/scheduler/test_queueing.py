"""The queue seen through the scheduler, on the virtual clock: backoff doubling, hint-driven
wake-ups, the five-minute flush, gates, in-flight events and nominated pods."""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar

import pytest
from lightkube.models import meta_v1
from lightkube.resources import core_v1, scheduling_v1, storage_v1

from builders import make_pod, verdict_filter
from kubesched.framework import Registry, Status
from kubesched.framework.events import NODE, ActionType, ClusterEvent, ClusterEventWithHint
from kubesched.framework.status import Code
from kubesched.plugin import EnqueueExtensions, FilterPlugin, PermitPlugin
from kubesched.trace import Tracer


def records(tracer: Tracer, kind: str, pod: str) -> list[Any]:
    return [r for r in tracer.records if r.kind == kind and r.pod == pod]


Failing = verdict_filter("Failing", Status(Code.ERROR, "broken"))  # every node: the pod backs off on errors


def test_a_pod_that_keeps_failing_is_retried_after_1_2_4_8_10_10_seconds(harness, clock):
    extra = Registry()
    extra.register("Failing", Failing)
    tracer = Tracer(clock.now, keep=True)
    config = {
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "Failing"}]}}}]
    }
    h = harness(config=config, extra=extra, tracer=tracer)
    h.node("n1")
    h.start()
    h.store.create(make_pod("p").obj)
    clock.advance(50)
    failures = [r for r in records(tracer, "queue.move", "default/p") if r.details["event"] == "ScheduleAttemptFailure"]
    assert {r.details["to"] for r in failures} == {"backoffQ"}
    backoffs = [r.details["until"] - math.floor(r.time) for r in failures]
    assert backoffs[:6] == [1, 2, 4, 8, 10, 10]
    # Expiry is truncated to the second and the backoff flush runs on whole seconds: each retry
    # comes within the second after its backoff ends.
    pops = [r.time for r in records(tracer, "queue.pop", "default/p")]
    gaps = [b - a for a, b in itertools.pairwise(pops)]
    assert all(d < gap <= d + 1 for gap, d in zip(gaps, backoffs, strict=False))


def test_ten_irrelevant_node_changes_do_not_retry_a_pod_and_one_pod_deletion_does_once(harness, clock):
    tracer = Tracer(clock.now, keep=True)
    h = harness(tracer=tracer)
    h.node("n1", cpu=2)
    h.store.create(make_pod("filler").req(cpu="1500m").node("n1").obj)
    h.start()
    h.store.create(make_pod("big").req(cpu="1").obj)
    clock.advance(1)
    assert h.scheduler.queue.where("default/big") == "unschedulablePods"
    for i in range(10):
        h.store.patch(core_v1.Node, "n1", {"metadata": {"labels": {"change": str(i)}}})
        clock.advance(1)
    assert len(records(tracer, "queue.pop", "default/big")) == 1
    assert h.scheduler.queue.where("default/big") == "unschedulablePods"
    h.store.delete(core_v1.Pod, "filler", namespace="default", grace_period_seconds=0)
    clock.advance(15)
    assert len(records(tracer, "queue.pop", "default/big")) == 2
    assert h.pod("big").spec.nodeName == "n1"
    woke = [r.details for r in records(tracer, "queue.move", "default/big") if r.details["from"] == "unschedulablePods"]
    assert [(f["event"], f.get("plugin")) for f in woke] == [("AssignedPodDelete", "NodeResourcesFit")]


def test_a_pod_no_event_can_help_leaves_unschedulable_through_the_five_minute_flush(harness, clock):
    tracer = Tracer(clock.now, keep=True)
    h = harness(tracer=tracer)
    h.node("n1")
    h.start()
    pod = make_pod("picky").obj
    pod.spec.nodeSelector = {"disk": "ssd"}
    h.store.create(pod)
    clock.advance(299)
    assert h.scheduler.queue.where("default/picky") == "unschedulablePods"
    assert len(records(tracer, "queue.pop", "default/picky")) == 1
    clock.advance(35)  # the 30-second flush after the pod has waited more than 5 minutes
    flushed = [
        r.details for r in records(tracer, "queue.move", "default/picky") if r.details["from"] == "unschedulablePods"
    ]
    assert [f["event"] for f in flushed] == ["UnschedulableTimeout"]
    assert len(records(tracer, "queue.pop", "default/picky")) == 2  # tried again, rejected again
    assert h.scheduler.queue.where("default/picky") == "unschedulablePods"


def test_a_gated_pod_is_never_popped_and_is_scheduled_once_ungated(harness, clock):
    tracer = Tracer(clock.now, keep=True)
    h = harness(tracer=tracer)
    h.node("n1")
    h.start()
    h.store.create(make_pod("held").gates("example.com/a", "example.com/b").obj)
    condition = h.pod("held").status.conditions[0]
    assert (condition.type, condition.status, condition.reason) == ("PodScheduled", "False", "SchedulingGated")
    assert condition.message == "Scheduling is blocked due to non-empty scheduling gates"
    clock.advance(400)  # the five-minute flush does not release gated pods either
    assert h.scheduler.queue.pending() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert records(tracer, "queue.pop", "default/held") == []
    h.store.patch(core_v1.Pod, "held", {"spec": {"schedulingGates": [{"name": "example.com/b"}]}}, namespace="default")
    clock.advance(1)
    assert h.scheduler.queue.pending()["gated"] == 1  # one gate left
    h.store.patch(core_v1.Pod, "held", {"spec": {"schedulingGates": None}}, namespace="default")
    clock.advance(1)
    assert h.pod("held").spec.nodeName == "n1"
    assert h.scheduler.queue.pending()["gated"] == 0
    released = [r.details for r in records(tracer, "queue.move", "default/held") if r.details["from"] == "gated"]
    assert [f["event"] for f in released] == ["UnschedulablePodUpdatePodSchedulingGatesEliminated"]


class Hold(PermitPlugin, EnqueueExtensions):
    """A Permit plugin that makes every pod wait, then rejects it at the timeout; a new node may help."""

    name: ClassVar[str] = "Hold"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def permit(self, state, pod, node):
        return Status(Code.WAIT), 5.0

    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD))]


def _hold_harness(harness, clock):
    extra = Registry()
    extra.register("Hold", Hold)
    tracer = Tracer(clock.now, keep=True)
    config = {
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"permit": {"enabled": [{"name": "Hold"}]}}}]
    }
    return harness(config=config, extra=extra, tracer=tracer), tracer


def test_an_event_during_the_attempt_requeues_the_pod_right_after_its_failure(harness, clock):
    h, tracer = _hold_harness(harness, clock)
    h.node("n1")
    h.start()
    h.store.create(make_pod("p").obj)
    clock.advance(2)  # waiting on Permit: the attempt is still in flight
    h.node("n2")
    clock.advance(4)  # the Permit times out: rejected by Hold
    failed = [
        r.details for r in records(tracer, "queue.move", "default/p") if r.details["event"] == "ScheduleAttemptFailure"
    ]
    assert [f["to"] for f in failed] == ["backoffQ"]  # NodeAdd arrived in flight: Hold's event


def test_without_an_event_during_the_attempt_the_pod_waits_in_unschedulable(harness, clock):
    h, tracer = _hold_harness(harness, clock)
    h.node("n1")
    h.start()
    h.store.create(make_pod("p").obj)
    clock.advance(6)
    failed = [
        r.details for r in records(tracer, "queue.move", "default/p") if r.details["event"] == "ScheduleAttemptFailure"
    ]
    assert [f["to"] for f in failed] == ["unschedulablePods"]


def _priority_class(h, name: str, value: int) -> None:
    h.store.create(scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name=name), value=value))


def _nominate(h, clock, node: str, *, cpu: str) -> None:
    """A pod of class `high` nominated to `node`, which it cannot go to yet (nor anywhere): the
    node is kept for it."""
    nominated = make_pod("nominated").req(cpu=cpu).obj
    nominated.spec.priorityClassName = "high"
    nominated.spec.nodeSelector = {"disk": "ssd"}
    h.store.create(nominated)
    clock.advance(1)
    h.store.patch(
        core_v1.Pod, "nominated", {"status": {"nominatedNodeName": node}}, namespace="default", subresource="status"
    )
    clock.advance(1)


def test_lower_priority_pods_leave_room_for_a_nominated_pod(harness, clock):
    h = harness()
    h.node("n1", cpu=2)
    _priority_class(h, "high", 100)
    _priority_class(h, "top", 1000)
    h.start()
    _nominate(h, clock, "n1", cpu="1")
    for name, cls in (("low", None), ("equal", "high"), ("higher", "top")):
        pod = make_pod(name).req(cpu="1500m").obj
        pod.spec.priorityClassName = cls
        h.store.create(pod)
        clock.advance(1)
    assert h.pod("low").spec.nodeName is None
    assert h.pod("equal").spec.nodeName is None
    message = next(msg for reason, msg in h.events("low") if reason == "FailedScheduling")
    assert message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert h.pod("higher").spec.nodeName == "n1"  # a higher priority ignores the nomination


@pytest.mark.parametrize("batch", [True, False], ids=["node-table", "per-node"])
def test_the_node_a_pod_is_nominated_to_stays_its_among_many(harness, clock, batch):
    h = harness()
    for i in range(10):
        h.node(f"n{i}", cpu=2)
    _priority_class(h, "high", 100)
    h.start()
    h.scheduler.algorithm.batch = batch
    _nominate(h, clock, "n3", cpu="1500m")
    for i in range(19):
        h.store.create(make_pod(f"low-{i}").req(cpu="1").obj)
    clock.advance(5)
    placed = [h.pod(f"low-{i}").spec.nodeName for i in range(19)]
    assert "n3" not in placed and sum(1 for node in placed if node) == 18
    (left,) = [f"low-{i}" for i, node in enumerate(placed) if node is None]
    message = next(msg for reason, msg in h.events(left) if reason == "FailedScheduling")
    assert message.startswith("0/10 nodes are available: 10 Insufficient cpu.")


class NotWhileBlocked(FilterPlugin, EnqueueExtensions):
    """Refuses every node while a node named `blocker` exists; only its deletion may help."""

    name: ClassVar[str] = "NotWhileBlocked"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def filter(self, state, pod, node):
        if self.handle.snapshot.get("blocker") is not None:
            return Status.unschedulable("a blocker node exists")
        return None

    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent(NODE, ActionType.DELETE))]


def test_a_deleted_node_requeues_the_pods_whose_plugins_registered_node_delete(harness, clock):
    extra = Registry()
    extra.register(NotWhileBlocked.name, NotWhileBlocked)
    config = {
        "profiles": [
            {"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "NotWhileBlocked"}]}}}
        ]
    }
    h = harness(config=config, extra=extra)
    h.node("n1")
    h.node("blocker")
    h.start()
    h.store.create(make_pod("a").obj)
    clock.advance(2)
    assert h.scheduler.queue.where("default/a") == "unschedulablePods"
    h.store.delete(core_v1.Node, "blocker")
    clock.advance(3)
    assert h.pod("a").spec.nodeName == "n1"  # requeued by Node/Delete, not by the 5-minute flush


@pytest.mark.parametrize("new_nomination", [None, "n2"], ids=["cleared", "moved"])
def test_a_changed_nomination_requeues_the_waiting_pods_it_outranked(harness, clock, new_nomination):
    h = harness()
    h.node("n1", cpu=2)
    h.node("n2", cpu=1)  # too small for `low` either way
    _priority_class(h, "high", 100)
    _priority_class(h, "top", 1000)
    h.start()
    nominated = make_pod("nominated").req(cpu="1").obj
    nominated.spec.priorityClassName = "high"
    nominated.spec.nodeSelector = {"disk": "ssd"}  # never fits: only its nomination holds room on n1
    h.store.create(nominated)
    clock.advance(1)
    h.store.patch(
        core_v1.Pod, "nominated", {"status": {"nominatedNodeName": "n1"}}, namespace="default", subresource="status"
    )
    clock.advance(1)
    h.store.create(make_pod("low").req(cpu="1500m").obj)
    big = make_pod("big").req(cpu="3").obj  # fits nowhere, nomination or not
    big.spec.priorityClassName = "top"
    h.store.create(big)
    clock.advance(30)  # past every backoff: both wait for an event
    assert h.scheduler.queue.where("default/low") == "unschedulablePods"
    assert h.scheduler.queue.where("default/big") == "unschedulablePods"
    h.store.patch(
        core_v1.Pod,
        "nominated",
        {"status": {"nominatedNodeName": new_nomination}},
        namespace="default",
        subresource="status",
    )
    clock.advance(2)
    assert h.pod("low").spec.nodeName == "n1"  # requeued by the nomination's change, not the 5-minute flush
    assert h.scheduler.queue.where("default/big") == "unschedulablePods"  # higher priority: not moved


class NeedsObject(FilterPlugin, EnqueueExtensions):
    """Rejects every pod until an object of `resource` named `wanted` exists (the test tells it),
    registering only that resource's Add: what wakes the pod is the scheduler's own watch of it."""

    name: ClassVar[str] = "NeedsObject"
    resource: ClassVar[str] = ""
    present: ClassVar[set[str]] = set()

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state, pod, node):
        return None if "wanted" in self.present else Status(Code.UNSCHEDULABLE, "waiting for an object")

    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent(self.resource, ActionType.ADD))]


@pytest.mark.parametrize(
    ("resource", "obj"),
    [
        ("PersistentVolumeClaim", core_v1.PersistentVolumeClaim(metadata=meta_v1.ObjectMeta(name="wanted"))),
        (
            "storage.k8s.io/StorageClass",
            storage_v1.StorageClass(metadata=meta_v1.ObjectMeta(name="wanted"), provisioner="x"),
        ),
    ],
    ids=["core-kind", "grouped-kind"],
)
def test_an_object_of_a_registered_kind_requeues_the_pods_that_wait_for_it(harness, clock, resource, obj):
    NeedsObject.resource, NeedsObject.present = resource, set()
    extra = Registry()
    extra.register(NeedsObject.name, NeedsObject)
    config = {
        "profiles": [
            {"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "NeedsObject"}]}}}
        ]
    }
    h = harness(config=config, extra=extra)
    h.node("n1")
    h.start()
    h.store.create(make_pod("a").obj)
    clock.advance(30)
    assert h.scheduler.queue.where("default/a") == "unschedulablePods"
    NeedsObject.present.add("wanted")
    h.store.create(obj, namespace="default")
    clock.advance(3)
    assert h.pod("a").spec.nodeName == "n1"  # requeued by the object's Add (upstream's buildEvtResHandler)


def test_a_pod_deleted_while_waiting_at_permit_is_rejected_at_once_and_frees_its_room(harness, clock):
    h, _ = _hold_harness(harness, clock)  # every pod waits at Permit, rejected after 5 s
    h.node("n1", cpu=1)
    h.start()
    h.store.create(make_pod("a").req(cpu="1").obj)
    clock.advance(1)
    a = h.pod("a").metadata.uid
    assert h.scheduler.cache.is_assumed(a)
    h.store.create(make_pod("b").req(cpu="1").obj)
    clock.advance(2)
    assert h.scheduler.queue.where("default/b") == "unschedulablePods"  # a holds the node's room
    h.store.delete(core_v1.Pod, "a", namespace="default", grace_period_seconds=0)
    clock.advance(2)
    fwk = h.scheduler.profiles["default-scheduler"]
    assert fwk.waiting_pods.get(a) is None and h.scheduler.cache.pod(a) is None  # not left to its timeout
    assert h.scheduler.cache.is_assumed(h.pod("b").metadata.uid)  # b got the room (and waits in its turn)
