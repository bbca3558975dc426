"""PrioritySort: the default QueueSort plugin (higher priority first, then first come first served)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from kubesched.plugin.batch import QueueSortKey

if TYPE_CHECKING:
    from kubesched.plugin import Handle, QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort(QueueSortKey):
    """Orders activeQ by pod priority (`spec.priority`, 0 when unset), descending; pods of equal
    priority keep the order in which they were queued (earlier `timestamp` first)."""

    name: ClassVar[str] = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if a.priority != b.priority:
            return a.priority > b.priority
        return a.timestamp < b.timestamp

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[int, float]:
        """A key that orders pods as `less` does, for queues that compare keys."""
        return (-qpi.priority, qpi.timestamp)


def new(args: object, handle: Handle) -> PrioritySort:
    """PrioritySort takes no arguments."""
    return PrioritySort()
