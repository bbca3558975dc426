"""The scheduler end to end on the memory cluster: placement, events, conditions, assume, profiles."""

from __future__ import annotations

import pytest
from lightkube.resources import core_v1

from builders import make_pod
from kubesched.config import ConfigError, load_data
from kubesched.plugins.registry import in_tree_registry


def test_pods_are_bound_with_a_scheduled_event(harness):
    h = harness()
    h.node("n1", cpu=4)
    h.node("n2", cpu=4)
    h.start()
    h.store.create(make_pod("a").req(cpu="1").obj)
    h.clock.advance(1)
    pod = h.pod("a")
    assert pod.spec.nodeName in ("n1", "n2")
    assert ("Scheduled", f"Successfully assigned default/a to {pod.spec.nodeName}") in h.events("a")


def test_a_pod_that_fits_nowhere_gets_the_aggregate_message(harness):
    h = harness()
    h.node("small", cpu=1)
    h.node("tiny", cpu="500m", memory="100Mi")
    h.start()
    h.store.create(make_pod("big").req(cpu="2", memory="1Gi").obj)
    h.clock.advance(1)
    message = (
        "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert ("FailedScheduling", message) in h.events("big")
    condition = next(c for c in h.pod("big").status.conditions if c.type == "PodScheduled")
    assert (condition.status, condition.reason, condition.message) == ("False", "Unschedulable", message)
    assert h.scheduler.queue.where("default/big") == "unschedulablePods"


def test_a_burst_does_not_overcommit_because_of_assume(harness):
    h = harness()
    for i in range(3):
        h.node(f"n{i}", cpu=2)
    h.start()
    for i in range(12):
        h.store.create(make_pod(f"p{i}").req(cpu="500m").obj)
    h.clock.advance(2)
    bound = [h.pod(f"p{i}").spec.nodeName for i in range(12)]
    assert sorted(bound) == sorted(["n0"] * 4 + ["n1"] * 4 + ["n2"] * 4)


def test_the_pod_leaves_unschedulable_when_a_node_is_added(harness):
    h = harness()
    h.node("small", cpu=1)
    h.start()
    h.store.create(make_pod("big").req(cpu="2").obj)
    h.clock.advance(1)
    assert h.scheduler.queue.where("default/big") == "unschedulablePods"
    h.node("large", cpu=8)
    h.clock.advance(2)
    assert h.pod("big").spec.nodeName == "large"


def test_two_profiles_schedule_only_their_own_pods(harness):
    config = {
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {
                "schedulerName": "packer",
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}],
            },
        ]
    }
    h = harness(config=config)
    h.node("a", cpu=8)
    h.node("b", cpu=8)
    h.store.create(make_pod("seed").req(cpu="4").node("a").obj)
    h.start()
    h.store.create(make_pod("spread").req(cpu="1").obj)
    h.store.create(make_pod("packed").req(cpu="1").scheduler("packer").obj)
    h.store.create(make_pod("stranger").req(cpu="1").scheduler("someone-else").obj)
    h.clock.advance(2)
    assert h.pod("spread").spec.nodeName == "b"  # LeastAllocated prefers the empty node
    assert h.pod("packed").spec.nodeName == "a"  # MostAllocated packs onto the busy one
    assert h.pod("stranger").spec.nodeName is None
    reporters = {e.reportingComponent for e in h.store.list(core_v1.Event).items if e.reason == "Scheduled"}
    assert reporters == {"default-scheduler", "packer"}


def test_a_config_with_an_unknown_plugin_names_it():
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}],
    }
    with pytest.raises(
        ConfigError, match=r'profiles\[0\].plugins.filter.enabled: Invalid value: "Nope": plugin does not exist'
    ):
        load_data(raw, in_tree_registry())


def test_gated_pods_are_not_scheduled_until_ungated(harness):
    h = harness()
    h.node("n1")
    h.start()
    h.store.create(make_pod("gated").gates("example.com/wait").obj)
    h.clock.advance(1)
    assert h.pod("gated").spec.nodeName is None
    assert h.scheduler.queue.pending()["gated"] == 1
    h.store.patch(
        core_v1.Pod,
        "gated",
        {"spec": {"schedulingGates": None}},
        namespace="default",
    )
    h.clock.advance(1)
    assert h.pod("gated").spec.nodeName == "n1"


def test_the_scheduler_relists_when_its_watch_falls_behind_the_history(clock):
    from builders import make_node
    from kubesched.config import load_data
    from kubesched.scheduler import Scheduler
    from kubesched.storage import MemoryCluster, MemoryStore
    from kubesched.trace import Tracer

    store = MemoryStore(clock=clock, watch_latency=0.001, history=20)
    registry = in_tree_registry()
    config = load_data({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, registry)
    scheduler = Scheduler(MemoryCluster(store), clock, config, registry, tracer=Tracer(clock.now, keep=True))
    task = clock.loop.create_task(scheduler.run())
    clock.advance(0.1)
    # The watches drop (as an HTTP watch times out) and, before they resume, more changes land
    # than the history keeps: resuming from the last version seen is answered with Gone.
    store.drop_watches(core_v1.Pod, core_v1.Node)
    for i in range(30):
        store.create(make_pod(f"p{i}").req(cpu="10m").obj)
    store.create(make_node("n1").capacity(cpu=8, pods=110).obj)
    clock.advance(3)
    relisted = {r.details["resource"] for r in scheduler.trace.records if r.kind == "informer.relist"}
    assert relisted == {"Pod", "Node"}
    assert all(store.get(core_v1.Pod, f"p{i}", namespace="default").spec.nodeName == "n1" for i in range(30))
    task.cancel()
    clock.advance(0.01)


def test_the_scheduler_relists_when_the_store_goes_back_in_time_and_schedules_on_the_new_one(clock):
    from builders import make_node
    from kubesched.cluster import TooLargeResourceVersion
    from kubesched.config import default_config
    from kubesched.scheduler import Scheduler
    from kubesched.storage import MemoryCluster, MemoryStore
    from kubesched.trace import Tracer

    old = MemoryStore(clock=clock, watch_latency=0.001)
    old.create(make_node("n1").capacity(cpu=8, pods=110).obj)
    for i in range(20):
        old.create(make_pod(f"old-{i}").req(cpu="10m").obj)
    registry = in_tree_registry()
    cluster = MemoryCluster(old)
    scheduler = Scheduler(cluster, clock, default_config(registry), registry, tracer=Tracer(clock.now, keep=True))
    task = clock.loop.create_task(scheduler.run())
    clock.advance(1)
    assert scheduler.scheduled == 20
    # The API server comes back over a new, empty store: every version the informers hold is
    # newer than any it has, and it says so instead of waiting for them.
    fresh = MemoryStore(clock=clock, watch_latency=0.001)
    with pytest.raises(TooLargeResourceVersion):
        fresh.watch(core_v1.Pod, resource_version=old.list(core_v1.Pod).resource_version)
    cluster.store = fresh
    old.drop_watches()
    fresh.create(make_node("m1").capacity(cpu=8, pods=110).obj)
    for i in range(3):
        fresh.create(make_pod(f"new-{i}").req(cpu="10m").obj)
    clock.advance(3)
    relisted = {r.details["resource"] for r in scheduler.trace.records if r.kind == "informer.relist"}
    assert {"Pod", "Node"} <= relisted
    assert [fresh.get(core_v1.Pod, f"new-{i}", namespace="default").spec.nodeName for i in range(3)] == ["m1"] * 3
    assert scheduler.cache.sizes()["nodes"] == 1 and not task.done()  # n1 forgotten; still scheduling
    task.cancel()
    clock.advance(0.01)
