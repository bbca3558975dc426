"""Watches on the memory store: selector filtering and delivery after a latency on the clock."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from kubesched.api.objects import Served
from kubesched.clock import Clock, TimerHandle
from kubesched.cluster.protocol import ADDED, DELETED, MODIFIED, WatchEvent

Matcher = Callable[[Served], bool]


class MemoryWatch:
    """One open watch. The store offers every change of its kind; the watch keeps what matches.

    As a real API server's watch cache does, a change that moves an object into the selection
    arrives as ADDED and one that moves it out arrives as DELETED. Events are delivered
    `latency` seconds after the change, in order.
    """

    def __init__(
        self,
        *,
        clock: Clock,
        matcher: Matcher,
        latency: float,
        on_stop: Callable[[MemoryWatch], None],
        convert: Callable[[Served], Served] | None = None,
    ):
        self._clock = clock
        self._convert = convert
        self._matches = matcher
        self._latency = latency
        self._on_stop = on_stop
        self._pending: deque[tuple[float, WatchEvent[object]]] = deque()
        self._ready: deque[WatchEvent[object]] = deque()
        self._timer: TimerHandle | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.stopped = False

    def offer(self, type_: str, obj: Served, old: Served | None) -> None:
        """Take one committed change (`old`, the previous version, comes with a MODIFIED only)."""
        if self._convert is not None:
            obj = self._convert(obj)
            old = self._convert(old) if old is not None else None
        new_in = self._matches(obj)
        if type_ == MODIFIED and old is not None:
            old_in = self._matches(old)
            if new_in and not old_in:
                type_ = ADDED
            elif old_in and not new_in:
                type_ = DELETED
            elif not new_in:
                return
        elif not new_in:
            return
        self.push(WatchEvent(type_, obj))

    def push(self, event: WatchEvent[object]) -> None:
        """Queue an event for delivery after the latency."""
        if self.stopped:
            return
        if self._latency <= 0:
            self._ready.append(event)
            self._wake()
            return
        self._pending.append((self._clock.now() + self._latency, event))
        if self._timer is None:
            self._schedule()

    def _schedule(self) -> None:
        due = self._pending[0][0]
        self._timer = self._clock.call_at(due, self._deliver, due)

    def _deliver(self, due: float) -> None:
        # A loop runs a timer up to its clock resolution early: what was due when it fired is
        # delivered even when the clock reads a hair before it, else it would fire again forever.
        self._timer = None
        until = max(self._clock.now(), due) + 1e-9
        while self._pending and self._pending[0][0] <= until:
            self._ready.append(self._pending.popleft()[1])
        if self._pending:
            self._schedule()
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def drain(self) -> list[WatchEvent[Any]]:  # Any: objects of the watched class
        """The events delivered so far and not yet consumed (for synchronous callers)."""
        out = list(self._ready)
        self._ready.clear()
        return out

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending.clear()
        self._on_stop(self)
        self._wake()

    def __aiter__(self) -> MemoryWatch:
        return self

    async def __anext__(self) -> WatchEvent[Any]:  # Any: an object of the watched class
        while not self._ready:
            if self.stopped:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._ready.popleft()
