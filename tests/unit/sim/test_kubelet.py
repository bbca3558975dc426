"""Fake kubelets admit, start, reject and terminate pods as a kubelet does."""

import pytest
from lightkube.resources import core_v1

from builders import Bookmarking, binding, make_pod
from kubesched.clock import VirtualClock
from kubesched.cluster import NotFound
from kubesched.sim import FakeKubelets, KubeletConfig, NodeTemplate, make_nodes
from kubesched.sim.kubelet import RUN_SECONDS_ANNOTATION
from kubesched.storage import MemoryCluster, MemoryStore


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()


def start(clock, *, nodes=1, cpu="2", pods="110", config=None, wrap=lambda cluster: cluster, serve=()):
    store = MemoryStore(clock=clock)
    for node in make_nodes(nodes, NodeTemplate(capacity={"cpu": cpu, "memory": "4Gi", "pods": pods})):
        store.create(node)
    kubelets = FakeKubelets(wrap(MemoryCluster(store)), clock, config=config, serve=serve)

    async def serve():
        await kubelets.run()

    clock.loop.create_task(serve())
    clock.advance(0.1)
    return store


def place(store, name, node, **req):
    pod = store.create(make_pod(name).req(**req).obj)
    store.post(core_v1.Pod, "binding", binding(pod, node))


def pod(store, name):
    return store.get(core_v1.Pod, name, namespace="default")


def test_bound_pod_runs_after_the_start_delay(clock):
    store = start(clock, config=KubeletConfig(start_seconds=2))
    place(store, "a", "node-0", cpu="500m")
    clock.advance(1.9)
    assert pod(store, "a").status.phase == "Pending"
    clock.advance(0.2)
    assert pod(store, "a").status.phase == "Running"
    assert {c.type for c in pod(store, "a").status.conditions} >= {"Ready", "PodScheduled"}


@pytest.mark.parametrize(
    ("capacity", "requests", "reason", "message"),
    [
        (
            {"cpu": "1"},
            {"cpu": "600m"},
            "OutOfcpu",
            "Pod was rejected: Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000",
        ),
        (
            {"pods": "1"},
            {"cpu": "100m"},
            "OutOfpods",
            "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1",
        ),
    ],
)
def test_overcommitted_pod_is_rejected_with_the_resource_named(clock, capacity, requests, reason, message):
    store = start(clock, cpu=capacity.get("cpu", "4"), pods=capacity.get("pods", "110"))
    place(store, "first", "node-0", **requests)
    place(store, "second", "node-0", **requests)
    clock.advance(2)
    assert pod(store, "first").status.phase == "Running"
    rejected = pod(store, "second").status
    assert (rejected.phase, rejected.reason, rejected.message) == ("Failed", reason, message)
    events = [e for e in store.list(core_v1.Event).items if e.involvedObject.name == "second"]
    assert [(e.type, e.reason) for e in events] == [("Warning", reason)]


def test_memory_overcommit_is_out_of_memory(clock):
    store = start(clock)
    place(store, "big", "node-0", memory="3Gi")
    place(store, "bigger", "node-0", memory="2Gi")
    clock.advance(2)
    assert pod(store, "bigger").status.reason == "OutOfmemory"


def test_graceful_deletion_follows_the_grace_period(clock):
    store = start(clock, config=KubeletConfig(stop_seconds=None))
    p = store.create(make_pod("a").grace(20).obj)
    store.post(core_v1.Pod, "binding", binding(p, "node-0"))
    clock.advance(2)
    store.delete(core_v1.Pod, "a")
    clock.advance(19.9)
    assert pod(store, "a").metadata.deletionTimestamp is not None
    clock.advance(0.2)
    with pytest.raises(NotFound):
        pod(store, "a")


def test_containers_that_stop_quickly_end_deletion_early(clock):
    store = start(clock, config=KubeletConfig(stop_seconds=1))
    place(store, "a", "node-0")
    clock.advance(2)
    store.delete(core_v1.Pod, "a")
    clock.advance(1.1)
    with pytest.raises(NotFound):
        pod(store, "a")


