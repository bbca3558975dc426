import asyncio

import pytest

from builders import make_node, make_pod
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import POD, ActionType, ClusterEvent
from kubesched.framework.interface import NodeToStatus
from kubesched.framework.status import Code, Status
from kubesched.plugins import dynamic_resources
from kubesched.plugins.dynamic_resources import DynamicResources, DynamicResourcesArgs


@pytest.fixture
def pod():
    return PodInfo(make_pod("p").obj)


def test_pod_without_claims(pod):
    plugin = dynamic_resources.new(None, None)
    assert plugin.name == "DynamicResources"
    node = NodeInfo(make_node("n").obj)
    state = CycleState()
    assert plugin.pre_enqueue(pod) is None
    result, status = plugin.pre_filter(state, pod, [node])
    assert result is None and status is not None and status.code == Code.SKIP
    assert plugin.filter(state, pod, node) is None
    scores = [plugin.score(state, pod, node), plugin.score(state, pod, node)]
    assert scores == [0, 0]
    assert plugin.normalize_score(state, pod, scores) is None
    assert scores == [0, 0]
    assert plugin.reserve(state, pod, "n") is None
    assert plugin.unreserve(state, pod, "n") is None
    assert asyncio.run(plugin.pre_bind(state, pod, "n")) is None


def test_post_filter_has_no_claims_to_deallocate(pod):
    result, status = DynamicResources().post_filter(CycleState(), pod, NodeToStatus())
    assert result is None
    assert status == Status(Code.UNSCHEDULABLE, "no new claims to deallocate")


def test_args():
    assert dynamic_resources.new({"filterTimeout": "5s"}, None).args == DynamicResourcesArgs(filterTimeout="5s")
    with pytest.raises(ValueError, match="DynamicResourcesArgs"):
        dynamic_resources.new({"filterTimeout": 5}, None)


def test_events():
    events = [e.event for e in DynamicResources().events_to_register()]
    assert ClusterEvent(POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM) in events
    assert ClusterEvent(dynamic_resources.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE) in events
