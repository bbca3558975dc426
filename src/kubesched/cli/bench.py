"""`kubesched bench`: upstream's scheduler_perf test cases on the memory cluster, measured as
scheduler_perf measures them, beside upstream's CI threshold; `--repeat` for medians and ranges,
`--profile` for where the time goes."""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import multiprocessing
import pstats
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from rich.console import Console
from rich.table import Table

from kubesched.api import yamlfile
from kubesched.cli.commands import Subparsers
from kubesched.cli.runtime import tune_gc
from kubesched.cli.ui import add_ui_options
from kubesched.config import ConfigError
from kubesched.console import options
from kubesched.console.serving import serve as serve_ui
from kubesched.console.tables import print_table
from kubesched.framework import FrameworkError
from kubesched.trace import ListSink, Sink
from kubesched.ui import Recording
from kubesched.workloads.cases import CASES, NOT_REPRODUCED, Selected, select
from kubesched.workloads.collector import SUB_SECOND, Throughput
from kubesched.workloads.runner import Stalled, run

PROFILE_LINES = 40  # functions in a --profile report


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    bench = sub.add_parser(name, help=help)
    bench.set_defaults(run=bench_command)
    bench.add_argument(
        "workload",
        nargs="?",
        metavar="TESTCASE[/WORKLOAD]",
        help="e.g. SchedulingBasic/5000Nodes_10000Pods (a test case alone: its first workload with a threshold)",
    )
    bench.add_argument("--list", action="store_true", help="every test case and workload, sizes and thresholds")
    bench.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=N",
        help="override one of the workload's sizes (initNodes, initPods, measurePods...), repeatable",
    )
    bench.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="runs, each in a process of its own (default 1: in this process)",
    )
    bench.add_argument("--config", metavar="FILE", help="a KubeSchedulerConfiguration (YAML)")
    bench.add_argument("--per-node", action="store_true", help="use the per-node plugin methods, not the batch ones")
    bench.add_argument(
        "--no-results",
        dest="results",
        action="store_false",
        help="keep no per-attempt results (kept by default, as run and cluster up keep them)",
    )
    bench.add_argument("--profile", metavar="FILE", help="write a cProfile report of one run to FILE (.pstats: raw)")
    add_ui_options(bench, "the run's trace (one run, traced: slower than a measured one)")
    options.add_output_option(bench, "every run and the medians")
    options.add_plugin_option(bench)


def _params(pairs: list[str]) -> dict[str, int]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not value.isdigit():
            raise options.UsageError(f"--param {pair}: expected NAME=N with N a whole number")
        out[key] = int(value)
    return out


@dataclass(frozen=True)
class Job:
    """One run's inputs, picklable for a --repeat child process."""

    selected: Selected
    config: dict[str, object] | None
    batch: bool
    plugins: tuple[str, ...]
    record: bool


# Any: a run's JSON (`RunResult.to_json`), read by its keys
def _once(job: Job, sinks: Sequence[Sink] = ()) -> dict[str, Any]:
    tune_gc()  # as every kubesched command (a --repeat run is a fresh process)
    registry = options.registry(job.plugins)
    result = run(job.selected, config=job.config, batch=job.batch, registry=registry, record=job.record, sinks=sinks)
    return result.to_json()


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 1), "min": round(min(values), 1), "max": round(max(values), 1)}


class Report(TypedDict):
    """What `kubesched bench --output json` prints."""

    workload: str
    params: dict[str, int]
    labels: list[str]
    threshold: float | None
    note: str | None
    runs: list[dict[str, Any]]  # Any: each run's JSON (`RunResult.to_json`), read by its keys
    average: dict[str, float]
    oneSecondAverage: dict[str, float]  # scheduler_perf's one-second collector's, whichever is reported
    overallPodsPerSecond: dict[str, float]
    samples: dict[str, float]
    peakRssMiB: dict[str, float]
    aboveThreshold: bool | None


class _Listed(TypedDict):
    workload: str
    params: dict[str, int]
    labels: list[str]
    threshold: float | None
    note: str | None


# Any: each run's JSON (`RunResult.to_json`), read by its keys
def report(selected: Selected, runs: list[dict[str, Any]]) -> Report:
    """The JSON `kubesched bench --output json` prints: the workload, each run, the medians."""
    averages = [r["throughput"]["average"] for r in runs]
    threshold = selected.workload.threshold
    return {
        "workload": selected.name,
        "params": selected.params,
        "labels": list(selected.workload.labels),
        "threshold": threshold or None,
        "note": selected.workload.note or None,
        "runs": runs,
        "average": _spread(averages),
        "oneSecondAverage": _spread([r["oneSecond"]["average"] for r in runs]),
        "overallPodsPerSecond": _spread([r["overallPodsPerSecond"] for r in runs]),
        "samples": _spread([r["throughput"]["samples"] for r in runs]),
        "peakRssMiB": _spread([r["peakRssMiB"] for r in runs]),
        "aboveThreshold": (statistics.median(averages) > threshold) if threshold else None,
    }


