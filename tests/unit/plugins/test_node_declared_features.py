from builders import make_node, make_pod
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent
from kubesched.framework.status import Code
from kubesched.plugins import node_declared_features


def test_skips_and_passes():
    plugin = node_declared_features.new(None, None)
    assert plugin.name == "NodeDeclaredFeatures"
    pod, node = PodInfo(make_pod("p").obj), NodeInfo(make_node("n").obj)
    result, status = plugin.pre_filter(CycleState(), pod, [node])
    assert result is None and status is not None and status.code == Code.SKIP
    assert plugin.filter(CycleState(), pod, node) is None


def test_events():
    assert [e.event for e in node_declared_features.new(None, None).events_to_register()] == [
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
        ClusterEvent(POD, ActionType.UPDATE),
    ]
