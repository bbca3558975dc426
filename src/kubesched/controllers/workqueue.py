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
BATCH_SECONDS = 0.05  # how long a change of a dependent (a pod) waits for the next ones before its owner syncs
BATCH_COST_FACTOR = 10  # and at least this many times the owner's last sync took: a large owner syncs less often


class WorkQueue(Generic[K]):
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._queue: deque[K] = deque()
        self._queued: set[K] = set()
        self._processing: set[K] = set()
        self._again: set[K] = set()  # added while being processed
        self._failures: dict[K, int] = {}
        self._batching: set[K] = set()
        self._cost: dict[K, float] = {}  # seconds the key's last processing took
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

    def add_batched(self, key: K) -> None:
        """Add `key` after a batching delay, once however often it is asked for meanwhile: the
        thousands of pod changes of a large workload make a few syncs of their owner, not one
        each. The delay is `BATCH_SECONDS`, or `BATCH_COST_FACTOR` times the key's last
        processing when that is longer, so that no owner's syncs take more than a tenth of the
        loop."""
        if key in self._batching:
            return
        self._batching.add(key)
        delay = max(BATCH_SECONDS, BATCH_COST_FACTOR * self._cost.get(key, 0.0))
        self._clock.call_later(delay, self._release, key)

    def _release(self, key: K) -> None:
        self._batching.discard(key)
        self.add(key)

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

    def done(self, key: K, *, cost: float = 0.0) -> None:
        """`key` processed, in `cost` seconds of work."""
        self._processing.discard(key)
        if cost:
            self._cost[key] = cost
        else:
            self._cost.pop(key, None)
        if key in self._again:
            self._again.discard(key)
            self.add(key)

    def __len__(self) -> int:
        return len(self._queue)
