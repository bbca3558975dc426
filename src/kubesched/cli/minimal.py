"""`kubesched minimal`: the from-scratch scheduler on fake nodes and virtual time (or, with
`--kubeconfig`, for a cluster until interrupted); `kubesched demo`: it beside kubesched's."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console

from kubesched.cli.commands import Subparsers
from kubesched.cli.run import minimal_command, minimal_lease
from kubesched.console import options
from kubesched.console.reports import print_minimal_report
from kubesched.minimal import NAME as MINIMAL_NAME
from kubesched.workloads.burst import KUBESCHED, run_burst, run_minimal


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    mini = sub.add_parser(name, help=help)
    mini.set_defaults(run=minimal_main)
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


def minimal_main(console: Console, args: argparse.Namespace) -> int:
    with options.trace_sinks(args.trace) as sinks:
        if args.kubeconfig:
            lease = minimal_lease(args) if args.leader_elect else None
            return minimal_command(console, args.kubeconfig, args.scheduler_name, sinks, lease=lease)
        result = run_minimal(
            nodes=options.at_least("--nodes", args.nodes, 1),
            pods=options.at_least("--pods", args.pods, 0),
            seed=args.seed,
            interval=args.interval,
            template=options.node_template(args.node_template),
            sinks=sinks,
        )
    if args.output == "json":
        json.dump(result.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_minimal_report(console, result)
    return 0


def add_demo_parser(sub: Subparsers, name: str, help: str) -> None:
    demo = sub.add_parser(name, help=help)
    demo.set_defaults(run=demo_main)
    demo.add_argument("--trace", metavar="FILE", help="write every trace record to FILE as JSON lines")


def demo_main(console: Console, args: argparse.Namespace) -> int:
    with options.trace_sinks(args.trace) as sinks:
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
