from dataclasses import dataclass
from typing import Any

import pytest
from lightkube.resources import core_v1

from builders import make_node, make_pod
from kubesched.cache import PodInfo
from kubesched.clock import VirtualClock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins import default_binder
from kubesched.plugins.default_binder import DefaultBinder, make_binding
from kubesched.storage import MemoryCluster, MemoryStore


@dataclass
class Handle:
    cluster: Any
    snapshot: Any = None
    clock: Any = None


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()


@pytest.fixture
def store(clock):
    s = MemoryStore(clock=clock, watch_latency=0.0)
    s.create(make_node("n1").obj)
    s.create(make_node("n2").obj)
    return s


def test_make_binding_carries_the_pod_identity():
    pod = make_pod("web", "prod").obj
    pod.metadata.uid = "uid-1"
    binding = make_binding(PodInfo(pod), "n1")
    assert (binding.metadata.name, binding.metadata.namespace, binding.metadata.uid) == ("web", "prod", "uid-1")
    assert (binding.target.kind, binding.target.name) == ("Node", "n1")


def test_bind_assigns_the_pod_then_a_second_bind_is_an_error(clock, store):
    pod = PodInfo(store.create(make_pod("web").obj))
    binder = default_binder.new(None, Handle(MemoryCluster(store)))
    assert isinstance(binder, DefaultBinder)
    assert binder.name == "DefaultBinder"

    assert clock.run(binder.bind(CycleState(), pod, "n1")) is None
    assert store.get(core_v1.Pod, "web", namespace="default").spec.nodeName == "n1"

    status = clock.run(binder.bind(CycleState(), pod, "n2"))
    assert status is not None
    assert status.code == Code.ERROR
    assert 'is already assigned to node "n1"' in status.message
    assert store.get(core_v1.Pod, "web", namespace="default").spec.nodeName == "n1"


def test_bind_of_a_missing_pod_is_an_error(clock, store):
    binder = DefaultBinder(Handle(MemoryCluster(store)))
    status = clock.run(binder.bind(CycleState(), PodInfo(make_pod("ghost").obj), "n1"))
    assert status is not None and status.code == Code.ERROR
    assert "ghost" in status.message


def test_bind_of_a_recreated_pod_is_refused_by_uid(clock, store):
    created = store.create(make_pod("web").obj)
    stale = PodInfo(created)
    store.delete(core_v1.Pod, "web", namespace="default")
    store.create(make_pod("web").obj)
    status = clock.run(DefaultBinder(Handle(MemoryCluster(store))).bind(CycleState(), stale, "n1"))
    assert status is not None and status.code == Code.ERROR
    assert store.get(core_v1.Pod, "web", namespace="default").spec.nodeName is None
