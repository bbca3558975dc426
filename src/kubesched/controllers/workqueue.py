"""A controller's work queue, as client-go's: each key at most once in the queue, a key added
while it is being processed processed again afterwards, delayed adds on the clock, and failures
retried with a per-key exponential backoff."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from kubesched.clock import Clock

K = TypeVar("K", bound=Hashable)

RETRY_BASE_SECONDS = 0.005  # client-go's default controller rate limiter: 5 ms doubling
RETRY_MAX_SECONDS = 1000.0  # up to 1000 s


class WorkQueue(Generic[K]):
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._queue: deque[K] = deque()
        self._queued: set[K] = set()
        self._processing: set[K] = set()
        self._again: set[K] = set()  # added while being processed
        self._failures: dict[K, int] = {}
        self._ready = asyncio.Event()

    def add(self, key: K) -> None:
        if key in self._processing:
            self._again.add(key)
            return
        if key in self._queued:
            return
        self._queued.add(key)
        self._queue.append(key)
        self._ready.set()

    def add_after(self, key: K, delay: float) -> None:
        if delay <= 0:
            self.add(key)
        else:
            self._clock.call_later(delay, self.add, key)

    def retry(self, key: K) -> None:
        """Add `key` again after its backoff (which doubles with every retry until `forget`)."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self.add_after(key, min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2**failures))

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    async def get(self) -> K:
        while not self._queue:
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._queued.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: K) -> None:
        self._processing.discard(key)
        if key in self._again:
            self._again.discard(key)
            self.add(key)

    def __len__(self) -> int:
        return len(self._queue)
