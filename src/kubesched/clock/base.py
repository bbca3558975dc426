"""The `Clock` protocol shared by the real and the virtual clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
TimerHandle = asyncio.TimerHandle


class Clock(Protocol):
    """Time as kubesched sees it.

    `now()` is seconds since the Unix epoch. Timers run on the asyncio loop the clock drives
    (the running loop for `RealClock`, the clock's own loop for `VirtualClock`), so the same
    async code runs on both. Timers due at the same instant fire in the order they were set.
    """

    def now(self) -> float:
        """Seconds since the epoch."""
        ...

    def call_at(self, when: float, callback: Callable[..., object], *args: object) -> TimerHandle:
        """Run `callback(*args)` at `when` (on the `now()` scale)."""
        ...

    def call_later(self, delay: float, callback: Callable[..., object], *args: object) -> TimerHandle:
        """Run `callback(*args)` after `delay` seconds."""
        ...

    async def sleep(self, delay: float) -> None:
        """Suspend the calling task for `delay` seconds."""
        ...

    def run(self, main: Coroutine[Any, Any, T]) -> T:  # Any: a coroutine's yield and send types
        """Run `main` to completion on this clock's loop and return its result."""
        ...


def utc(seconds: float) -> datetime:
    """An aware UTC datetime for a `Clock.now()` value, truncated to the microsecond."""
    return datetime.fromtimestamp(seconds, tz=UTC)


def epoch_seconds(stamp: object) -> float:
    """A timestamp of an object (a datetime) as a `Clock.now()` value; 0 for none."""
    return stamp.timestamp() if isinstance(stamp, datetime) else 0.0


def rfc3339(seconds: float) -> str:
    """A `Clock.now()` value as the API writes timestamps (UTC, whole seconds, `Z`)."""
    return utc(int(seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