def test_resources_are_released_when_a_pod_is_gone(clock):
    store = start(clock, cpu="1")
    place(store, "a", "node-0", cpu="800m")
    clock.advance(2)
    store.delete(core_v1.Pod, "a", grace_period_seconds=0)
    clock.advance(0.1)
    place(store, "b", "node-0", cpu="800m")
    clock.advance(2)
    assert pod(store, "b").status.phase == "Running"


def test_pod_with_run_seconds_succeeds_and_frees_its_room(clock):
    store = start(clock, cpu="1")
    p = make_pod("job").req(cpu="800m").obj
    p.metadata.annotations = {RUN_SECONDS_ANNOTATION: "10"}
    created = store.create(p)
    store.post(core_v1.Pod, "binding", binding(created, "node-0"))
    clock.advance(12)
    assert pod(store, "job").status.phase == "Succeeded"
    place(store, "next", "node-0", cpu="800m")
    clock.advance(2)
    assert pod(store, "next").status.phase == "Running"


def test_pods_on_other_nodes_are_ignored(clock):
    store = start(clock)
    place(store, "elsewhere", "real-node", cpu="100m")
    clock.advance(5)
    assert pod(store, "elsewhere").status.phase == "Pending"


def test_named_nodes_are_served_annotated_or_not_and_no_other(clock):
    store = start(clock, nodes=2, serve={"node-1", "bare"})
    bare = NodeTemplate().make("bare", 2)
    bare.metadata.annotations = None  # not a fake node: served only because it is named
    store.create(bare)
    clock.advance(0.1)
    for name, node in (("a", "node-0"), ("b", "node-1"), ("c", "bare")):
        place(store, name, node, cpu="100m")
    clock.advance(5)
    assert {n: pod(store, n).status.phase for n in "abc"} == {"a": "Pending", "b": "Running", "c": "Running"}


def test_bookmarks_in_the_watches_are_versions_not_pods(clock):
    store = start(clock, wrap=Bookmarking)
    place(store, "a", "node-0", cpu="100m")
    clock.advance(1)
    place(store, "b", "node-0", cpu="100m")
    clock.advance(5)
    assert [pod(store, n).status.phase for n in "ab"] == ["Running", "Running"]


@pytest.mark.parametrize(
    ("allocatable", "restart", "running", "rejected"),
    [
        ("2", True, ["a", "b", "c"], []),  # nothing shrank: each pod admitted again
        ("1300m", False, ["a", "b", "c"], []),  # shrunk under running pods: admission happened once
        ("1300m", True, ["a", "b"], ["c"]),  # admitted anew, oldest first: the newest no longer fits
        ("500m", True, [], ["a", "b", "c"]),
    ],
)
def test_a_restarted_kubelet_admits_its_pods_anew_oldest_first(clock, allocatable, restart, running, rejected):
    store = MemoryStore(clock=clock)
    store.create(NodeTemplate(capacity={"cpu": "2", "memory": "4Gi", "pods": "110"}).make("node-0", 0))
    kubelets = FakeKubelets(MemoryCluster(store), clock)
    clock.loop.create_task(kubelets.run())
    clock.advance(0.1)
    for name in "abc":
        place(store, name, "node-0", cpu="600m")
        clock.advance(1.5)
    status = {"capacity": {"cpu": allocatable}, "allocatable": {"cpu": allocatable}}
    store.patch(core_v1.Node, "node-0", {"status": status}, subresource="status")
    clock.advance(0.1)
    said = []
    if restart:
        task = clock.loop.create_task(kubelets.restart("node-0"))
        clock.advance(0.1)
        said = task.result()
    assert said == [f"default/{n}" for n in rejected]
    assert [n for n in "abc" if pod(store, n).status.phase == "Running"] == running
    assert {pod(store, n).status.reason for n in rejected} <= {"OutOfcpu"}
