"""`kubesched fit`: what would make an unschedulable pod fit — changes searched over a stated space
(see `whatif.counterfactual`), each verified by scheduling the pod again on a changed copy."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console

from kubesched.cli.capacity import node_manifest, source, templates
from kubesched.cli.commands import Subparsers
from kubesched.console import options
from kubesched.whatif.capacity import CapacityError, with_defaults
from kubesched.whatif.counterfactual import Search, pending_pod, search


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    fit = sub.add_parser(
        name,
        help=help,
        description="Search for the smallest changes after which the pod is bound: nodes added, a taint removed "
        "or tolerated, one constraint relaxed, requests lowered, lower-priority pods evicted. Each is verified "
        "by scheduling the pod again on a copy of the cluster with the change; the cluster is only read.",
    )
    fit.set_defaults(run=fit_command)
    cluster = fit.add_mutually_exclusive_group()
    cluster.add_argument("--kubeconfig", metavar="K", help="the cluster to read (default: in-cluster, $KUBECONFIG)")
    cluster.add_argument("--snapshot", metavar="FILE", help="instead: a file of kubesched snapshot save")
    pod = fit.add_mutually_exclusive_group(required=True)
    pod.add_argument("--pod", metavar="NAMESPACE/NAME", help="a pod of the cluster (a bare name: in default)")
    pod.add_argument("--podspec", metavar="FILE", help="a pod spec (its first pod, or a workload's template)")
    fit.add_argument("--node-template", metavar="FILE", help="the Node nodes are added like (default: the most common)")
    fit.add_argument("--max-nodes", type=int, default=10, help="the most nodes to try adding (default 10)")
    fit.add_argument("--config", metavar="FILE", help="a KubeSchedulerConfiguration (default: the default profile)")
    options.add_output_option(fit, "the changes found, cheapest first by kind")
    options.add_plugin_option(fit)


def fit_command(console: Console, args: argparse.Namespace) -> int:
    try:
        registry = options.registry(args.plugin)
        config = options.scheduler_config("--config", args.config, registry)
        node = node_manifest(args.node_template)
        snapshot = source(args)
        if args.pod:
            try:
                snapshot, pod = pending_pod(snapshot, args.pod)
            except KeyError:
                raise options.UsageError(f"--pod: no pod {args.pod} in the cluster") from None
        else:
            pod = templates(args.podspec)[0].pod
        pod = with_defaults(pod, [p.scheduler_name for p in config.profiles])
        space = Search(
            snapshot, config, registry, node_template=node, max_nodes=options.at_least("--max-nodes", args.max_nodes, 0)
        )
        name = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        already = space.placed(snapshot, pod)
        found = [] if already else search(space, pod)
    except options.UsageError as e:
        options.print_error(console, str(e))
        return 2
    except CapacityError as e:
        options.print_error(console, f"--pod: {e}")
        return 2
    if args.output == "json":
        body = {"pod": name, "fitsNow": already, "proposals": [p.to_json() for p in found]}
        json.dump(body, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if already:
        console.print(f"{name} fits as the cluster is: it would be bound to {already}.", highlight=False)
        return 0
    if not found:
        console.print(
            f"Nothing in the space searched makes {name} fit (nodes added up to {space.max_nodes}, taints, "
            "one constraint relaxed, requests lowered, lower-priority pods evicted).",
            highlight=False,
            soft_wrap=True,
        )
        return 0
    console.print(f"What would make {name} fit, each verified by scheduling it again:", highlight=False)
    for p in found:  # one line each, whole however narrow the terminal or a pipe
        line = f"  {p.kind:<15}{p.change}  (cost {p.cost:g}; then bound to {p.node})"
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return 0
