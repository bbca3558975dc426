"""`kubesched ui`: the web UI over what is not live: a recorded run (a `--trace` file) replayed at
any moment of it, a `kubesched compare` report side by side, and a sweep's results, any point of
which is run again to be replayed; served until interrupted. The drills and `compare` serve theirs
the same way with `--ui`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

from aiohttp import web
from rich.console import Console

from kubesched import ui
from kubesched.cli import options
from kubesched.whatif.sweep import results
from kubesched.whatif.sweep.spec import SweepError

DEFAULT_BIND = "127.0.0.1:10260"


def add_ui_options(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--ui", action="store_true", help=f"then serve {what} in the web UI until interrupted")
    parser.add_argument("--ui-bind", default=DEFAULT_BIND, help=f"with --ui: HOST:PORT (default {DEFAULT_BIND})")


def ui_command(console: Console, args: argparse.Namespace) -> int:
    if not args.trace_file and not args.compare and not args.sweep:
        options.print_error(console, "kubesched ui: give a recorded trace, --compare REPORT, --sweep DIR, or several")
        return 2
    try:
        recording = ui.Recording.load(Path(args.trace_file)) if args.trace_file else None
        report = ui.load_comparison(Path(args.compare)) if args.compare else None
        table = results.load(Path(args.sweep)) if args.sweep else None
        bind = options.host_port("--bind", args.bind)
    except (ui.RecordingError, ui.ComparisonError, SweepError, options.UsageError) as e:
        options.print_error(console, str(e))
        return 2
    sweep = (Path(args.sweep), table) if table is not None else None
    return serve(console, bind, recording=recording, comparison=report, sweep=sweep)


def serve(
    console: Console,
    bind: tuple[str, int],
    *,
    recording: ui.Recording | None = None,
    comparison: dict[str, Any] | None = None,
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


def add_parser(sub: Any, name: str, help: str) -> None:
    replay = sub.add_parser(name, help=help)
    replay.set_defaults(run=ui_command)
    replay.add_argument("trace_file", metavar="TRACE", nargs="?", help="a trace written with --trace (JSON lines)")
    replay.add_argument("--compare", metavar="REPORT", help="a report of kubesched compare --output json")
    replay.add_argument(
        "--sweep", metavar="DIR", help="a sweep's results directory (kubesched sweep --out): any point replayed"
    )
    replay.add_argument("--bind", default=DEFAULT_BIND, help=f"HOST:PORT to serve on (default {DEFAULT_BIND})")