def bench_command(console: Console, args: argparse.Namespace) -> int:
    if args.list:
        print_list(console, args.output)
        return 0
    if not args.workload:
        options.print_error(console, "bench: name a workload (TESTCASE[/WORKLOAD]); --list shows them")
        return 2
    try:
        if args.repeat < 1:
            raise options.UsageError("--repeat must be at least 1")
        selected = select(args.workload, _params(args.param))
        config = _config(args.config)
        options.registry(args.plugin)  # a --plugin that does not load is a usage error here, not in a child
        job = Job(selected, config, not args.per_node, tuple(args.plugin or ()), args.results)
        if args.ui:
            if args.repeat != 1 or args.profile:
                raise options.UsageError("--ui: one traced run, without --repeat or --profile")
            bind = options.host_port("--ui-bind", args.ui_bind)
            kept = ListSink()
            runs = [_once(job, sinks=[kept])]
        elif args.profile:
            runs = [_profiled(job, Path(args.profile))]
        elif args.repeat == 1:
            runs = [_once(job)]
        else:
            with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
                runs = pool.map(_once, [job] * args.repeat, chunksize=1)
    except KeyError as e:
        options.print_error(console, str(e.args[0]))
        return 2
    except options.UsageError as e:
        options.print_error(console, str(e))
        return 2
    except (ConfigError, FrameworkError) as e:
        options.print_error(console, f"--config: {e}")
        return 2
    except Stalled as e:
        options.print_error(console, f"{args.workload}: {e}")
        return 1
    body = report(selected, runs)
    if args.output == "json":
        json.dump(body, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_report(console, body)
    if args.ui:
        console.print("(the run was traced for the UI: its throughput is not a measurement)")
        return serve_ui(console, bind, recording=Recording(kept.records, name=selected.name))
    return 0


def _config(path: str | None) -> dict[str, object] | None:
    if not path:
        return None
    try:
        loaded = yamlfile.load(path) or {}
    except yamlfile.YamlError as e:
        raise options.UsageError(f"--config: {e}") from None
    if not isinstance(loaded, dict):
        raise options.UsageError(f"--config: {path}: expected a KubeSchedulerConfiguration mapping")
    return loaded


# Any: the run's JSON, as `_once`
def _profiled(job: Job, target: Path) -> dict[str, Any]:
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        out = _once(job)
    finally:
        profiler.disable()
    try:
        if target.suffix == ".pstats":
            profiler.dump_stats(target)
        else:
            text = io.StringIO()
            stats = pstats.Stats(profiler, stream=text).strip_dirs().sort_stats("tottime")
            stats.print_stats(PROFILE_LINES)
            stats.sort_stats("cumulative").print_stats(PROFILE_LINES)
            target.write_text(text.getvalue())
    except OSError as e:
        raise options.UsageError(f"--profile {target}: {e.strerror or e}") from None
    return out


def print_report(console: Console, body: Report) -> None:
    average, overall = body["average"], body["overallPodsPerSecond"]
    runs = body["runs"]
    last = runs[-1]["throughput"]
    sizes = ", ".join(f"{k} {v}" for k, v in body["params"].items())
    if len(runs) == 1:
        unit = Throughput(interval=last["intervalSeconds"]).unit
        figure = f"{average['median']} pods/s average over {last['samples']} {unit} samples"
    else:
        figure = (
            f"{average['median']} pods/s median of {len(runs)} runs' averages "
            f"(range {average['min']} to {average['max']})"
        )
    console.print(f"{body['workload']} ({sizes}): {figure}", highlight=False, soft_wrap=True)
    console.print(
        f"  p50 {last['perc50']}, p90 {last['perc90']}, p95 {last['perc95']}, p99 {last['perc99']} (last run); "
        f"overall {overall['median']} pods/s; peak RSS {body['peakRssMiB']['median']} MiB",
        highlight=False,
    )
    if any(r["throughput"]["intervalSeconds"] != r["oneSecond"]["intervalSeconds"] for r in runs):
        ticks = runs[-1]["oneSecond"]["samples"]
        console.print(
            f"  sampled every {SUB_SECOND:g} s, a deviation: the measured phase was too short for "
            f"scheduler_perf's one-second collector, which gave {body['oneSecondAverage']['median']} pods/s "
            f"over {ticks} sample{'s' if ticks != 1 else ''} (last run)",
            highlight=False,
        )
    if body["threshold"]:
        verdict = "above" if body["aboveThreshold"] else "BELOW"
        console.print(f"  upstream's CI threshold: {body['threshold']} pods/s average — {verdict}", highlight=False)
    if body["note"]:
        console.print(f"  note: {body['note']}", highlight=False)
    for r in runs:
        if r["throughput"].get("warning"):
            console.print(f"  [yellow]warning: {r['throughput']['warning']}[/yellow]", highlight=False)
            break


def print_list(console: Console, output: str) -> None:
    rows: list[_Listed] = [
        {
            "workload": f"{case.name}/{w.name}",
            "params": w.params,
            "labels": list(w.labels),
            "threshold": w.threshold or None,
            "note": w.note or None,
        }
        for case in CASES.values()
        for w in case.workloads
    ]
    if output == "json":
        json.dump({"workloads": rows, "notReproduced": NOT_REPRODUCED}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    table = Table(box=None)
    for column in ("WORKLOAD", "SIZES", "LABELS", "CI THRESHOLD (pods/s)"):
        table.add_column(column)
    for row in rows:
        sizes = " ".join(f"{k}={v}" for k, v in row["params"].items())
        table.add_row(row["workload"], sizes, ",".join(row["labels"]), str(row["threshold"] or "-"))
    print_table(console, table)
    console.print("\nNot reproduced:")
    for name, why in NOT_REPRODUCED.items():
        console.print(f"  {name}: {why}", highlight=False)
