"""`kubesched explain NAMESPACE/POD`: a pod's scheduling attempts, from a running scheduler
(`--url`, its `/debug/pods/{namespace}/{name}`) or from kubesched's scheduler at the end of the
short simulation `kubesched queue` runs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from kubesched.cli import options
from kubesched.cli.queue import GATED, HUGE, simulation
from kubesched.cli.remote import FetchError, get_json
from kubesched.clock.base import rfc3339

TOP = 5  # scored nodes shown in the table


def explain_command(console: Console, args: argparse.Namespace) -> int:
    namespace, _, name = args.pod.rpartition("/")
    key = f"{namespace or 'default'}/{name}"
    if args.url:
        try:
            document = get_json(args.url, f"/debug/pods/{key}")
        except FetchError as e:
            options.print_error(console, f"{args.url}: {e}")
            return 1
    else:
        document = _simulated(args, key)
        if not document["attempts"]:
            options.print_error(
                console,
                f"{key}: no attempt recorded in the simulation (its pods: default/pod-000 to "
                f"default/pod-{args.pods - 1:03d}, default/{HUGE[0]}, default/{GATED[0]})",
            )
            return 1
    attempts = document["attempts"]
    if args.attempt is not None:
        chosen = [a for a in attempts if a["attempt"] == args.attempt]
        if not chosen:
            kept = ", ".join(str(a["attempt"]) for a in attempts)
            options.print_error(console, f"--attempt {args.attempt}: not kept for {key} (kept: {kept})")
            return 2
        attempts = chosen
    if args.output == "json":
        json.dump({**document, "attempts": attempts}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print_attempt(console, key, attempts[-1], kept=len(document["attempts"]))
    return 0


def _simulated(args: argparse.Namespace, key: str) -> dict[str, Any]:
    result = simulation(args, horizon=30.0, explain=[key])
    return result.explained.get(key) or {"pod": key, "attempts": []}


def print_attempt(console: Console, key: str, attempt: dict[str, Any], *, kept: int) -> None:
    console.print(
        f"{key}: attempt {attempt['attempt']} (of {kept} kept) at {rfc3339(attempt['time'])}, "
        f"profile {attempt['profile']}: {attempt['result']}",
        soft_wrap=True,
        highlight=False,
    )
    if attempt.get("message"):
        console.print(f"  {attempt['message']}", soft_wrap=True, markup=False, highlight=False)
    console.print(
        f"  {attempt['numAllNodes']} nodes, numFeasibleNodesToFind {attempt['numFeasibleNodesToFind']}, "
        f"from index {attempt['startIndex']}: {attempt['evaluatedNodes']} evaluated, "
        f"{attempt['feasibleNodes']} feasible",
        highlight=False,
    )
    if attempt["filter"]:
        table = Table(title="Filter: the nodes ruled out", box=box.SIMPLE_HEAD, title_justify="left")
        for column in ("NODES", "PLUGIN", "REASONS", "WHICH"):
            table.add_column(column, overflow="fold")
        for group in attempt["filter"]:
            nodes = group.get("nodes")
            which = ", ".join(nodes[:8]) + (f" and {len(nodes) - 8} more" if nodes and len(nodes) > 8 else "")
            count = group.get("count", len(nodes or ()))
            table.add_row(str(count), group["plugin"] or "-", "; ".join(group["reasons"]), which or "(not listed)")
        console.print(table)
    if attempt.get("closestToFitting"):
        console.print("Closest to fitting, now:")
        for entry in attempt["closestToFitting"]:
            short = ", ".join(f"{amount} {name}" for name, amount in entry["short"].items())
            console.print(f"  {entry['node']}: {short} short", highlight=False)
    if attempt.get("scores"):
        _print_scores(console, attempt)
    if attempt.get("skippedScorePlugins"):
        console.print(f"  skipped at PreScore: {', '.join(attempt['skippedScorePlugins'])}", highlight=False)
    if attempt.get("preemption"):
        p = attempt["preemption"]
        console.print(
            f"Preemption: nominated {p['nominatedNode']}, victims {', '.join(p['victims']) or '-'} "
            f"({p['reason'] or 'the only candidate'}); {len(p['candidates'])} candidates",
            highlight=False,
        )
    for point, verdict in attempt.get("outcomes", {}).items():
        reasons = "; ".join(verdict.get("reasons", []))
        console.print(f"  {point}: {verdict['code']}" + (f" ({reasons})" if reasons else ""), highlight=False)


def _print_scores(console: Console, attempt: dict[str, Any]) -> None:
    scores = sorted(attempt["scores"], key=lambda s: -s["total"])[:TOP]
    table = Table(
        title=f"Score: the top {len(scores)} of {len(attempt['scores'])} scored nodes (raw -> normalized x weight)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    table.add_column("PLUGIN")
    for s in scores:
        table.add_column(s["node"] + (" *" if s["node"] == attempt.get("selectedNode") else ""), justify="right")
    for plugin in scores[0]["plugins"]:
        cells = (s["plugins"][plugin] for s in scores)
        table.add_row(plugin, *(f"{c['raw']} -> {c['normalized']} x {c['weight']}" for c in cells))
    table.add_row("TOTAL", *(str(s["total"]) for s in scores), end_section=True)
    console.print(table)
    decision = attempt.get("decision")
    if decision:
        decided = ", ".join(f"{p} (+{decision['differences'][p]})" for p in decision["decidedBy"]) or "the tie-break"
        console.print(
            f"{attempt['selectedNode']} beat {decision['runnerUp']} by {decision['margin']}: decided by {decided}",
            highlight=False,
        )
    if len(attempt.get("topNodes", ())) > 1:
        console.print(f"  tied at the top: {', '.join(attempt['topNodes'])} (one picked at random)", highlight=False)
