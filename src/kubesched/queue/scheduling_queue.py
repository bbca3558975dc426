"""The scheduling queue: activeQ, backoffQ and unschedulablePods, with the flush timers.

- activeQ: pods ready to be tried, ordered by the QueueSort plugin.
- backoffQ: pods that failed and must wait `initial * 2**(n-1)` (capped) before the next try;
  rejections and errors back off in separate heaps. When activeQ is empty a rejected pod may be
  popped from backoffQ before its backoff ends (SchedulerPopFromBackoffQ).
- unschedulablePods: pods rejected by plugins, waiting for a cluster event that could help them
  (one their rejecting plugins registered), or for the flush of pods older than 5 minutes; and
  gated pods held by a PreEnqueue plugin.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from kubesched.cache import PodInfo
from kubesched.clock import Clock, TimerHandle
from kubesched.framework.events import UNSCHEDULABLE_TIMEOUT, ClusterEvent, ClusterEventWithHint
from kubesched.framework.queued import QueuedPodInfo
from kubesched.framework.status import Status
from kubesched.trace import Tracer

DEFAULT_INITIAL_BACKOFF = 1.0
DEFAULT_MAX_BACKOFF = 10.0
DEFAULT_MAX_IN_UNSCHEDULABLE = 300.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0
BACKOFF_FLUSH_PERIOD = 1.0

ACTIVE = "activeQ"
BACKOFF = "backoffQ"
UNSCHEDULABLE = "unschedulablePods"


@dataclass
class QueueProfile:
    """What the queue needs from one profile: its PreEnqueue verdict and the events its plugins registered."""

    pre_enqueue: Callable[[PodInfo], Status | None]
    events: dict[str, list[ClusterEventWithHint]]


class _Heap:
    """A heap of queued pods keyed by pod key, ordered by `primary(qpi)`, then by `order(qpi)`,
    then first pushed first. Entries are lists compared element by element; a removed entry
    keeps its place with its pod cleared."""

    def __init__(self, primary: Callable[[QueuedPodInfo], Any], order: Callable[[QueuedPodInfo], Any]) -> None:
        self._primary = primary
        self._order = order
        self._heap: list[list[Any]] = []
        self._items: dict[str, list[Any]] = {}
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


class _ByLess:
    """A sort key from a QueueSort `less` function: equal when neither pod goes first."""

    __slots__ = ("less", "qpi")

    def __init__(self, qpi: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.qpi = qpi
        self.less = less

    def __lt__(self, other: _ByLess) -> bool:
        return self.less(self.qpi, other.qpi)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByLess) and not self.less(self.qpi, other.qpi) and not self.less(other.qpi, self.qpi)

    __hash__ = None  # type: ignore[assignment]


class SchedulingQueue:
    def __init__(
        self,
        *,
        clock: Clock,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
        profiles: dict[str, QueueProfile],
        initial_backoff: float = DEFAULT_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_MAX_BACKOFF,
        max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE,
        tracer: Tracer | None = None,
    ) -> None:
        self.clock = clock
        self.profiles = profiles
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self._trace = tracer or Tracer(clock.now)
        order = sort_key or (lambda qpi: _ByLess(qpi, less))
        self.active = _Heap(lambda qpi: 0, order)
        self.backoff = _Heap(self._expiry, order)
        self.error_backoff = _Heap(self._expiry, order)
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self.in_flight: dict[str, QueuedPodInfo] = {}
        self._wakeup: asyncio.Event | None = None
        self._timers: list[TimerHandle] = []
        self.closed = False

    # -- timers -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the backoff flush (every second, on whole seconds) and the unschedulable flush (every 30 s)."""
        now = self.clock.now()
        self._timers.append(self.clock.call_at(math.floor(now) + BACKOFF_FLUSH_PERIOD, self._flush_backoff))
        self._timers.append(self.clock.call_later(UNSCHEDULABLE_FLUSH_PERIOD, self._flush_unschedulable))

    def close(self) -> None:
        self.closed = True
        for timer in self._timers:
            timer.cancel()
        self._wake()

    def _flush_backoff(self) -> None:
        if self.closed:
            return
        for heap in (self.backoff, self.error_backoff):
            while (head := heap.peek()) is not None and not self._backing_off(head):
                heap.pop()
                self._to_active(head, event="BackoffComplete", pre_enqueue=False)
        self._timers = [t for t in self._timers if not t.cancelled()]
        self._timers.append(
            self.clock.call_at(math.floor(self.clock.now()) + BACKOFF_FLUSH_PERIOD, self._flush_backoff)
        )

    def _flush_unschedulable(self) -> None:
        if self.closed:
            return
        now = self.clock.now()
        stale = [q for q in self.unschedulable.values() if now - q.timestamp > self.max_in_unschedulable]
        self._move(stale, UNSCHEDULABLE_TIMEOUT)
        self._timers.append(self.clock.call_later(UNSCHEDULABLE_FLUSH_PERIOD, self._flush_unschedulable))

    # -- backoff ----------------------------------------------------------------------------------

    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        count = qpi.consecutive_errors if qpi.consecutive_errors > 0 else qpi.unschedulable_count
        if count == 0 or self.max_backoff == 0:
            return 0.0
        return float(min(self.initial_backoff * 2.0 ** (count - 1), self.max_backoff))

    def _expiry(self, qpi: QueuedPodInfo) -> float:
        if qpi.backoff_expiry is None:
            qpi.backoff_expiry = float(math.floor(qpi.timestamp + self.backoff_duration(qpi)))
        return qpi.backoff_expiry

    def _backing_off(self, qpi: QueuedPodInfo) -> bool:
        if self.backoff_duration(qpi) == 0:
            return False
        return self._expiry(qpi) >= math.floor(self.clock.now())

    # -- adding -----------------------------------------------------------------------------------

    def add(self, pod: Any) -> None:
        """A new unscheduled pod from the informer."""
        info = PodInfo(pod)
        qpi = QueuedPodInfo(info, timestamp=self.clock.now())
        self._to_active(qpi, event="PodAdd")

    def _to_active(self, qpi: QueuedPodInfo, *, event: str, pre_enqueue: bool = True) -> None:
        """Move to activeQ, unless a PreEnqueue plugin gates the pod (then it waits as gated)."""
        if pre_enqueue:
            status = self._pre_enqueue(qpi)
            if status is not None:
                qpi.gating_plugin = status.plugin
                qpi.unschedulable_plugins = {status.plugin}
                self.unschedulable[qpi.key] = qpi
                self._trace.emit("queue.gated", pod=qpi.key, plugin=status.plugin, message=status.message, event=event)
                return
        qpi.gating_plugin = ""
        if qpi.initial_attempt is None:
            qpi.initial_attempt = self.clock.now()
        self.active.push(qpi)
        self._trace.emit("queue.move", pod=qpi.key, to=ACTIVE, event=event)
        self._wake()

    def _pre_enqueue(self, qpi: QueuedPodInfo) -> Status | None:
        profile = self.profiles.get(qpi.pod_info.pod.spec.schedulerName or "")
        return profile.pre_enqueue(qpi.pod_info) if profile is not None else None

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None:
        """Requeue a pod after a failed attempt: to backoffQ if it failed with an error, otherwise
        to unschedulablePods to wait for an event that may help."""
        self.in_flight.pop(qpi.uid, None)
        if qpi.key in self.unschedulable or self.active.get(qpi.key) or self._backoff_get(qpi.key):
            return
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            qpi.consecutive_errors += 1
        else:
            qpi.unschedulable_count += 1
            qpi.consecutive_errors = 0
        qpi.timestamp = self.clock.now()
        qpi.backoff_expiry = None
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            self._to_backoff_or_active(qpi, event="ScheduleAttemptFailure")
            return
        self.unschedulable[qpi.key] = qpi
        self._trace.emit(
            "queue.move",
            pod=qpi.key,
            to=UNSCHEDULABLE,
            event="ScheduleAttemptFailure",
            plugins=sorted(qpi.unschedulable_plugins | qpi.pending_plugins),
        )

    def _to_backoff_or_active(self, qpi: QueuedPodInfo, *, event: str) -> None:
        if self._backing_off(qpi):
            status = self._pre_enqueue(qpi)
            if status is not None:
                qpi.gating_plugin = status.plugin
                self.unschedulable[qpi.key] = qpi
                return
            heap = self.error_backoff if qpi.consecutive_errors > 0 else self.backoff
            heap.push(qpi)
            self._trace.emit("queue.move", pod=qpi.key, to=BACKOFF, event=event, until=self._expiry(qpi))
            self._wake()
        else:
            self._to_active(qpi, event=event)

    def _backoff_get(self, key: str) -> QueuedPodInfo | None:
        return self.backoff.get(key) or self.error_backoff.get(key)

    # -- cluster events ---------------------------------------------------------------------------

    def move_all_to_active_or_backoff(self, event: ClusterEvent, *, except_uid: str = "") -> None:
        """A cluster event: requeue every unschedulable pod whose rejecting plugins care about it
        (except the pod with `except_uid`, when the event is that pod's own failure)."""
        self._move([q for q in self.unschedulable.values() if q.uid != except_uid], event)

    def _move(self, candidates: list[QueuedPodInfo], event: ClusterEvent) -> None:
        for qpi in candidates:
            if not self._worth_requeuing(qpi, event):
                continue
            del self.unschedulable[qpi.key]
            if qpi.gated:
                self._to_active(qpi, event=event.label)
            else:
                self._to_backoff_or_active(qpi, event=event.label)

    def _worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent) -> bool:
        profile = self.profiles.get(qpi.pod_info.pod.spec.schedulerName or "")
        if profile is None:
            return False
        if qpi.gated:
            registered = profile.events.get(qpi.gating_plugin, [])
            return any(r.event.matches(event) for r in registered)
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors or event.is_wildcard():
            return True
        return any(r.event.matches(event) for plugin in rejectors for r in profile.events.get(plugin, []))

    # -- pod updates ------------------------------------------------------------------------------

    def update(self, old: Any, new: Any, events: list[ClusterEvent]) -> None:
        """An unscheduled pod changed: refresh its queued copy, and requeue it if the change may help."""
        key = f"{new.metadata.namespace}/{new.metadata.name}"
        info = PodInfo(new)
        for heap in (self.active, self.backoff, self.error_backoff):
            qpi = heap.get(key)
            if qpi is not None:
                qpi.pod_info = info
                return
        qpi = self.unschedulable.get(key)
        if qpi is not None:
            qpi.pod_info = info
            if not _spec_or_meta_changed(old, new):
                return  # a status-only change (e.g. our own PodScheduled condition) helps nothing
            for event in events:
                if self._worth_requeuing(qpi, event):
                    del self.unschedulable[key]
                    if qpi.gated:
                        self._to_active(qpi, event=event.label)
                    else:
                        self._to_backoff_or_active(qpi, event=event.label)
                    return
            return
        if info.uid in self.in_flight:
            self.in_flight[info.uid].pod_info = info
            return
        self._to_active(QueuedPodInfo(info, timestamp=self.clock.now()), event="PodUpdate")

    def delete(self, pod: Any) -> None:
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        for heap in (self.active, self.backoff, self.error_backoff):
            heap.remove(key)
        self.unschedulable.pop(key, None)

    # -- popping ----------------------------------------------------------------------------------

    async def pop(self) -> QueuedPodInfo | None:
        """The next pod to try (None once closed). Waits while nothing is ready."""
        while True:
            qpi = self.active.pop() or self.backoff.pop()
            if qpi is not None:
                qpi.attempts += 1
                self.in_flight[qpi.uid] = qpi
                self._trace.emit("queue.pop", pod=qpi.key, attempts=qpi.attempts)
                return qpi
            if self.closed:
                return None
            if self._wakeup is None:
                self._wakeup = asyncio.Event()
            self._wakeup.clear()
            await self._wakeup.wait()

    def done(self, uid: str) -> None:
        self.in_flight.pop(uid, None)

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()

    # -- introspection ----------------------------------------------------------------------------

    def pending(self) -> dict[str, int]:
        gated = sum(1 for q in self.unschedulable.values() if q.gated)
        return {
            "active": len(self.active),
            "backoff": len(self.backoff) + len(self.error_backoff),
            "unschedulable": len(self.unschedulable) - gated,
            "gated": gated,
        }

    def where(self, key: str) -> str | None:
        """Which queue holds the pod (activeQ, backoffQ, unschedulablePods), if any."""
        if self.active.get(key):
            return ACTIVE
        if self._backoff_get(key):
            return BACKOFF
        if key in self.unschedulable:
            return UNSCHEDULABLE
        return None


def _stripped(pod: Any) -> Any:
    meta = msgspec.structs.replace(
        pod.metadata, resourceVersion=None, generation=None, managedFields=None, finalizers=None
    )
    return msgspec.structs.replace(pod, metadata=meta, status=None)


def _spec_or_meta_changed(old: Any, new: Any) -> bool:
    """Whether anything but the status and bookkeeping fields differs."""
    return bool(_stripped(old) != _stripped(new))
