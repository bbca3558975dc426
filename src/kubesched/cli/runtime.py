"""Process settings every `kubesched` command applies before it starts work."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from collections.abc import Awaitable

GC_THRESHOLDS = (50_000, 20, 10)


def tune_gc() -> None:
    """Run the cyclic garbage collector less often.

    kubesched holds many small, long-lived, reference-free objects (API objects and their views).
    At Python's default thresholds the collector rescans them every few hundred allocations and
    costs more than half of the store's create+bind time (docs/performance.md). Objects alive at
    start-up are frozen out of the collector's view.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


async def until_stopped(work: Awaitable[object], *, duration: float | None = None) -> None:
    """Await `work` until it ends, or cancel it when SIGINT or SIGTERM arrives or `duration`
    seconds have passed: how a command that serves or follows until interrupted stops cleanly."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, task.cancel)
    if duration is not None:
        loop.call_later(duration, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task
