import pytest
from lightkube.models import core_v1

from builders import make_node, make_pod
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent
from kubesched.framework.status import Code
from kubesched.plugins import node_ports
from kubesched.plugins.node_ports import NodePorts

REASON = "node(s) didn't have free ports for the requested pod ports"


def pod(name: str, *ports: tuple[str | None, str | None, int]) -> PodInfo:
    p = make_pod(name).obj
    p.spec.containers[0].ports = [
        core_v1.ContainerPort(containerPort=port, hostPort=port, hostIP=ip, protocol=proto) for ip, proto, port in ports
    ]
    return PodInfo(p)


def node_with(*existing: PodInfo) -> NodeInfo:
    info = NodeInfo(make_node("n").obj)
    for p in existing:
        info.add_pod(p)
    return info


def test_pre_filter_skips_pods_without_host_ports():
    p = PodInfo(make_pod("p").obj)
    state = CycleState()
    result, status = NodePorts().pre_filter(state, p, [])
    assert result is None
    assert status is not None and status.code == Code.SKIP


@pytest.mark.parametrize(
    ("existing", "wanted", "passes"),
    [
        ((), ((None, "TCP", 80),), True),
        (((None, "TCP", 80),), ((None, "TCP", 80),), False),
        (((None, "UDP", 80),), ((None, "TCP", 80),), True),  # protocol differs
        (((None, "TCP", 81),), ((None, "TCP", 80),), True),  # port differs
        ((("127.0.0.1", "TCP", 80),), ((None, "TCP", 80),), False),  # wildcard overlaps a specific IP
        (((None, "TCP", 80),), (("127.0.0.1", "TCP", 80),), False),  # and the other way round
        ((("127.0.0.1", "TCP", 80),), (("10.0.0.1", "TCP", 80),), True),  # two specific IPs
        (((None, "TCP", 80),), ((None, "TCP", 81), (None, "TCP", 80)), False),  # any clash rejects
    ],
)
def test_filter(existing, wanted, passes):
    plugin = NodePorts()
    incoming = pod("new", *wanted)
    state = CycleState()
    assert plugin.pre_filter(state, incoming, []) == (None, None)
    status = plugin.filter(state, incoming, node_with(pod("old", *existing)))
    if passes:
        assert status is None
    else:
        assert status is not None
        assert status.code == Code.UNSCHEDULABLE
        assert status.reasons == [REASON]


def test_filter_without_pre_filter_state_is_an_error():
    status = NodePorts().filter(CycleState(), pod("p", (None, "TCP", 80)), node_with())
    assert status is not None and status.code == Code.ERROR


def test_events_and_factory():
    plugin = node_ports.new(None, None)
    assert plugin.name == "NodePorts"
    assert [e.event for e in plugin.events_to_register()] == [
        ClusterEvent(POD, ActionType.DELETE),
        ClusterEvent(NODE, ActionType.ADD),
    ]
