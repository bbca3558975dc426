"""`kubesched record` and `kubesched replay`: a cluster's changes written as JSON Lines, and
replayed on virtual time under one or more scheduler configurations, compared with what the
recorded scheduler did and with each other."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from pathlib import Path

from rich.console import Console

from kubesched.cli.capacity import kube_cluster
from kubesched.cli.commands import Subparsers
from kubesched.cli.runtime import until_stopped
from kubesched.cli.ui import add_ui_options
from kubesched.clock import RealClock
from kubesched.cluster.errors import ApiError
from kubesched.config import SchedulerConfig
from kubesched.console import options
from kubesched.console.serving import serve as serve_ui
from kubesched.trace import JsonLinesSink, Sink
from kubesched.whatif.record import Recorder, Recording, RecordingError, load
from kubesched.whatif.replay import DEFAULT_SETTLE, Difference, Outcome, differences, recorded, replay
from kubesched.workloads.compare import report_of

DIFFERENCES = 20  # rows of differing pods a table shows


def add_record_parser(sub: Subparsers, name: str, help: str) -> None:
    rec = sub.add_parser(
        name,
        help=help,
        description="List what placement depends on, then watch it: one object change a line, written as it "
        "comes, watches resumed (and the kind listed again when the server no longer has the version). Stops "
        "after --duration, or on Ctrl-C / SIGTERM with the file complete. Secrets and Events are never read.",
    )
    rec.set_defaults(run=record_command)
    rec.add_argument("--kubeconfig", metavar="K", help="the cluster to read (default: in-cluster, $KUBECONFIG)")
    rec.add_argument("-o", "--output", required=True, metavar="FILE", help="the recording to write")
    rec.add_argument("--duration", metavar="D", help="stop after this long (10m, 1h30m; default: until interrupted)")


def add_replay_parser(sub: Subparsers, name: str, help: str) -> None:
    rep = sub.add_parser(
        name,
        help=help,
        description="The recording's objects restored, its changes applied at their times (pods created pending, "
        "deleted, finished), the scheduler deciding: per configuration the pods placed, the waits from creation to "
        "binding and the preemptions, beside the recorded scheduler's, and the pods placed differently.",
    )
    rep.set_defaults(run=replay_command)
    rep.add_argument("file", metavar="FILE", help="a file of kubesched record")
    rep.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="a KubeSchedulerConfiguration to replay under (repeatable; default: upstream's default profile)",
    )
    rep.add_argument("--seed", type=int, default=0, help="the replayed schedulers' seed (default 0)")
    rep.add_argument("--speed", type=float, default=1.0, help="replay this many times faster (default 1)")
    rep.add_argument(
        "--settle",
        default=f"{DEFAULT_SETTLE:g}s",
        metavar="D",
        help="run this long after the last change (default 10s)",
    )
    rep.add_argument(
        "--traces",
        metavar="DIR",
        help="also write each replayed run's trace to DIR/<n>.jsonl, for `kubesched ui DIR/<n>.jsonl`'s timeline",
    )
    options.add_output_option(rep, "each run's summary, placements and the differences")
    options.add_plugin_option(rep)
    add_ui_options(rep, "the replayed configurations' clusters side by side (two or more --config)")


def record_command(console: Console, args: argparse.Namespace) -> int:
    try:
        duration = options.seconds("--duration", args.duration) if args.duration else None
        cluster = kube_cluster(args.kubeconfig)
        out = open(args.output, "w")  # noqa: SIM115 -- closed below, after the recorder stops
    except options.UsageError as e:
        options.print_error(console, str(e))
        return 2
    except OSError as e:
        options.print_error(console, f"--output: {args.output}: {e.strerror or e}")
        return 2
    recorder = Recorder(cluster, out, clock=RealClock())

    async def go() -> None:
        try:
            await until_stopped(recorder.run(duration=duration))
        finally:
            await cluster.close()

    try:
        asyncio.run(go())
    except ApiError as e:
        options.print_error(console, f"recording: {e}")
        return 1
    finally:
        out.close()
    Console(stderr=True).print(f"recorded {recorder.changes} changes to {args.output}", highlight=False, soft_wrap=True)
    return 0


def replay_command(console: Console, args: argparse.Namespace) -> int:
    try:
        recording = load(args.file)
        registry = options.registry(args.plugin)
        configs = [(path, options.scheduler_config("--config", path, registry)) for path in args.config]
        configs = configs or [("default", options.scheduler_config("--config", None, registry))]
        if not args.speed > 0:
            raise options.UsageError(f"--speed: must be more than 0, got {args.speed:g}")
        settle = options.seconds("--settle", args.settle)
        bind = options.host_port("--ui-bind", args.ui_bind)
        if args.ui and len(configs) < 2:
            raise options.UsageError("--ui: shows two or more replayed configurations side by side (--config twice)")
    except RecordingError as e:
        options.print_error(console, str(e))
        return 2
    except options.UsageError as e:
        options.print_error(console, str(e))
        return 2
    names = sorted({p.scheduler_name for _, c in configs for p in c.profiles})
    runs = [recorded(recording, schedulers=names)]
    traces = []
    for number, (label, config) in enumerate(configs, 1):
        with contextlib.ExitStack() as stack:
            sinks: list[Sink] = []
            if args.traces:
                try:
                    Path(args.traces).mkdir(parents=True, exist_ok=True)
                    path = Path(args.traces) / f"{number}.jsonl"
                    sinks.append(JsonLinesSink(stack.enter_context(path.open("w"))))
                except OSError as e:
                    options.print_error(console, f"--traces: {args.traces}: {e.strerror or e}")
                    return 2
                traces.append(f"{label}: {path}")
            run = replay(
                recording,
                config=config,
                registry=registry,
                label=label,
                seed=args.seed,
                speed=args.speed,
                settle=settle,
                sinks=sinks,
            )
        runs.append(run)
    differing = differences(runs)
    reported = [_cluster_report(run, config) for run, (_, config) in zip(runs[1:], configs, strict=True)]
    side_by_side = {"workload": args.file, "seed": args.seed, "configs": reported}
    _report(console, args, recording, runs, differing, traces, reported)
    if args.ui:
        return serve_ui(console, bind, comparison=side_by_side)
    return 0


def _report(
    console: Console,
    args: argparse.Namespace,
    recording: Recording,
    runs: list[Outcome],
    differing: list[Difference],
    traces: list[str],
    configs: list[dict[str, object]],
) -> None:
    """The runs and the pods placed differently, as JSON or a table, and where their traces went."""
    if args.output == "json":
        body = {
            "file": args.file,
            "changes": len(recording.changes),
            "runs": {r.label: r.summary() | {"placements": _placements(r)} for r in runs},
            "differences": [{"pod": d.pod, "nodes": d.nodes} for d in differing],
            "configs": configs,  # as compare reports them: `kubesched ui --compare` reads it
        }
        json.dump(body, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print(console, args.file, len(recording.changes), runs, differing)
        for shown in traces:
            line = f"trace of {shown} (kubesched ui FILE shows its timeline)"
            console.print(line, highlight=False, soft_wrap=True)


def _cluster_report(run: Outcome, config: SchedulerConfig) -> dict[str, object]:
    """A replayed run's cluster at its end, as `kubesched compare` reports a configuration's."""
    assert run.store is not None
    return report_of(run.store, run.label, config.profiles[0].scheduler_name, run.attempts).to_json()


def _placements(run: Outcome) -> dict[str, str | None]:
    return {p.key: p.node for p in sorted(run.pods.values(), key=lambda p: (p.created, p.key))}


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f}ms"


def _print(console: Console, file: str, changes: int, runs: list[Outcome], differing: list[Difference]) -> None:
    console.print(f"replay of {file}: {changes} changes, {len(runs[0].pods)} pods to place", highlight=False)
    width = max(12, *(len(r.label) for r in runs))
    console.print(
        f"  {'run':<{width}}  {'placed':>7} {'unplaced':>8} {'same node':>9} {'wait p50':>10} {'wait p99':>10}"
        f" {'preempted':>9}",
        highlight=False,
        soft_wrap=True,
    )
    base = runs[0]
    for run in runs:
        s = run.summary()
        same = sum(1 for uid, p in run.pods.items() if uid in base.pods and p.node == base.pods[uid].node)
        line = (
            f"  {run.label:<{width}}  {s['placed']:>7} {s['unplaced']:>8} {same if run is not base else '-':>9}"
            f" {_ms(s['waitP50']):>10} {_ms(s['waitP99']):>10} {s['preemptions']:>9}"
        )
        console.print(line, markup=False, highlight=False, soft_wrap=True)
        if run.refused:
            why = f"    {run.refused} changes not applied: {'; '.join(run.reasons)}"
            console.print(why, markup=False, highlight=False, soft_wrap=True)
    if not differing:
        console.print("Every run placed every pod on the same node.", highlight=False)
        return
    console.print(f"{len(differing)} pods placed differently:", highlight=False)
    labels = [r.label for r in runs]
    for d in differing[:DIFFERENCES]:
        nodes = ", ".join(f"{label}: {d.nodes[label] or 'not placed'}" for label in labels)
        console.print(f"  {d.pod}  {nodes}", markup=False, highlight=False, soft_wrap=True)
    if len(differing) > DIFFERENCES:
        console.print(f"  ... and {len(differing) - DIFFERENCES} more (--output json lists them all)", highlight=False)
