"""The disruption controller keeps PodDisruptionBudget statuses current as pods come, become
ready, and go."""

import pytest
from lightkube.models import meta_v1
from lightkube.models import policy_v1 as pm
from lightkube.resources import core_v1, policy_v1

from builders import binding, make_pod
from kubesched.clock import VirtualClock
from kubesched.controllers import DisruptionController
from kubesched.sim import FakeKubelets, make_nodes
from kubesched.storage import MemoryCluster, MemoryStore


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()


def start(clock):
    store = MemoryStore(clock=clock)
    for node in make_nodes(1):
        store.create(node)
    cluster = MemoryCluster(store)
    for part in (FakeKubelets(cluster, clock), DisruptionController(cluster, clock)):
        clock.loop.create_task(part.run())
    clock.advance(0.1)
    return store


def pdb(store, **spec):
    store.create(
        policy_v1.PodDisruptionBudget(
            metadata=meta_v1.ObjectMeta(name="web", namespace="default"),
            spec=pm.PodDisruptionBudgetSpec(selector=meta_v1.LabelSelector(matchLabels={"app": "web"}), **spec),
        )
    )


def web(store, name):
    pod = store.create(make_pod(name).labels(app="web").obj)
    store.post(core_v1.Pod, "binding", binding(pod, "node-0"))


def status(store):
    s = store.get(policy_v1.PodDisruptionBudget, "web", namespace="default").status
    return (s.expectedPods, s.currentHealthy, s.desiredHealthy, s.disruptionsAllowed)


def test_the_budget_follows_its_pods(clock):
    store = start(clock)
    pdb(store, minAvailable=2)
    clock.advance(0.1)
    assert status(store) == (0, 0, 2, 0)
    for name in ("a", "b", "c"):
        web(store, name)
    clock.advance(5)  # the kubelet starts them: they become Ready
    assert status(store) == (3, 3, 2, 1)
    store.delete(core_v1.Pod, "a", namespace="default", grace_period_seconds=0)
    clock.advance(1)
    assert status(store) == (2, 2, 2, 0)


def test_pods_outside_the_selector_do_not_count(clock):
    store = start(clock)
    pdb(store, maxUnavailable="50%")
    web(store, "a")
    store.post(core_v1.Pod, "binding", binding(store.create(make_pod("other").labels(app="db").obj), "node-0"))
    clock.advance(5)
    assert status(store) == (1, 1, 0, 1)
