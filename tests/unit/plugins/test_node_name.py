import pytest

from builders import make_node, make_pod
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, ActionType, ClusterEvent
from kubesched.framework.status import Code
from kubesched.plugins import node_name
from kubesched.plugins.node_name import NodeName


@pytest.mark.parametrize(
    ("wanted", "node", "passes"),
    [
        (None, "n1", True),
        ("n1", "n1", True),
        ("n2", "n1", False),
    ],
)
def test_filter(wanted, node, passes):
    builder = make_pod("p")
    if wanted:
        builder.node(wanted)
    status = NodeName().filter(CycleState(), PodInfo(builder.obj), NodeInfo(make_node(node).obj))
    if passes:
        assert status is None
    else:
        assert status is not None
        assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == ["node(s) didn't match the requested node name"]


def test_filter_without_node_object_is_an_error():
    status = NodeName().filter(CycleState(), PodInfo(make_pod("p").obj), NodeInfo(None, name="gone"))
    assert status is not None and status.code == Code.ERROR


def test_events_and_factory():
    plugin = node_name.new(None, None)
    assert plugin.name == "NodeName"
    assert [e.event for e in plugin.events_to_register()] == [ClusterEvent(NODE, ActionType.ADD)]
