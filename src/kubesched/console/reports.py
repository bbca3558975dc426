"""Reports as the terminal shows them: a burst of the from-scratch scheduler's, a comparison of
configurations."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from kubesched.api.quantity import milli_value
from kubesched.console.tables import print_table
from kubesched.workloads.burst import BurstResult
from kubesched.workloads.compare import Report, bars, summary


def print_minimal_report(console: Console, result: BurstResult) -> None:
    table = Table(title="Placements", show_lines=False)
    for col in ("pod", "cpu request", "node", "free cpu the scheduler saw", "phase"):
        table.add_column(col)
    for p in result.placements:
        seen = f"{p.free_cpu_seen}m" if p.free_cpu_seen is not None else "-"
        phase = f"[red]{p.phase} ({p.reason})[/red]" if p.phase == "Failed" else p.phase
        table.add_row(p.pod, p.cpu, p.node or "-", seen, phase)
    print_table(console, table)

    per_node = Table(title="Nodes")
    for col in ("node", "allocatable cpu", "pods bound", "cpu requested by bound pods"):
        per_node.add_column(col)
    for node, cpu in result.nodes.items():
        bound = [p for p in result.placements if p.node == node]
        requested = sum(milli_value(p.cpu) for p in bound)
        style = "[red]" if requested > cpu else ""
        per_node.add_row(node, f"{cpu}m", str(len(bound)), f"{style}{requested}m")
    print_table(console, per_node)

    if result.rejected:
        rej = Table(title="Rejected by the kubelet")
        for col in ("pod", "node", "reason", "message"):
            rej.add_column(col)
        for p in result.rejected:
            rej.add_row(p.pod, p.node or "-", p.reason or "", p.message or "")
        print_table(console, rej)
        console.print(
            f"[bold red]{len(result.rejected)} of {len(result.placements)} pods were bound to a node that had no "
            "room for them.[/bold red] The scheduler never subtracted its own bindings; it waited for the watch "
            "to tell it. kube-scheduler assumes each pod into its cache before binding (docs/minimal.md)."
        )
    else:
        console.print(f"[green]All {len(result.bound)} bound pods were admitted by their kubelets.[/green]")


def print_reports(console: Console, name: str, description: str, reports: list[Report]) -> None:
    """The comparison as `kubesched compare` prints it: the summary, then each configuration's nodes."""
    console.print(f"[bold]{name}[/bold]: {description}", soft_wrap=True)
    table = Table(title="Summary")
    table.add_column("")
    for r in reports:
        table.add_column(r.config)
    for label, cells in summary(reports):
        table.add_row(label, *cells)
    print_table(console, table)
    for r in reports:
        console.print(f"\n[bold]{r.config}[/bold] (schedulerName {r.scheduler_name})")
        for node in r.nodes:
            console.print(
                f"  {node.name:<14} {bars(node.cpu_utilisation)} {node.cpu_requested}m/{node.cpu_allocatable}m cpu, "
                f"{len(node.pods)} pods",
                markup=False,
                highlight=False,
            )
        for message, count in r.messages.items():
            console.print(f"  pending x{count}: {message}", markup=False, highlight=False, soft_wrap=True)
        for namespace, quota in r.quotas.items():
            high = "none" if quota["cpuMax"] < 0 else f"{quota['cpuMax']}m"
            console.print(f"  quota {namespace}: {quota['cpuUsed']}m cpu used, min {quota['cpuMin']}m, max {high}")
