import pytest

from builders import make_pod
from kubesched.cache import PodInfo
from kubesched.framework.events import POD, ActionType, ClusterEvent
from kubesched.framework.status import Code
from kubesched.plugins import scheduling_gates
from kubesched.plugins.scheduling_gates import SchedulingGates


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        ((), None),
        (("example.com/one",), "waiting for scheduling gates: [example.com/one]"),
        (("a", "b"), "waiting for scheduling gates: [a b]"),
    ],
)
def test_pre_enqueue(gates, message):
    pod = make_pod("p").gates(*gates).obj if gates else make_pod("p").obj
    status = SchedulingGates().pre_enqueue(PodInfo(pod))
    if message is None:
        assert status is None
    else:
        assert status is not None
        assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.message == message


def test_empty_gate_list_passes():
    pod = make_pod("p").obj
    pod.spec.schedulingGates = []
    assert SchedulingGates().pre_enqueue(PodInfo(pod)) is None


def test_events_and_factory():
    plugin = scheduling_gates.new(None, None)
    assert plugin.name == "SchedulingGates"
    events = [e.event for e in plugin.events_to_register()]
    assert events == [ClusterEvent(POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]
