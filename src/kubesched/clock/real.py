"""Wall-clock time on the running asyncio loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from kubesched.clock.base import TimerHandle

T = TypeVar("T")


class RealClock:
    """The wall clock; timers are scheduled on the running event loop."""

    def now(self) -> float:
        return time.time()

    def call_at(self, when: float, callback: Callable[..., object], *args: object) -> TimerHandle:
        return self.call_later(when - time.time(), callback, *args)

    def call_later(self, delay: float, callback: Callable[..., object], *args: object) -> TimerHandle:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback, *args)

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(delay)

    def run(self, main: Coroutine[Any, Any, T]) -> T:  # Any: a coroutine's yield and send types
        return asyncio.run(main)
