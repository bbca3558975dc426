"""The scheduler's events on the virtual clock, as client-go's events recorder sends them: repeats
become a series on one object, the API server expires them, and sending them never holds up a
binding — what is still queued at SIGTERM goes out within the drain timeout."""

from __future__ import annotations

import pytest
from lightkube.resources import core_v1, events_v1

from builders import make_node, make_pod
from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.storage import MemoryCluster, MemoryStore

FLUSH = 300.0  # podMaxInUnschedulablePodsDuration: an unschedulable pod is retried this often


def failed_scheduling(store, pod):
    return [e for e in store.list(events_v1.Event).items if e.regarding.name == pod and e.reason == "FailedScheduling"]


def test_repeated_failures_are_one_series_not_new_objects(harness):
    h = harness()
    h.node("small", cpu=1)
    h.start()
    h.store.create(make_pod("big").req(cpu=8).obj)
    h.clock.advance(1)
    for _ in range(6):
        h.clock.advance(FLUSH)
    assert h.scheduler.attempt_results[("unschedulable", "default-scheduler")] >= 6
    events = failed_scheduling(h.store, "big")
    # the first names the pod before its PodScheduled condition was written; the rest are one series on the second
    assert len(events) == 2
    assert events[0].series is None and events[1].series is not None
    h.clock.advance(360)  # the series is patched with its count every six minutes
    (_, series) = failed_scheduling(h.store, "big")
    assert series.series.count == h.scheduler.attempt_results[("unschedulable", "default-scheduler")] - 1


def test_events_expire_an_hour_after_their_last_write(harness):
    h = harness(event_ttl=3600.0)
    h.node("n1", cpu=4)
    h.start()
    h.store.create(make_pod("p").req(cpu=1).obj)
    h.clock.advance(1)
    assert [e.reason for e in h.store.list(events_v1.Event).items] == ["Scheduled"]
    h.clock.advance(3590)
    assert len(h.store.list(core_v1.Event).items) == 1
    h.store.create(make_pod("q").req(cpu=1).obj)
    h.clock.advance(20)
    h.node("n2", cpu=4)  # a write after the hour sweeps the old one out
    assert [e.regarding.name for e in h.store.list(events_v1.Event).items] == ["q"]


class SlowEvents(MemoryCluster):
    """An events client whose every create takes `seconds` of clock time."""

    def __init__(self, store: MemoryStore, seconds: float) -> None:
        super().__init__(store)
        self.seconds = seconds

    async def create(self, obj, *, namespace=None):
        await self.store.clock.sleep(self.seconds)
        return await super().create(obj, namespace=namespace)


@pytest.mark.parametrize(("drain", "sent"), [(10.0, 5), (2.5, 2)])
def test_slow_events_never_hold_up_bindings_and_are_drained_within_the_timeout(clock, drain, sent):
    store = MemoryStore(clock=clock, watch_latency=0.001)
    store.create(make_node("n1").capacity(cpu=8).obj)
    registry = in_tree_registry()
    scheduler = Scheduler(
        MemoryCluster(store), clock, default_config(registry), registry, events_cluster=SlowEvents(store, 1.0)
    )
    task = clock.loop.create_task(scheduler.run())
    clock.advance(0.1)
    for i in range(5):
        store.create(make_pod(f"p{i}").req(cpu="100m").obj)
    clock.advance(0.2)
    assert all(store.get(core_v1.Pod, f"p{i}", namespace="default").spec.nodeName for i in range(5))
    assert scheduler.events.queued >= 4  # the events wait their turn; the bindings did not
    stopping = clock.loop.create_task(scheduler.drain(drain))  # SIGTERM
    clock.advance(drain + 1)
    assert stopping.done()
    assert len(store.list(events_v1.Event).items) == sent
    task.cancel()
    clock.advance(0.01)
