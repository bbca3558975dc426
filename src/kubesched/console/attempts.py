"""A pod's scheduling attempt as `kubesched explain` prints it: the verdicts, the scores and the
preemption, each part beside the kube-scheduler code that does it."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.clock.base import rfc3339
from kubesched.console.tables import print_table
from kubesched.trace.upstream import cite, extension_point

TOP = 5  # scored nodes shown in the table


def _cite(symbol: str) -> str:
    return _dim(cite(symbol))


def _dim(site: str) -> str:
    return f"[dim]({escape(site)})[/dim]"


# Any: an attempt as `kubesched explain` documents it (the attempt record's JSON), read by its keys
def print_attempt(
    console: Console, key: str, attempt: dict[str, Any], *, kept: int, node: str | None = None, every: bool = False
) -> None:
    """An attempt as a table and sentences, each part beside the kube-scheduler code that does it.
    `node`: that node in full; `every`: every node of each Filter group."""
    console.print(
        f"{key}: attempt {attempt['attempt']} (of {kept} kept) at {rfc3339(attempt['time'])}, "
        f"profile {attempt['profile']}: {attempt['result']}",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )
    if attempt.get("message"):
        console.print(f"  {escape(attempt['message'])} {_cite('FitError.Error')}", soft_wrap=True, highlight=False)
    if attempt.get("nominatedNodeFirst"):
        console.print(
            f"  {attempt['numAllNodes']} nodes; the nominated node {attempt['nominatedNodeFirst']} was filtered first "
            f"and passed: no search {_cite('findNodesThatFitPod')}",
            highlight=False,
        )
    else:
        console.print(
            f"  {attempt['numAllNodes']} nodes, numFeasibleNodesToFind {attempt['numFeasibleNodesToFind']} "
            f"{_cite('numFeasibleNodesToFind')}, from index {attempt['startIndex']}: "
            f"{attempt['evaluatedNodes']} evaluated, {attempt['feasibleNodes']} feasible "
            f"{_cite('findNodesThatFitPod')}",
            highlight=False,
        )
    if node is not None:
        _print_node(console, attempt, node)
        return
    if attempt["filter"]:
        _print_filter(console, attempt["filter"], every=every)
    if attempt.get("closestToFitting"):
        console.print(f"Closest to fitting, now {_cite('fitsRequest')}:", highlight=False)
        for entry in attempt["closestToFitting"]:
            short = ", ".join(f"{amount} {name}" for name, amount in entry["short"].items())
            console.print(f"  {entry['node']}: {short} short", highlight=False)
    if attempt.get("scores"):
        _print_scores(console, attempt)
    if attempt.get("skippedScorePlugins"):
        console.print(
            f"  skipped at PreScore: {', '.join(attempt['skippedScorePlugins'])} {_cite('PreScorePlugin')}",
            highlight=False,
        )
    if attempt.get("preemption"):
        _print_preemption(console, attempt["preemption"])
    for point, verdict in attempt.get("outcomes", {}).items():
        reasons = "; ".join(verdict.get("reasons", []))
        console.print(
            f"  {point}: {verdict['code']}"
            + (f" ({escape(reasons)})" if reasons else "")
            + f" {_dim(extension_point(point))}",
            highlight=False,
        )


# Any: the attempt's Filter groups, read by their keys
def _print_filter(console: Console, groups: list[dict[str, Any]], *, every: bool) -> None:
    """The nodes Filter ruled out, grouped by plugin and reasons (eight names a group unless `every`)."""
    table = Table(
        title=f"Filter: the nodes ruled out {_cite('FilterPlugin')}", box=box.SIMPLE_HEAD, title_justify="left"
    )
    for column in ("NODES", "PLUGIN", "REASONS", "WHICH"):
        table.add_column(column, overflow="fold")
    for group in groups:
        nodes: list[str] = group.get("nodes") or []
        shown = nodes if every else nodes[:8]
        which = ", ".join(shown) + (f" and {len(nodes) - 8} more" if len(shown) < len(nodes) else "")
        count = group.get("count", len(nodes))
        table.add_row(str(count), group["plugin"] or "-", "; ".join(group["reasons"]), which or "(not listed)")
    print_table(console, table)
    console.print("  One node in full: --node NAME; every node of each group: --all-nodes", style="dim")


# Any: an attempt's JSON, as `print_attempt`
def _print_node(console: Console, attempt: dict[str, Any], node: str) -> None:
    """One node's part in the attempt: the Filter verdict that ruled it out, or its scores."""
    for group in attempt["filter"]:
        if node in (group.get("nodes") or ()):
            console.print(
                f"{node}: ruled out by {group['plugin'] or '-'} at Filter: {escape('; '.join(group['reasons']))} "
                f"{_cite('FilterPlugin')}",
                highlight=False,
            )
            return
    scored = next((s for s in attempt.get("scores", ()) if s["node"] == node), None)
    if scored is not None:
        table = Table(
            title=f"{node}: passed Filter; its scores {_cite('ScorePlugin')}", box=box.SIMPLE_HEAD, title_justify="left"
        )
        for column in ("PLUGIN", "RAW", "NORMALIZED", "WEIGHT", "WEIGHTED"):
            table.add_column(column, justify="right" if column != "PLUGIN" else "left")
        for plugin, c in scored["plugins"].items():
            table.add_row(plugin, str(c["raw"]), str(c["normalized"]), str(c["weight"]), str(c["weighted"]))
        table.add_row("TOTAL", "", "", "", str(scored["total"]), end_section=True)
        print_table(console, table)
        chosen = " (the chosen node)" if node == attempt.get("selectedNode") else ""
        console.print(f"  rank {_rank(attempt['scores'], node)} of {len(attempt['scores'])}{chosen}", highlight=False)
        return
    if node in (attempt.get("selectedNode"), attempt.get("nominatedNodeFirst")):
        console.print(f"{node}: passed Filter and was chosen without scoring", highlight=False)
        return
    console.print(
        f"{node}: no verdict kept: it passed Filter unscored, or the search stopped before it "
        f"(numFeasibleNodesToFind {attempt['numFeasibleNodesToFind']}), or it is not a node of this attempt",
        highlight=False,
    )


