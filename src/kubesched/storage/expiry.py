"""Events that expire: kept `ttl` seconds after their last write, as etcd's leases expire them
under kube-apiserver's --event-ttl."""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from lightkube.resources import core_v1

from kubesched.api.objects import Served

SWEEP_EVERY = 1.0  # seconds of clock time between the sweeps writes set off
Key = tuple[str, str]


class EventExpiry:
    """When each Event falls due: a heap of (when, key, the version that expires)."""

    cls = core_v1.Event

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._due: list[tuple[float, Key, int]] = []
        self._next_sweep = 0.0

    def written(self, cls: type[Served], key: Key, rv: int, now: float) -> None:
        """Note a write of an object: an Event falls due `ttl` after it."""
        if cls is self.cls:
            heapq.heappush(self._due, (now + self.ttl, key, rv))

    def sweep_due(self, now: float) -> bool:
        return now >= self._next_sweep

    def due(self, now: float) -> Iterator[tuple[Key, int]]:
        """The Events due by `now`, each with the version that expires (a newer write keeps it)."""
        self._next_sweep = now + SWEEP_EVERY
        while self._due and self._due[0][0] <= now:
            _, key, rv = heapq.heappop(self._due)
            yield key, rv
