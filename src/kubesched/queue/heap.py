"""A heap of queued pods, for activeQ and the two backoff heaps."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator
from typing import Any

from kubesched.framework.queued import QueuedPodInfo


class PodHeap:
    """A heap of queued pods keyed by pod key, ordered by `primary(qpi)`, then by `order(qpi)`,
    then first pushed first. Entries are lists compared element by element; a removed entry
    keeps its place with its pod cleared."""

    def __init__(self, primary: Callable[[QueuedPodInfo], object], order: Callable[[QueuedPodInfo], object]) -> None:
        self._primary = primary
        self._order = order
        # Any: entries are [primary, order, sequence, pod or None] lists, compared element by element
        self._heap: list[list[Any]] = []
        self._items: dict[str, list[Any]] = {}  # Any: the same entries, by pod key
        self._seq = itertools.count()

    def push(self, qpi: QueuedPodInfo) -> None:
        self.remove(qpi.key)
        entry = [self._primary(qpi), self._order(qpi), next(self._seq), qpi]
        self._items[qpi.key] = entry
        heapq.heappush(self._heap, entry)

    def peek(self) -> QueuedPodInfo | None:
        self._drop_removed()
        return self._heap[0][3] if self._heap else None

    def pop(self) -> QueuedPodInfo | None:
        self._drop_removed()
        if not self._heap:
            return None
        qpi: QueuedPodInfo = heapq.heappop(self._heap)[3]
        del self._items[qpi.key]
        return qpi

    def remove(self, key: str) -> QueuedPodInfo | None:
        entry = self._items.pop(key, None)
        if entry is None:
            return None
        qpi: QueuedPodInfo = entry[3]
        entry[3] = None
        return qpi

    def get(self, key: str) -> QueuedPodInfo | None:
        entry = self._items.get(key)
        return entry[3] if entry else None

    def _drop_removed(self) -> None:
        while self._heap and self._heap[0][3] is None:
            heapq.heappop(self._heap)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return iter([entry[3] for entry in self._items.values()])


class ByLess:
    """A sort key from a QueueSort `less` function: equal when neither pod goes first."""

    __slots__ = ("less", "qpi")

    def __init__(self, qpi: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.qpi = qpi
        self.less = less

    def __lt__(self, other: ByLess) -> bool:
        return self.less(self.qpi, other.qpi)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByLess) and not self.less(self.qpi, other.qpi) and not self.less(other.qpi, self.qpi)

    __hash__ = None  # type: ignore[assignment]