# Any: an attempt's scored nodes, read by their keys
def _rank(scores: list[dict[str, Any]], node: str) -> int:
    totals = {s["node"]: s["total"] for s in scores}
    return 1 + sum(1 for total in totals.values() if total > totals[node])


# Any: an attempt's preemption, read by its keys
def _print_preemption(console: Console, p: dict[str, Any]) -> None:
    console.print(
        f"Preemption {_cite('PostFilterPlugin')}: candidates from the dry run {_cite('DryRunPreemption')}",
        highlight=False,
    )
    for c in p["candidates"]:
        console.print(
            f"  {c['node']}: victims {', '.join(c['victims']) or '-'}; {c['pdbViolations']} PDB violation(s)",
            highlight=False,
        )
    console.print(
        f"  chose {p['nominatedNode']}: {p['reason'] or 'the only candidate'} {_cite('pickOneNodeForPreemption')}",
        highlight=False,
    )
    kept = f"; reprieved (put back, the pod still fit): {', '.join(p['reprieved'])}" if p.get("reprieved") else ""
    console.print(
        f"  victims on {p['nominatedNode']}: {', '.join(p['victims']) or '-'}{kept} {_cite('SelectVictimsOnNode')}",
        highlight=False,
    )
    console.print(f"  nominated: status.nominatedNodeName = {p['nominatedNode']}", highlight=False)


# Any: an attempt's JSON, as `print_attempt`
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
    print_table(console, table)
    console.print(
        f"  each plugin's score {_cite('ScorePlugin')}, normalized {_cite('ScoreExtensions')}, "
        f"at most {_cite('MaxScore')}; the host {_cite('sortedNodeScores')}",
        highlight=False,
    )
    decision = attempt.get("decision")
    if decision:
        decided = ", ".join(f"{p} (+{decision['differences'][p]})" for p in decision["decidedBy"]) or "the tie-break"
        console.print(
            f"{attempt['selectedNode']} beat {decision['runnerUp']} by {decision['margin']}: decided by {decided}",
            highlight=False,
        )
    if len(attempt.get("topNodes", ())) > 1:
        console.print(f"  tied at the top: {', '.join(attempt['topNodes'])} (one picked at random)", highlight=False)
