"""`kubesched ui TRACE`: a recorded run (a `--trace` file) replayed in the web UI, at any moment of
it, until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from pathlib import Path

from aiohttp import web
from rich.console import Console

from kubesched.cli import options
from kubesched.ui import Recording, RecordingError, mount_replay


def ui_command(console: Console, args: argparse.Namespace) -> int:
    try:
        recording = Recording.load(Path(args.trace_file))
        host, port = options.host_port("--bind", args.bind)
    except (RecordingError, options.UsageError) as e:
        options.print_error(console, str(e))
        return 2
    app = web.Application()
    mount_replay(app, recording)

    async def serve() -> int:
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
        span = recording.end - recording.start
        console.print(f"Replaying {len(recording.records)} records ({span:.1f} s) of {args.trace_file} at {url}")
        console.print("Press Ctrl-C to stop.")
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
        finally:
            await runner.cleanup()
        return 0

    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(serve())
    return 0
