"""The queue: ordering, backoff doubling, the flushes, event-driven moves, gating."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lightkube.models.core_v1 import PodSchedulingGate

from builders import make_node, make_pod
from kubesched.cache import PodInfo
from kubesched.clock import DEFAULT_EPOCH, VirtualClock
from kubesched.framework.events import NODE, ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.framework.queued import QueuedPodInfo
from kubesched.framework.status import Status
from kubesched.plugins.priority_sort import PrioritySort
from kubesched.queue import QueueProfile, SchedulingQueue


@pytest.fixture
def clock():
    c = VirtualClock(start=DEFAULT_EPOCH + 0.25)
    yield c
    c.close()


def less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    return a.priority > b.priority or (a.priority == b.priority and a.timestamp < b.timestamp)


def gate(pod: PodInfo) -> Status | None:
    if pod.pod.spec.schedulingGates:
        return Status.unresolvable("waiting for scheduling gates").with_plugin("SchedulingGates")
    return None


def queue(clock) -> SchedulingQueue:
    events = {
        "NodeResourcesFit": [
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE))
        ],
        "SchedulingGates": [
            ClusterEventWithHint(ClusterEvent("Pod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED))
        ],
    }
    q = SchedulingQueue(clock=clock, less=less, profiles={"default-scheduler": QueueProfile(gate, events)})
    q.start()
    return q


def pod(name, priority=0, **kw):
    obj = make_pod(name).obj
    obj.metadata.uid = f"uid-{name}"
    obj.spec.schedulerName = "default-scheduler"
    obj.spec.priority = priority
    return obj


def pop(clock, q):
    return clock.run(q.pop())


def test_higher_priority_pops_first_then_fifo(clock):
    q = queue(clock)
    q.add(pod("low", 1))
    clock.advance(1)
    q.add(pod("high", 10))
    q.add(pod("low2", 1))
    assert [pop(clock, q).pod_info.name for _ in range(3)] == ["high", "low", "low2"]


@settings(max_examples=50, deadline=None)
@given(pods=st.lists(st.tuples(st.integers(-2, 2), st.integers(0, 2)), min_size=1, max_size=12))
def test_sort_key_and_less_give_the_same_order(pods):
    """PrioritySort's key and its `less` (as a custom plugin would offer) pop pods identically,
    ties (same priority, same time) first-in first-out."""
    sort = PrioritySort()
    orders = []
    for sort_key in (sort.sort_key, None):
        clock = VirtualClock(start=DEFAULT_EPOCH)
        q = SchedulingQueue(
            clock=clock, less=sort.less, sort_key=sort_key, profiles={"default-scheduler": QueueProfile(gate, {})}
        )
        for i, (priority, wait) in enumerate(pods):
            clock.advance(wait)
            q.add(pod(f"p{i}", priority))
        orders.append([clock.run(q.pop()).pod_info.name for _ in pods])
        clock.close()
    assert orders[0] == orders[1]
    by_hand = sorted(range(len(pods)), key=lambda i: -pods[i][0])  # stable: arrival order within a priority
    assert orders[0] == [f"p{i}" for i in by_hand]


@pytest.mark.parametrize(("failures", "seconds"), [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (9, 10)])
def test_backoff_doubles_up_to_the_maximum(clock, failures, seconds):
    q = queue(clock)
    qpi = QueuedPodInfo(PodInfo(pod("a")), timestamp=clock.now(), unschedulable_count=failures)
    assert q.backoff_duration(qpi) == seconds


def test_a_rejected_pod_waits_in_unschedulable_until_a_matching_event(clock):
    q = queue(clock)
    q.add(pod("a"))
    qpi = pop(clock, q)
    qpi.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(qpi)
    assert q.where("default/a") == "unschedulablePods"
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL))
    assert q.where("default/a") == "unschedulablePods"  # a label change does not help a fit failure
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD))
    assert q.where("default/a") == "backoffQ"  # still backing off (1 s)
    clock.advance(2)
    assert q.where("default/a") == "activeQ"


def test_error_attempts_back_off_without_waiting_for_events(clock):
    q = queue(clock)
    q.add(pod("a"))
    qpi = pop(clock, q)
    q.add_unschedulable_if_not_present(qpi)  # no rejecting plugin: an error
    assert q.where("default/a") == "backoffQ"
    assert qpi.consecutive_errors == 1
    clock.advance(2)
    assert q.where("default/a") == "activeQ"


def test_unschedulable_pods_are_flushed_after_five_minutes(clock):
    q = queue(clock)
    q.add(pod("a"))
    qpi = pop(clock, q)
    qpi.unschedulable_plugins = {"SomeFilter"}
    q.add_unschedulable_if_not_present(qpi)
    clock.advance(299)
    assert q.where("default/a") == "unschedulablePods"
    clock.advance(31)  # the next 30-second flush after 5 minutes have passed
    assert q.where("default/a") == "activeQ"


def test_pop_takes_a_backing_off_pod_when_active_is_empty(clock):
    q = queue(clock)
    q.add(pod("a"))
    qpi = pop(clock, q)
    qpi.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(qpi)
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD))
    assert q.where("default/a") == "backoffQ"
    assert pop(clock, q).pod_info.name == "a"


def test_gated_pods_wait_until_the_gate_is_removed(clock):
    q = queue(clock)
    gated = pod("g")
    gated.spec.schedulingGates = [PodSchedulingGate(name="x")]
    q.add(gated)
    assert q.pending() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD))
    assert q.pending()["gated"] == 1
    ungated = pod("g")
    q.update(gated, ungated, [ClusterEvent("UnschedulablePod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)])
    assert q.where("default/g") == "activeQ"


def _rejected(q, clock, name):
    q.add(pod(name))
    qpi = pop(clock, q)
    qpi.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(qpi)
    return qpi


def test_pods_with_equal_hint_keys_are_judged_once_per_event(clock):
    calls: list[str] = []

    def hint(p, old, new):
        calls.append(p.metadata.name)
        return QueueingHint.QUEUE_SKIP

    events = {"NodeResourcesFit": [ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD), hint)]}
    profile = QueueProfile(gate, events, {"NodeResourcesFit": lambda p: "same"})
    q = SchedulingQueue(clock=clock, less=less, profiles={"default-scheduler": profile})
    for i in range(50):
        _rejected(q, clock, f"p{i}")
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD), None, make_node("n").obj)
    assert len(calls) == 1 and len(q.unschedulable) == 50
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL), None, make_node("n").obj)
    assert len(calls) == 1  # no plugin registered the event: nobody is asked


def test_in_flight_events_are_kept_only_while_some_pod_is_in_flight(clock):
    q = queue(clock)
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD))
    assert q.in_flight.events == 0  # nothing in flight: nothing to remember
    q.add(pod("a"))
    q.add(pod("b"))
    a, b = pop(clock, q), pop(clock, q)
    q.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD))
    assert q.in_flight.events == 1
    q.done(a.uid)
    assert q.in_flight.events == 1  # b may still need it
    b.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(b)
    assert q.where("default/b") == "backoffQ"  # the NodeAdd during its attempt helps NodeResourcesFit
    assert q.in_flight.events == 0


def test_event_labels_name_each_action():
    assert ClusterEvent(NODE, ActionType.ADD).label == "NodeAdd"
    assert (
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE).label
        == "Node(Add|UpdateNodeAllocatable)"
    )
    assert ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE).label == "Pod(Add|Update)"
    assert ClusterEvent("*", ActionType.ALL, "UnschedulableTimeout").label == "UnschedulableTimeout"
