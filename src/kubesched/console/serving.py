"""The web UI served from a terminal until interrupted: over a recorded run, a comparison, a sweep."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

from aiohttp import web
from rich.console import Console

from kubesched import ui
from kubesched.console import options
from kubesched.whatif.sweep import results


def serve(
    console: Console,
    bind: tuple[str, int],
    *,
    recording: ui.Recording | None = None,
    comparison: dict[str, Any] | None = None,  # Any: a compare report, read by its keys
    sweep: tuple[Path, results.Table] | None = None,
) -> int:
    """Serve the pages over `recording`, `comparison` and/or `sweep` (a results directory and
    what it held at the start) on `bind` until interrupted (0); a port that cannot be listened on
    is one line and 2."""
    app = web.Application()
    if recording is not None:
        ui.mount_replay(app, recording)
    if sweep is not None:
        ui.mount_sweep(app, sweep[0])
    if recording is None and sweep is None:
        ui.serve_pages(app)
    if comparison is not None:
        ui.mount_comparison(app, comparison)
    host, port = bind

    async def run() -> int:
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as e:
            await runner.cleanup()
            why = os.strerror(e.errno) if e.errno else str(e)
            options.print_error(console, f"--bind: cannot listen on {host}:{port}: {why}")
            return 2
        url = f"http://{host}:{runner.addresses[0][1]}/ui/"
        if recording is not None:
            span = recording.end - recording.start
            console.print(f"Replaying {len(recording.records)} trace records ({span:.1f} s of virtual time) at {url}")
        if comparison is not None:
            console.print(f"The comparison of {len(comparison['configs'])} configurations at {url}#/compare")
        if sweep is not None:
            meta, done = sweep[1].meta, len(sweep[1].results)
            points = f"{done} of {meta.get('points', done)} points"
            console.print(f"The sweep {meta.get('name', '')} ({points} finished) at {url}#/sweep")
        console.print("Press Ctrl-C to stop.")
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
        finally:
            await runner.cleanup()
        return 0

    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(run())
    return 0
