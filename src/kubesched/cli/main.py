"""The `kubesched` command."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rich.console import Console

from kubesched import __version__
from kubesched.apiserver.openapi import K8S_VERSION
from kubesched.cli import bench, capacity, capstone, citations, fit, options, record, scenario, snapshot, sweep
from kubesched.cli.burst import KUBESCHED, run_burst, run_minimal
from kubesched.cli.cluster_up import cluster_up
from kubesched.cli.compare import compare_command
from kubesched.cli.drill import print_c1, print_c2, print_c3, print_c4, run_c1, run_c2, run_c3, run_c4
from kubesched.cli.explain import explain_command
from kubesched.cli.lab import command as lab_command
from kubesched.cli.plugins import plugins_command
from kubesched.cli.queue import queue_command
from kubesched.cli.report import print_minimal_report
from kubesched.cli.run import controllers_command, minimal_command, minimal_lease, run_command
from kubesched.cli.runtime import tune_gc
from kubesched.cli.ui import DEFAULT_BIND, add_ui_options, ui_command
from kubesched.cli.ui import serve as serve_ui
from kubesched.controllers import CONTROLLERS
from kubesched.golden.cli import report, run_directory
from kubesched.golden.loader import case_names
from kubesched.minimal import NAME as MINIMAL_NAME
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.server import DEFAULT_PORT
from kubesched.trace import JsonLinesSink, ListSink, Sink
from kubesched.ui import Recording


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kubesched", description="The Kubernetes scheduler, in Python, with its lab.")
    parser.add_argument(
        "--version", action="version", version=f"kubesched {__version__} (kube-scheduler {K8S_VERSION})"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    mini = sub.add_parser("minimal", help="run the from-scratch scheduler on fake nodes (virtual time)")
    mini.add_argument("--nodes", type=int, default=3, help="fake nodes to create (default 3)")
    mini.add_argument("--pods", type=int, default=12, help="pods to create (default 12)")
    mini.add_argument("--seed", type=int, default=0, help="seed for pod sizes and object ids (default 0)")
    mini.add_argument("--interval", type=float, default=0.0, help="seconds between pod creations (default 0: a burst)")
    mini.add_argument("--node-template", metavar="FILE", help="a Node manifest (YAML) the fake nodes copy")
    options.add_output_option(mini, "the placements and the kubelet's rejections")
    mini.add_argument("--trace", metavar="FILE", help="write every trace record to FILE as JSON lines")
    mini.add_argument("--kubeconfig", metavar="K", help="instead: schedule for this cluster until interrupted")
    mini.add_argument("--scheduler-name", default=MINIMAL_NAME, help=f"with --kubeconfig (default {MINIMAL_NAME})")
    mini.add_argument(
        "--leader-elect", action="store_true", help="with --kubeconfig: schedule only while holding --lease"
    )
    mini.add_argument(
        "--lease", default=None, metavar="NAMESPACE/NAME", help="the Lease to hold (default kube-system/SCHEDULER-NAME)"
    )
    mini.add_argument(
        "--lease-timings",
        default="15,10,2",
        metavar="DURATION,RENEW,RETRY",
        help="lease duration, renew deadline and retry period in seconds (default upstream's 15,10,2)",
    )

    cluster = sub.add_parser("cluster", help="the embedded cluster")
    cluster_sub = cluster.add_subparsers(dest="cluster_command", required=True)
    up = cluster_sub.add_parser("up", help="serve the Kubernetes API with fake nodes until interrupted")
    up.add_argument("--nodes", type=int, default=None, help="fake nodes to create (default 3; with --from 0)")
    up.add_argument("--node-template", metavar="FILE", help="a Node manifest (YAML) the fake nodes copy")
    up.add_argument(
        "--from",
        dest="snapshot",
        metavar="FILE",
        help="start from a saved cluster (kubesched snapshot save): its nodes, pods and the rest, as they were",
    )
    up.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1, this machine only); any other address needs --token-file "
        "or --tls, or --allow-unauthenticated",
    )
    up.add_argument("--port", type=options.port, default=6443, help="port to listen on (default 6443; 0 picks one)")
    up.add_argument(
        "--kubeconfig",
        default=".kubesched/kubeconfig",
        help="where to write the kubeconfig, mode 0600 (default .kubesched/kubeconfig)",
    )
    up.add_argument("--token-file", metavar="F", help="require the bearer token in F on every request (serves HTTPS)")
    up.add_argument(
        "--authorization",
        type=options.authorization_mode,
        default="AlwaysAllow",
        metavar="MODE",
        help="AlwaysAllow (default) or RBAC: Roles and bindings decide every request, as kube-apiserver's "
        "--authorization-mode RBAC (a token is then generated unless --token-file gives one)",
    )
    up.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a self-signed certificate; without --token-file, require a generated token "
        "(written into the kubeconfig)",
    )
    up.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="let a --host other than loopback serve the API (and the scheduler's endpoints) to anyone who reaches it",
    )
    up.add_argument(
        "--kubelets",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="simulate the nodes' kubelets (default); --no-kubelets leaves bound pods as they are",
    )
    up.add_argument(
        "--controllers",
        default="*",
        metavar="LIST",
        help="the built-in controllers to run, as kube-controller-manager's --controllers: names, * for all "
        f"(default), -name to leave one out ({', '.join(sorted(CONTROLLERS))})",
    )
    up.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep the cluster in a SQLite database in DIR and start from what it holds (default: in memory, "
        "lost at stop)",
    )
    up.add_argument(
        "--etcd",
        metavar="URL",
        help="instead: keep the cluster in the etcd at URL (v3 API, e.g. http://127.0.0.1:2379) and start from "
        "what it holds under --etcd-prefix (needs kubesched[etcd])",
    )
    up.add_argument(
        "--etcd-prefix",
        default="/kubesched",
        metavar="KEY",
        help="with --etcd: the key prefix this cluster is kept under (default /kubesched; one cluster a prefix)",
    )
    up.add_argument(
        "--data-sync",
        type=str.upper,
        choices=("NORMAL", "FULL"),
        default="NORMAL",
        help="with --data-dir: NORMAL (default) loses no answered write when the process is killed; FULL also "
        "none when the machine loses power, at an fsync per write",
    )
    up.add_argument(
        "--watch-history", type=int, default=10_000, help="changes kept for watch resumption (default 10000)"
    )
    up.add_argument(
        "--event-ttl",
        type=options.duration,
        default=3600.0,
        metavar="DURATION",
        help="how long Events are kept after their last write, as kube-apiserver's --event-ttl (default 1h)",
    )
    up.add_argument("--scheduler", action="store_true", help="also run kubesched's scheduler (default profile)")
    options.add_results_options(up)
    up.add_argument(
        "--scheduler-port",
        type=options.port,
        default=DEFAULT_PORT,
        help=f"port of the scheduler's endpoints (default {DEFAULT_PORT}; 0 picks one)",
    )
    up.add_argument("--scheduler-config", metavar="FILE", help="a KubeSchedulerConfiguration (YAML) for --scheduler")
    up.add_argument(
        "--ui-actions",
        action="store_true",
        help="with --scheduler: the UI may create and delete pods, cordon and uncordon nodes, and add nodes",
    )
    options.add_plugin_option(up)

    queue = sub.add_parser("queue", help="the pending pods in kubesched's scheduling queue")
    queue.add_argument("--url", help="a running scheduler's endpoint (cluster up --scheduler); default: simulate")
    queue.add_argument("--nodes", type=int, default=3, help="simulation: fake nodes (default 3)")
    queue.add_argument(
        "--pods", type=int, default=12, help="simulation: small pods besides huge and gated (default 12)"
    )
    queue.add_argument("--seed", type=int, default=0, help="simulation: seed (default 0)")
    queue.add_argument("--horizon", type=float, default=30.0, help="simulation: virtual seconds to run (default 30)")
    options.add_output_option(queue, "the pending pods (json: what /debug/queue answers)")

    golden = sub.add_parser("golden", help="run recorded kube-scheduler cases and compare node for node")
    golden.add_argument("directory", help="a directory of NAME.input.yaml / NAME.expected.json cases")
    golden.add_argument("--case", action="append", help="run only this case (repeatable)")
    options.add_output_option(golden, "each case's result and first difference")

    bench.add_parser(sub)

    run = sub.add_parser("run", help="schedule for a cluster (kubeconfig or in-cluster), with leader election")
    run.add_argument("--config", metavar="FILE", help="a KubeSchedulerConfiguration (default: the default profile)")
    run.add_argument("--kubeconfig", metavar="K", help="default: clientConnection.kubeconfig, in-cluster, $KUBECONFIG")
    run.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="campaign for the Lease before scheduling (default: leaderElection.leaderElect)",
    )
    run.add_argument(
        "--metrics-bind",
        default="127.0.0.1:10259",
        metavar="HOST:PORT",
        help="where /healthz, /readyz, /metrics and /debug/queue are served, over plain HTTP without "
        "authentication (default 127.0.0.1:10259, this machine only; in a pod, its own address to be probed)",
    )
    run.add_argument(
        "--feature-gates",
        default="",
        metavar="GATE=BOOL,...",
        help="as kube-scheduler's (default: v1.36.2's): SchedulerAsyncPreemption=false removes victims on the "
        "scheduling thread",
    )
    options.add_results_options(run)
    options.add_plugin_option(run)

    ctl = sub.add_parser("controllers", help="run the controllers installed packages declare, against a cluster")
    ctl.add_argument("--kubeconfig", metavar="K", help="default: $KUBECONFIG or ~/.kube/config")

    exp = sub.add_parser("explain", help="a pod's scheduling attempts: verdicts, scores, why this node")
    exp.add_argument("pod", metavar="NAMESPACE/POD", help="the pod (a bare name means the default namespace)")
    exp.add_argument("--url", help="a running scheduler's endpoints (default: the simulation kubesched queue runs)")
    exp.add_argument("--attempt", type=int, metavar="N", help="this attempt (default: the last one kept)")
    exp.add_argument("--node", metavar="NAME", help="one node in full: its Filter verdict or its scores by plugin")
    exp.add_argument("--all-nodes", action="store_true", help="list every node of each Filter group")
    exp.add_argument("--nodes", type=int, default=3, help="without --url: fake nodes (default 3)")
    exp.add_argument("--pods", type=int, default=12, help="without --url: small pods (default 12)")
    exp.add_argument("--seed", type=int, default=0, help="without --url: seed for pod sizes (default 0)")
    options.add_output_option(exp, "the attempts as recorded, the last one explained")

    capacity.add_parser(sub)
    fit.add_parser(sub)
    snapshot.add_parser(sub)
    scenario.add_parser(sub)
    sweep.add_parser(sub)
    record.add_parsers(sub)
    capstone.add_parser(sub)
    citations.add_parser(sub)

    cmp = sub.add_parser("compare", help="one workload under two or more scheduler configurations, side by side")
    cmp.add_argument("workload", help="a workload file (YAML: nodes, objects, pods; see docs/plugins.md)")
    cmp.add_argument(
        "--config", action="append", default=[], metavar="FILE", help="a KubeSchedulerConfiguration, or `default`"
    )
    cmp.add_argument("--seed", type=int, default=0, help="seed of the clusters and schedulers (default 0)")
    cmp.add_argument("--plot", metavar="FILE", help="write the per-node utilisation of each configuration as SVG")
    options.add_output_option(cmp, "each configuration's placement and measures")
    options.add_plugin_option(cmp)
    add_ui_options(cmp, "the comparison")

    plugins = sub.add_parser("plugins", help="the registered plugins, the points they fill and the profiles using them")
    plugins.add_argument(
        "--config", metavar="FILE", help="a KubeSchedulerConfiguration: build its profiles as run would"
    )
    options.add_output_option(plugins, "every plugin, its extension points and where it is enabled")
    options.add_plugin_option(plugins)

    drill = sub.add_parser("drill", help="the curriculum's chaos drills, narrated (virtual time)")
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

    replay = sub.add_parser(
        "ui", help="the web UI over a recorded run (a --trace file), a compare report or a sweep's results"
    )
    replay.add_argument("trace_file", metavar="TRACE", nargs="?", help="a trace written with --trace (JSON lines)")
    replay.add_argument("--compare", metavar="REPORT", help="a report of kubesched compare --output json")
    replay.add_argument(
        "--sweep", metavar="DIR", help="a sweep's results directory (kubesched sweep --out): any point replayed"
    )
    replay.add_argument("--bind", default=DEFAULT_BIND, help=f"HOST:PORT to serve on (default {DEFAULT_BIND})")

    lab_command.add_parser(sub)

    demo = sub.add_parser("demo", help="watch the from-scratch scheduler overcommit a node")
    demo.add_argument("--trace", metavar="FILE", help="write every trace record to FILE as JSON lines")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`kubesched ... | head`): stop quietly, as command-line tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(sweep.normalised(sys.argv[1:] if argv is None else argv))
    tune_gc()
    console = Console()
    with ExitStack() as stack:
        sinks: list[Sink] = []
        if getattr(args, "trace", None):
            sinks.append(JsonLinesSink(stack.enter_context(open(args.trace, "w"))))
        if args.command == "demo":
            return _demo(console, sinks)
        if args.command == "drill":
            return _drill(console, args, sinks)
        if args.command == "ui":
            return ui_command(console, args)
        if args.command == "run":
            return run_command(console, args)
        if args.command == "golden":
            return _golden(console, args)
        if args.command == "bench":
            return bench.bench_command(console, args)
        if args.command == "plugins":
            return plugins_command(console, args)
        if args.command == "compare":
            return compare_command(console, args)
        if args.command == "capacity":
            return capacity.capacity_command(console, args)
        if args.command == "fit":
            return fit.fit_command(console, args)
        if args.command == "snapshot":
            return snapshot.snapshot_command(console, args)
        if args.command == "scenario":
            return scenario.scenario_command(console, args)
        if args.command == "sweep":
            return sweep.sweep_command(console, args)
        if args.command == "record":
            return record.record_command(console, args)
        if args.command == "replay":
            return record.replay_command(console, args)
        if args.command == "citations":
            return citations.citations_command(console, args)
        if args.command == "controllers":
            return controllers_command(console, args.kubeconfig)
        try:
            if args.command == "cluster":
                return cluster_up(console, args)
            if args.command == "queue":
                return queue_command(console, args)
            if args.command == "explain":
                return explain_command(console, args)
            if args.command == "capstone":
                return capstone.capstone_command(console, args)
            if args.command == "lab":
                return lab_command.lab_command(console, args)
            if args.kubeconfig:
                return minimal_command(
                    console,
                    args.kubeconfig,
                    args.scheduler_name,
                    sinks,
                    lease=minimal_lease(args) if args.leader_elect else None,
                )
            result = run_minimal(
                nodes=options.at_least("--nodes", args.nodes, 1),
                pods=options.at_least("--pods", args.pods, 0),
                seed=args.seed,
                interval=args.interval,
                template=options.node_template(args.node_template),
                sinks=sinks,
            )
        except options.UsageError as e:
            options.print_error(console, str(e))
            return 2
        if args.output == "json":
            json.dump(result.to_json(), sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            print_minimal_report(console, result)
    return 0


def _demo(console: Console, sinks: list[Sink]) -> int:
    console.rule("[bold]1. A scheduler with no cache")
    console.print(
        "Three fake nodes with 4 CPUs each. Twelve pods arrive at once. The from-scratch scheduler "
        "picks the node with the most free CPU for each pod, as it believes it to be from watch "
        "events. Those events lag its own bindings by a few milliseconds, and it does not assume.\n"
    )
    print_minimal_report(console, run_minimal(nodes=3, pods=12, seed=1, sinks=sinks))
    console.rule("[bold]2. The same burst, scheduled by kubesched")
    console.print(
        "The framework scheduler (the default profile) assumes each pod into its cache before "
        "binding, so the next decision already sees it. One more pod asks for 6 CPUs, more than "
        "any node has.\n"
    )
    result = run_burst(scheduler=KUBESCHED, nodes=3, pods=12, seed=1, extra_pods=[("huge", "6")], sinks=sinks)
    print_minimal_report(console, result)
    for pod, message in sorted(result.failures.items()):
        console.print(f"[yellow]FailedScheduling[/yellow] {pod}: {message}")
    return 0


DRILL_JSON: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {  # c1 and c2: `_drill` runs them
    "c3": lambda args: {"ignore": run_c3().to_json(), "honor": run_c3(taints_policy="Honor").to_json()},
    "c4": lambda args: {"race": run_c4().to_json(), "crash": run_c4(crash=True).to_json()},
}


def _drill(console: Console, args: argparse.Namespace, sinks: list[Sink]) -> int:
    if (sinks or args.ui) and args.name not in ("c1", "c2"):
        given = "--trace" if sinks else "--ui"
        options.print_error(console, f"{given}: drill {args.name} keeps no trace to replay (c1 and c2 do)")
        return 2
    kept = ListSink()
    if args.ui:
        try:
            bind = options.host_port("--ui-bind", args.ui_bind)
        except options.UsageError as e:
            options.print_error(console, str(e))
            return 2
        sinks = [*sinks, kept]
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
    if args.ui:
        return serve_ui(console, bind, recording=Recording(kept.records, name=f"drill {args.name}"))
    return 0


def _dump(document: Any) -> None:
    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")


def _golden(console: Console, args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    if not directory.is_dir():
        options.print_error(console, f"{directory}: not a directory")
        return 2
    known = set(case_names(directory))
    unknown = [c for c in args.case or () if c not in known]
    if unknown:
        options.print_error(console, f"--case: no case {unknown[0]!r} in {directory} (cases: {len(known)})")
        return 2
    outcomes = run_directory(directory, in_tree_registry(), only=args.case)
    report(console, outcomes, as_json=args.output == "json")
    return 0 if all(o.passed for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
