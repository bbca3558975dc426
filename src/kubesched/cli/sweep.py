"""`kubesched sweep SPEC`: a sweep file's points run on every core (or on a Ray cluster), each
kept the moment it finishes; `kubesched sweep report DIR`: the best points, a Pareto front, plots."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table as RichTable

from kubesched.cli.commands import Subparsers
from kubesched.console import options
from kubesched.console.tables import print_table
from kubesched.scheduler.discovery import PluginLoadError, plugin_registry
from kubesched.whatif.scenario.fields import ScenarioError
from kubesched.whatif.sweep import plan as plans
from kubesched.whatif.sweep import report as reports
from kubesched.whatif.sweep.executors import EXECUTORS, LOCAL, ExecutorError, cores, executor
from kubesched.whatif.sweep.metrics import BUILTIN, WALL, Metric, declared
from kubesched.whatif.sweep.results import ResultsDir, Table, load
from kubesched.whatif.sweep.simulate import OK, PointResult
from kubesched.whatif.sweep.spec import LATIN_HYPERCUBE, RANDOM, SAMPLINGS, Point, Sweep, SweepError
from kubesched.whatif.sweep.spec import load as load_sweep

COMMANDS = ("run", "report")
LISTED = ("placed", "unplaced", "waitP99", "nodesUsed", "cpuUtilisation", "zoneSkew")  # the listing's metrics


def normalised(argv: Sequence[str]) -> list[str]:
    """`kubesched sweep SPEC ...` is `kubesched sweep run SPEC ...`."""
    argv = list(argv)
    if len(argv) >= 2 and argv[0] == "sweep" and argv[1] not in (*COMMANDS, "-h", "--help"):
        argv.insert(1, "run")
    return argv


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    sweep = sub.add_parser(name, help=help)
    sweep.set_defaults(run=sweep_command)
    sweep_sub = sweep.add_subparsers(dest="sweep_command", required=True)
    run = sweep_sub.add_parser(
        "run",
        help="run a sweep file's points (also: kubesched sweep SPEC)",
        description="Every point of the sweep (one value of each axis) is a simulation of its own on virtual time: "
        "the cluster, the workload's pods arriving, the scheduler placing them, until every pod is bound or the "
        "horizon. Each finished point is written to DIR/points.jsonl at once; at the end the table is written as "
        "CSV, JSON and Parquet. Exit status: 0 when every point ran, 1 when some failed (each says why), 2 for a "
        "sweep that cannot run, 130 when interrupted (--resume goes on).",
    )
    run.add_argument("spec", metavar="SPEC", help="the sweep file (YAML)")
    run.add_argument("--out", metavar="DIR", help="the results directory (default: <sweep name>.sweep)")
    run.add_argument(
        "--resume", action="store_true", help="go on with the results in DIR: run only the points not done"
    )
    run.add_argument("--force", action="store_true", help="start over, removing the results already in DIR")
    run.add_argument("--executor", choices=EXECUTORS, default=LOCAL, help="local processes (default) or a Ray cluster")
    run.add_argument(
        "--workers", type=int, metavar="N", help=f"local: processes at once (default: the cores, {cores()})"
    )
    run.add_argument(
        "--address", metavar="ADDR", help="ray: the cluster's address (default: auto, as ray start set it)"
    )
    run.add_argument("--samples", type=int, metavar="N", help="run N points drawn from the product instead of all")
    run.add_argument(
        "--sampling", choices=SAMPLINGS, default=RANDOM, help=f"with --samples: {RANDOM} (default) or {LATIN_HYPERCUBE}"
    )
    run.add_argument(
        "--sample-seed", type=int, default=0, metavar="N", help="with --samples: the draw's seed (default 0)"
    )
    run.add_argument("--timeout", metavar="DURATION", help="local: a point running longer than this fails")
    run.add_argument("--list", action="store_true", help="list the points (index and coordinates) and stop")
    options.add_output_option(run, "the sweep's outcome: points run, failed, where the results are")

    rep = sweep_sub.add_parser(
        "report",
        help="a sweep's results: best configuration per metric, a Pareto front, plots",
        description="Points differing only on seed axes (path: seed) are taken together: each configuration's "
        "metric is the mean over its seeds, shown with its range.",
    )
    rep.add_argument("results", metavar="DIR", help="the results directory a sweep wrote")
    rep.add_argument("--metric", action="append", default=[], metavar="NAME", help="these metrics (repeatable)")
    rep.add_argument("--pareto", metavar="X,Y", help="the Pareto front of two metrics")
    rep.add_argument("--plots", metavar="DIR", help="write PNG and SVG plots there (metric by axis, heat map, front)")
    rep.add_argument("--heatmap", metavar="AXIS,AXIS", help="with --plots: a heat map of each metric over two axes")
    rep.add_argument(
        "--over",
        action="append",
        default=[],
        metavar="AXIS",
        help="take points together over this axis too, as over the seeds (repeatable): e.g. the cluster sizes",
    )
    rep.add_argument("--top", type=int, default=10, metavar="N", help="configurations listed (default 10)")
    options.add_output_option(rep, "groups, best per metric, Pareto front, plots written")


def sweep_command(console: Console, args: argparse.Namespace) -> int:
    if args.sweep_command == "report":
        return _report(console, args)
    return _run(console, args)


# -- run -------------------------------------------------------------------------------------------


def _prepare(args: argparse.Namespace) -> tuple[Sweep, list[Point], list[Metric]]:
    sweep = load_sweep(args.spec)
    points = sweep.points(samples=args.samples, sampling=args.sampling, seed=args.sample_seed)
    try:  # what every point shares is checked once, here, before any runs
        plan = plans.read(sweep.resolve(points[0]), sweep.root)
        plugin_registry(plan.plugins)
        metrics = [*BUILTIN, *declared(plan.metrics), WALL]
    except (ScenarioError, PluginLoadError) as e:
        raise SweepError(f"{sweep.path}: {e}") from None
    return sweep, points, metrics


def _run(console: Console, args: argparse.Namespace) -> int:
    try:
        sweep, points, metrics = _prepare(args)
        if args.workers is not None:
            options.at_least("--workers", args.workers, 1)
        timeout = options.seconds("--timeout", args.timeout) if args.timeout else None
    except (SweepError, options.UsageError) as e:
        options.print_error(console, str(e))
        return 2
    if args.list:
        _print_points(console, points)
        return 0
    out = Path(args.out or f"{sweep.name}.sweep")
    results = ResultsDir(out)
    try:
        done = results.start(sweep, points, metrics, resume=args.resume, force=args.force)
        runner = executor(args.executor, workers=args.workers, address=args.address, timeout=timeout)
    except (SweepError, ExecutorError, OSError) as e:
        options.print_error(console, str(e))
        return 2
    todo = [p for p in points if p.index not in done]
    jobs = [sweep.job(p) for p in todo]
    said = Console(stderr=True)
    if done:
        said.print(f"resuming: {len(done)} of {len(points)} points already in {out}", highlight=False)
    began = time.perf_counter()
    finished: list[PointResult] = list(done.values())
    try:
        with _Progress(said, len(points), len(done), f"{sweep.name} ({runner.workers} workers)") as progress:
            for data in runner.run(jobs):
                result = PointResult.from_json(data)
                results.append(result)
                finished.append(result)
                progress.advance(failed=result.status != OK)
    except KeyboardInterrupt:
        results.close()
        options.print_error(
            console, f"interrupted: {len(finished)} of {len(points)} points kept in {out}; --resume goes on from there"
        )
        return 130
    results.close()
    wall = time.perf_counter() - began
    files = results.finish()
    failed = [r for r in finished if r.status != OK]
    if args.output == "json":
        document = {
            "sweep": sweep.name,
            "points": len(points),
            "ran": len(jobs),
            "ok": len(finished) - len(failed),
            "failed": [r.to_json() for r in sorted(failed, key=lambda r: r.index)],
            "seconds": round(wall, 3),
            "results": str(out),
            "files": [str(f) for f in files],
        }
        json.dump(document, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        _print_run(console, sweep, points, finished, failed, wall, len(jobs), files)
    return 1 if failed else 0


def _print_points(console: Console, points: list[Point]) -> None:
    for p in points:
        console.print(f"{p.index:6d}  {p.key}", markup=False, highlight=False, soft_wrap=True)


def _print_run(
    console: Console,
    sweep: Sweep,
    points: list[Point],
    finished: list[PointResult],
    failed: list[PointResult],
    wall: float,
    ran: int,
    files: list[Path],
) -> None:
    rate = f", {ran / wall:.2f} points/s" if wall > 0 and ran else ""
    console.print(
        f"sweep {sweep.name}: {len(finished) - len(failed)} of {len(points)} points ran, {len(failed)} failed "
        f"({ran} run now in {wall:.1f}s{rate})",
        highlight=False,
        soft_wrap=True,
    )
    for r in sorted(failed, key=lambda r: r.index)[:10]:
        console.print(
            f"  FAILED point {r.index} {json.dumps(r.coordinates, default=str)}: {r.error}",
            markup=False,
            soft_wrap=True,
        )
    if len(failed) > 10:
        console.print(f"  ... and {len(failed) - 10} more (see points.jsonl)", highlight=False)
    for f in files:
        console.print(f"  wrote {f}", highlight=False, soft_wrap=True)
    console.print(f"  kubesched sweep report {files[0].parent} --plots {files[0].parent / 'plots'}", highlight=False)


class _Progress:
    """A bar with the points done, failed and the time left, on a terminal; elsewhere a line at
    each tenth of the way."""

    def __init__(self, console: Console, total: int, done: int, title: str) -> None:
        self.console, self.total, self.done, self.failed = console, total, done, 0
        self.began = time.monotonic()
        self.first = done
        self.next_line = 0
        self.bar: Progress | None = None
        if console.is_terminal:
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failed]} failed"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
            )
            self.task = self.bar.add_task(title, total=total, completed=done, failed=0)

    def __enter__(self) -> _Progress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def advance(self, *, failed: bool) -> None:
        self.done += 1
        self.failed += failed
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, failed=self.failed)
            return
        if self.done * 10 >= self.next_line * self.total or self.done == self.total:
            self.next_line = self.done * 10 // self.total + 1
            elapsed = time.monotonic() - self.began
            ran = self.done - self.first
            eta = elapsed / ran * (self.total - self.done) if ran else 0.0
            self.console.print(
                f"{self.done}/{self.total} points, {self.failed} failed, {elapsed:.0f}s elapsed, ETA {eta:.0f}s",
                highlight=False,
            )


# -- report ----------------------------------------------------------------------------------------


def _pair(option: str, text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    first, comma, second = text.partition(",")
    if not comma or not first or not second or "," in second:
        raise SweepError(f"{option}: expected two names with a comma between, got {text!r}")
    return first.strip(), second.strip()


def _report(console: Console, args: argparse.Namespace) -> int:
    try:
        table = load(Path(args.results))
        metrics = args.metric or [m["name"] for m in table.metrics if m["name"] != WALL.name]
        for m in metrics:
            reports.better_of(table, m)
        front_metrics = _pair("--pareto", args.pareto)
        heat = _pair("--heatmap", args.heatmap)
        if heat is not None and not args.plots:
            raise SweepError("--heatmap: goes with --plots DIR")
        for axis in args.over:
            if axis not in table.axes:
                raise SweepError(f"--over: {axis!r} is not an axis of this sweep (it has {', '.join(table.axes)})")
        over = [*reports.seed_axes(table), *args.over]
        found = reports.groups(table, over=over)
        best = reports.best(table, found, metrics)
        front = reports.pareto(table, found, *front_metrics) if front_metrics else []
        plotted = (
            reports.plots(table, Path(args.plots), metrics=metrics, heatmap=heat, front=front_metrics, over=over)
            if args.plots
            else []
        )
    except (SweepError, OSError) as e:
        options.print_error(console, str(e))
        return 2
    if args.output == "json":
        document = {
            "sweep": table.meta["name"],
            "groupedOver": over,
            "groups": [g.to_json() for g in found],
            "best": [{"metric": m, "better": reports.better_of(table, m), **g.to_json()} for m, g in best],
            "pareto": [g.to_json() for g in front],
            "plots": [str(p) for p in plotted],
        }
        json.dump(document, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    _print_report(console, table, found, best, front, front_metrics, metrics, plotted, args.top, over)
    return 0


def _cell(group: reports.Group, metric: str) -> str:
    summary = group.metrics.get(metric)
    if summary is None:
        return "-"
    spread = f" ({summary.low:.4g}-{summary.high:.4g})" if summary.count > 1 and summary.low != summary.high else ""
    return f"{summary.mean:.4g}{spread}"


def _print_report(
    console: Console,
    table: Table,
    found: list[reports.Group],
    best: list[tuple[str, reports.Group]],
    front: list[reports.Group],
    front_metrics: tuple[str, str] | None,
    metrics: list[str],
    plotted: list[Path],
    top: int,
    over: list[str],
) -> None:
    ok = sum(1 for r in table.results if r.status == OK)
    console.print(
        f"sweep {table.meta['name']}: {len(table.results)} of {table.meta['points']} points, {ok} ran; "
        f"{len(found)} configurations" + (f" (mean over {', '.join(over)})" if over else ""),
        highlight=False,
        soft_wrap=True,
    )
    summary = RichTable(title="best configuration per metric", title_justify="left")
    for column in ("metric", "better", "value (range)", "configuration"):
        summary.add_column(column, overflow="fold")
    for metric, group in best:
        summary.add_row(metric, reports.better_of(table, metric), _cell(group, metric), group.label)
    print_table(console, summary)
    if front_metrics is not None:
        x, y = front_metrics
        pareto = RichTable(title=f"Pareto front of {x} and {y}", title_justify="left")
        for column in (x, y, "configuration"):
            pareto.add_column(column, overflow="fold")
        for g in front:
            pareto.add_row(_cell(g, x), _cell(g, y), g.label)
        print_table(console, pareto)
    listing = RichTable(title=f"configurations (first {min(top, len(found))} of {len(found)})", title_justify="left")
    axes = list(found[0].coordinates) if found else []
    shown = [m for m in metrics if m in LISTED] if len(metrics) > len(LISTED) else metrics
    for column in (*axes, *shown, "failed"):
        listing.add_column(column, overflow="fold")
    for g in found[:top]:
        listing.add_row(*(reports.shown(g.coordinates[a]) for a in axes), *(_cell(g, m) for m in shown), str(g.failed))
    print_table(console, listing)
    if plotted:
        folder = plotted[0].parent
        console.print(f"wrote {len(plotted)} plots (PNG and SVG) to {folder}", highlight=False, soft_wrap=True)
