import pytest

from builders import make_pod
from kubesched.cache import PodInfo
from kubesched.framework.queued import QueuedPodInfo
from kubesched.plugins import priority_sort
from kubesched.plugins.priority_sort import PrioritySort


def queued(name: str, priority: int | None, timestamp: float) -> QueuedPodInfo:
    pod = make_pod(name).obj
    pod.spec.priority = priority
    return QueuedPodInfo(PodInfo(pod), timestamp)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (queued("hi", 10, 5.0), queued("lo", 1, 1.0), True),  # higher priority wins despite later timestamp
        (queued("lo", 1, 1.0), queued("hi", 10, 5.0), False),
        (queued("early", 5, 1.0), queued("late", 5, 2.0), True),  # equal priority: earlier first
        (queued("late", 5, 2.0), queued("early", 5, 1.0), False),
        (queued("same", 5, 1.0), queued("same2", 5, 1.0), False),  # strict order
        (queued("unset", None, 1.0), queued("zero", 0, 2.0), True),  # no priority counts as 0
        (queued("neg", -1, 0.0), queued("unset", None, 9.0), False),
    ],
)
def test_less(a, b, expected):
    assert PrioritySort().less(a, b) is expected


def test_factory_and_name():
    plugin = priority_sort.new(None, None)
    assert isinstance(plugin, PrioritySort)
    assert plugin.name == "PrioritySort"
