"""`kubesched ui`: the web UI over what is not live: a recorded run (a `--trace` file) replayed at
any moment of it, a `kubesched compare` report side by side, and a sweep's results, any point of
which is run again to be replayed; served until interrupted. The drills and `compare` serve theirs
the same way with `--ui`."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from kubesched import ui
from kubesched.cli.commands import Subparsers
from kubesched.console import options
from kubesched.console.serving import serve
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


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    replay = sub.add_parser(name, help=help)
    replay.set_defaults(run=ui_command)
    replay.add_argument("trace_file", metavar="TRACE", nargs="?", help="a trace written with --trace (JSON lines)")
    replay.add_argument("--compare", metavar="REPORT", help="a report of kubesched compare --output json")
    replay.add_argument(
        "--sweep", metavar="DIR", help="a sweep's results directory (kubesched sweep --out): any point replayed"
    )
    replay.add_argument("--bind", default=DEFAULT_BIND, help=f"HOST:PORT to serve on (default {DEFAULT_BIND})")
