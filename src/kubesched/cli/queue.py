"""`kubesched queue`: the pending pods of a running scheduler (`--url`), or of kubesched's scheduler
at the end of a short simulation on virtual time."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from kubesched.cli.commands import Subparsers
from kubesched.cli.remote import FetchError, get_json
from kubesched.console import options
from kubesched.console.tables import print_table
from kubesched.scheduler.server import queue_document
from kubesched.workloads.burst import GATE, KUBESCHED, BurstResult, run_burst

HUGE = ("huge", "6")  # (name, cpu): more CPU than a default fake node has
GATED = ("gated", "250m")  # (name, cpu): held by the scheduling gate GATE


# Any: the queue document (`queue_document`), as the scheduler's /debug/queue answers it
def fetch(url: str) -> dict[str, Any]:
    """URL/debug/queue, checked to be a queue document."""
    document = get_json(url, "/debug/queue")
    if not isinstance(document, dict) or not {"pending", "pods"} <= document.keys():
        raise FetchError("/debug/queue did not answer a queue document")
    return document


def simulation(args: argparse.Namespace, *, horizon: float, explain: Sequence[str] = ()) -> BurstResult:
    """kubesched's scheduler for `horizon` virtual seconds on `--nodes` fake nodes with `--pods`
    small pods (`--seed`), `huge` and `gated` (what `kubesched queue` and `explain` look at)."""
    return run_burst(
        scheduler=KUBESCHED,
        nodes=options.at_least("--nodes", args.nodes, 1),
        pods=options.at_least("--pods", args.pods, 0),
        seed=args.seed,
        horizon=horizon,
        extra_pods=[HUGE],
        extra_gated=[GATED],
        explain=explain,
    )


# Any: the queue document (`queue_document`)
def simulate(args: argparse.Namespace) -> dict[str, Any]:
    """Run the default simulation and return its queue at the horizon."""
    if args.horizon <= 0:
        raise options.UsageError("--horizon must be positive")
    result = simulation(args, horizon=args.horizon)
    assert result.queue is not None and result.pending is not None
    return queue_document(result.pending, result.queue)


def queue_command(console: Console, args: argparse.Namespace) -> int:
    if args.url:
        try:
            document = fetch(args.url)
        except FetchError as e:
            options.print_error(console, f"{args.url}: {e}")
            return 1
    else:
        document = simulate(args)
        if args.output == "table":
            console.print(
                f"kubesched's queue after {args.horizon:g} virtual seconds with {_count(args.nodes, 'fake node')}, "
                f"{_count(args.pods, 'small pod')}, {HUGE[0]} (asking for {HUGE[1]} CPUs) and {GATED[0]} "
                f"(held by the scheduling gate {GATE}):",
                soft_wrap=True,
            )
    if args.output == "json":
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_queue(console, document)
        tried = [p["key"] for p in document["pods"] if p["attempts"]]
        if tried:
            where = f" --url {args.url}" if args.url else ""
            console.print(f"A pod's last attempt, node by node: kubesched explain {tried[0]}{where}", highlight=False)
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# Any: the queue document (`queue_document`), read by its keys
def print_queue(console: Console, document: dict[str, Any]) -> None:
    table = Table(box=box.SIMPLE_HEAD)
    for column in ("POD", "QUEUE", "ATTEMPTS"):
        table.add_column(column, no_wrap=True)
    for column in ("BACKOFF UNTIL", "REJECTED BY", "WAKES ON"):
        table.add_column(column, overflow="fold")
    for pod in document["pods"]:
        table.add_row(
            pod["key"],
            pod["queue"],
            str(pod["attempts"]),
            pod["backoff_until"] or "-",
            "\n".join(pod["rejected_by"]) or "-",
            "\n".join(pod["wake_on"]) or "-",
        )
    if document["pods"]:
        print_table(console, table)
    else:
        console.print("No pending pods.")
    counts = ", ".join(f"{count} {name}" for name, count in document["pending"].items())
    console.print(f"Pending: {counts}")


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    queue = sub.add_parser(name, help=help)
    queue.set_defaults(run=queue_command)
    queue.add_argument("--url", help="a running scheduler's endpoint (cluster up --scheduler); default: simulate")
    queue.add_argument("--nodes", type=int, default=3, help="simulation: fake nodes (default 3)")
    queue.add_argument(
        "--pods", type=int, default=12, help="simulation: small pods besides huge and gated (default 12)"
    )
    queue.add_argument("--seed", type=int, default=0, help="simulation: seed (default 0)")
    queue.add_argument("--horizon", type=float, default=30.0, help="simulation: virtual seconds to run (default 30)")
    options.add_output_option(queue, "the pending pods (json: what /debug/queue answers)")
