import pytest
from lightkube.models import core_v1

from builders import make_node, make_pod
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent
from kubesched.framework.status import Code
from kubesched.plugins import node_unschedulable
from kubesched.plugins.node_unschedulable import NodeUnschedulable

KEY = "node.kubernetes.io/unschedulable"


def node(unschedulable: bool | None) -> NodeInfo:
    n = make_node("n").obj
    n.spec.unschedulable = unschedulable
    return NodeInfo(n)


def pod(*tolerations: core_v1.Toleration) -> PodInfo:
    p = make_pod("p").obj
    p.spec.tolerations = list(tolerations) or None
    return PodInfo(p)


@pytest.mark.parametrize(
    ("unschedulable", "tolerations", "passes"),
    [
        (None, (), True),
        (False, (), True),
        (True, (), False),
        (True, (core_v1.Toleration(key=KEY, operator="Exists", effect="NoSchedule"),), True),
        (True, (core_v1.Toleration(key=KEY, operator="Exists"),), True),  # empty effect tolerates all
        (True, (core_v1.Toleration(operator="Exists"),), True),  # tolerate everything
        (True, (core_v1.Toleration(key=KEY, operator="Exists", effect="NoExecute"),), False),
        (True, (core_v1.Toleration(key=KEY, operator="Equal", value="x", effect="NoSchedule"),), False),
        (True, (core_v1.Toleration(key="other", operator="Exists"),), False),
    ],
)
def test_filter(unschedulable, tolerations, passes):
    status = NodeUnschedulable().filter(CycleState(), pod(*tolerations), node(unschedulable))
    if passes:
        assert status is None
    else:
        assert status is not None
        assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == ["node(s) were unschedulable"]


def test_filter_without_node_object():
    status = NodeUnschedulable().filter(CycleState(), pod(), NodeInfo(None, name="gone"))
    assert status is not None
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ["node(s) had unknown conditions"]


def test_events_and_factory():
    plugin = node_unschedulable.new(None, None)
    assert plugin.name == "NodeUnschedulable"
    assert [e.event for e in plugin.events_to_register()] == [
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATION),
    ]
