"""Virtual time: an asyncio loop whose clock jumps to the next timer when every task waits.

The loop's `time()` is the virtual epoch time. When nothing is ready to run, instead of
blocking in `select()` for the timeout until the next timer, the loop polls for I/O and, if
there is none, moves its clock forward to that timer. Minutes of cluster time pass in
milliseconds, and because timers due at the same instant are ordered by the sequence in which
they were set, a run is reproducible.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import selectors
from collections.abc import Awaitable, Callable, Iterable
from contextvars import Context
from typing import TypeVar

from kubesched.clock.base import TimerHandle

T = TypeVar("T")

DEFAULT_EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z: virtual runs start here unless told otherwise
_RESOLUTION = 1e-6  # float epoch seconds carry microseconds exactly enough; finer would be noise


class _OrderedTimer(asyncio.TimerHandle):
    """A timer handle ordered by (due time, creation order) so ties fire first-set, first-run."""

    __slots__ = ("_seq",)

    def __init__(
        self,
        when: float,
        callback: Callable[..., object],
        args: tuple[object, ...],
        loop: asyncio.AbstractEventLoop,
        context: Context | None,
        seq: int,
    ) -> None:
        super().__init__(when, callback, args, loop, context)
        self._seq = seq

    def __lt__(self, other: object) -> bool:
        if isinstance(other, _OrderedTimer):
            return (self.when(), self._seq) < (other.when(), other._seq)
        return NotImplemented


class _VirtualSelector(selectors.DefaultSelector):
    """Polls real I/O without blocking; when idle, advances the owning loop's virtual clock."""

    def __init__(self) -> None:
        super().__init__()
        self.loop: _VirtualLoop | None = None

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        events = super().select(0)
        loop = self.loop
        if events or timeout == 0 or loop is None:
            return events
        if loop.idle_limit is not None:
            nxt = loop.next_timer()
            if nxt is None or nxt > loop.idle_limit + _RESOLUTION / 2:
                if loop.idle_limit != float("inf"):
                    loop.now_ = max(loop.now_, loop.idle_limit)
                loop.stop()
                return []
        if timeout is None:
            # Nothing scheduled: only another thread (through the self-pipe) can wake us.
            return super().select(None)
        nxt = loop.next_timer()
        loop.now_ = nxt if nxt is not None else loop.now_ + timeout
        return []


class _VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self, start: float) -> None:
        selector = _VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self.now_ = start
        self.idle_limit: float | None = None
        self._clock_resolution = _RESOLUTION
        self._seq = itertools.count()

    def time(self) -> float:
        return self.now_

    def next_timer(self) -> float | None:
        scheduled: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        while scheduled and scheduled[0].cancelled():
            heapq.heappop(scheduled)
        return scheduled[0].when() if scheduled else None

    def call_at(
        self,
        when: float,
        callback: Callable[..., object],
        *args: object,
        context: Context | None = None,
    ) -> TimerHandle:
        self._check_closed()  # type: ignore[attr-defined]
        timer = _OrderedTimer(when, callback, args, self, context, next(self._seq))
        heapq.heappush(self._scheduled, timer)  # type: ignore[attr-defined]
        timer._scheduled = True  # type: ignore[attr-defined]
        return timer


class VirtualClock:
    """Deterministic time driving its own asyncio loop.

    `run(main)` runs a coroutine to completion; `run_until_idle()` and `advance()` drive the loop
    from synchronous code (tests, drills) until nothing is left to do before a given time.
    """

    def __init__(self, *, start: float = DEFAULT_EPOCH) -> None:
        self.loop = _VirtualLoop(start)

    def now(self) -> float:
        return self.loop.now_

    def call_at(self, when: float, callback: Callable[..., object], *args: object) -> TimerHandle:
        return self.loop.call_at(when, callback, *args)

    def call_later(self, delay: float, callback: Callable[..., object], *args: object) -> TimerHandle:
        return self.loop.call_at(self.loop.now_ + max(0.0, delay), callback, *args)

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(delay)

    def run(self, main: Awaitable[T]) -> T:
        return self.loop.run_until_complete(main)

    def run_alongside(self, main: Awaitable[T], runners: Iterable[Callable[[], Awaitable[object]]]) -> T:
        """Run `main` to completion while each of `runners` runs (a scheduler's, a kubelet's
        `run`), then cancel them and close the clock."""

        async def alongside() -> T:
            tasks = [asyncio.ensure_future(run()) for run in runners]
            try:
                return await main
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

        try:
            return self.run(alongside())
        finally:
            self.close()

    def run_until_idle(self, *, until: float | None = None) -> None:
        """Run every task and timer until none is ready and no timer is due at or before `until`.

        With `until=None` it runs until no timer is left at all. The clock ends at `until` when
        given (or where the last timer left it).
        """
        self.loop.idle_limit = float("inf") if until is None else until
        try:
            self.loop.run_forever()
        finally:
            self.loop.idle_limit = None

    def advance(self, seconds: float) -> None:
        """Run everything due in the next `seconds` of virtual time and end exactly then."""
        self.run_until_idle(until=self.loop.now_ + seconds)

    def close(self) -> None:
        """Cancel what is still pending and close the loop (once: a closed clock stays closed)."""
        if self.loop.is_closed():
            return
        for task in asyncio.all_tasks(self.loop):
            task.cancel()
        self.run_until_idle(until=self.loop.now_)
        self.loop.close()
