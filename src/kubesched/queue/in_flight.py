"""Pods being scheduled, and the cluster events that arrived meanwhile: a pod that fails is
judged against the events it could not see, so no wake-up is lost."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from kubesched.framework.events import ClusterEvent
from kubesched.framework.queued import QueuedPodInfo


@dataclass(frozen=True)
class Recorded:
    seq: int
    event: ClusterEvent
    old: object
    new: object


class InFlight:
    def __init__(self) -> None:
        self._seq = itertools.count()
        self._pods: dict[str, tuple[QueuedPodInfo, int]] = {}  # uid -> (pod, sequence at pop)
        self._events: deque[Recorded] = deque()

    def add(self, qpi: QueuedPodInfo) -> None:
        self._pods[qpi.uid] = (qpi, next(self._seq))

    def get(self, uid: str) -> QueuedPodInfo | None:
        entry = self._pods.get(uid)
        return entry[0] if entry else None

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def record(self, event: ClusterEvent, old: object, new: object) -> None:
        """Keep an event for the pods in flight now (nothing is kept when none is)."""
        if self._pods:
            self._events.append(Recorded(next(self._seq), event, old, new))

    def since_pop(self, uid: str) -> Iterator[Recorded]:
        """The events recorded while the pod was in flight, oldest first."""
        entry = self._pods.get(uid)
        if entry is None:
            return iter(())
        popped = entry[1]
        return (r for r in self._events if r.seq > popped)

    def done(self, uid: str) -> None:
        """The pod is no longer in flight; drop the events no pod still in flight can need."""
        if self._pods.pop(uid, None) is None:
            return
        oldest = min((seq for _, seq in self._pods.values()), default=None)
        while self._events and (oldest is None or self._events[0].seq < oldest):
            self._events.popleft()

    @property
    def events(self) -> int:
        return len(self._events)
