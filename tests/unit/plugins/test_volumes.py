import asyncio

import pytest

from builders import make_node, make_pod
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent
from kubesched.framework.status import Code
from kubesched.plugins import volumes
from kubesched.plugins.volumes import VolumeBinding, VolumeBindingArgs


@pytest.fixture
def pod():
    return PodInfo(make_pod("p").obj)


@pytest.fixture
def node():
    return NodeInfo(make_node("n").obj)


@pytest.mark.parametrize("name", ["VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"])
def test_filters_skip_and_pass(name, pod, node):
    factory, _ = volumes.PLUGINS[name]
    plugin = factory(None, None)
    assert plugin.name == name
    result, status = plugin.pre_filter(CycleState(), pod, [node])
    assert result is None
    assert status is not None and status.code == Code.SKIP
    assert plugin.filter(CycleState(), pod, node) is None
    assert plugin.events_to_register()


def test_volume_binding_other_points(pod, node):
    plugin = VolumeBinding()
    state = CycleState()
    status = plugin.pre_score(state, pod, [node])
    assert status is not None and status.code == Code.SKIP
    assert plugin.score(state, pod, node) == 0
    assert plugin.reserve(state, pod, "n") is None
    assert plugin.unreserve(state, pod, "n") is None
    assert plugin.unreserve(state, pod, "n") is None  # idempotent


def test_volume_binding_pre_bind(pod):
    assert asyncio.run(VolumeBinding().pre_bind(CycleState(), pod, "n")) is None


def test_volume_binding_args():
    assert volumes.new_volume_binding(None, None).args == VolumeBindingArgs(bindTimeoutSeconds=600)
    plugin = volumes.new_volume_binding({"bindTimeoutSeconds": 30}, None)
    assert plugin.args.bindTimeoutSeconds == 30
    with pytest.raises(ValueError, match=r"^bindTimeoutSeconds: Invalid value: -1: .*negative"):
        volumes.new_volume_binding({"bindTimeoutSeconds": -1}, None)
    with pytest.raises(ValueError, match="VolumeBindingArgs"):
        volumes.new_volume_binding({"bindTimeoutSeconds": "soon"}, None)


def test_events_match_the_upstream_registrations():
    registered = {
        name: [e.event for e in factory(None, None).events_to_register()]
        for name, (factory, _) in volumes.PLUGINS.items()
    }
    assert ClusterEvent(POD, ActionType.DELETE) in registered["VolumeRestrictions"]
    assert ClusterEvent(volumes.CSI_NODE, ActionType.ADD) in registered["NodeVolumeLimits"]
    assert ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL) in registered["VolumeZone"]
    assert ClusterEvent(volumes.CSI_DRIVER, ActionType.UPDATE) in registered["VolumeBinding"]
