"""`kubesched drill c1..c4`: a drill run, narrated or as JSON, its trace written or served in the UI."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from rich.console import Console

from kubesched.cli.commands import Subparsers
from kubesched.cli.ui import add_ui_options
from kubesched.console import options
from kubesched.console.serving import serve as serve_ui
from kubesched.lab.drill import print_c1, print_c2, print_c3, print_c4, run_c1, run_c2, run_c3, run_c4
from kubesched.trace import ListSink
from kubesched.ui import Recording

DRILL_JSON: dict[str, Callable[[argparse.Namespace], dict[str, object]]] = {  # c1 and c2: `drill_main` runs them
    "c3": lambda args: {"ignore": run_c3().to_json(), "honor": run_c3(taints_policy="Honor").to_json()},
    "c4": lambda args: {"race": run_c4().to_json(), "crash": run_c4(crash=True).to_json()},
}


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    drill = sub.add_parser(name, help=help)
    drill.set_defaults(run=drill_main)
    drill.add_argument(
        "name",
        choices=["c1", "c2", "c3", "c4"],
        help="c1: the unschedulable backlog, diagnosed and followed out of unschedulablePods; "
        "c2: preemption with real victims; c3: unschedulable for a reason that is not scarcity; "
        "c4: two schedulers, one pod",
    )
    drill.add_argument("--seed", type=int, default=1, help="c1: the scheduler's and the store's seed (default 1)")
    drill.add_argument(
        "--trace",
        metavar="FILE",
        help="c1, c2: write every trace record to FILE as JSON lines (kubesched ui replays it)",
    )
    options.add_output_option(drill, "the drill's narration and its measurements")

    add_ui_options(drill, "c1's or c2's recorded run")


def drill_main(console: Console, args: argparse.Namespace) -> int:
    if (args.trace or args.ui) and args.name not in ("c1", "c2"):
        given = "--trace" if args.trace else "--ui"
        options.print_error(console, f"{given}: drill {args.name} keeps no trace to replay (c1 and c2 do)")
        return 2
    bind = options.host_port("--ui-bind", args.ui_bind) if args.ui else None
    kept = ListSink()
    with options.trace_sinks(args.trace) as written:
        sinks = [*written, kept] if args.ui else written
        if args.name == "c1":
            backlog = run_c1(seed=args.seed, sinks=sinks)
            if args.output == "json":
                _dump(backlog.to_json())
            else:
                print_c1(console, backlog)
        elif args.name == "c2":
            story = run_c2(sinks=sinks)
            if args.output == "json":
                _dump({"free": story.to_json(), "pdb": run_c2(pdb_blocks=True).to_json()})
            else:
                print_c2(console, story)
        elif args.output == "json":
            _dump(DRILL_JSON[args.name](args))
        else:
            {"c3": print_c3, "c4": print_c4}[args.name](console)
    if bind is not None:
        return serve_ui(console, bind, recording=Recording(kept.records, name=f"drill {args.name}"))
    return 0


def _dump(document: object) -> None:
    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")
