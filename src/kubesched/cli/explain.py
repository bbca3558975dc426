"""`kubesched explain NAMESPACE/POD`: a pod's scheduling attempts, from a running scheduler
(`--url`, its `/debug/pods/{namespace}/{name}`) or from kubesched's scheduler at the end of the
short simulation `kubesched queue` runs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console

from kubesched.cli.commands import Subparsers
from kubesched.cli.queue import GATED, HUGE, simulation
from kubesched.cli.remote import FetchError, get_json
from kubesched.console import options
from kubesched.console.attempts import print_attempt


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
    print_attempt(console, key, attempts[-1], kept=len(document["attempts"]), node=args.node, every=args.all_nodes)
    if attempts[-1]["result"] == "unschedulable":
        console.print(
            f"What would make it fit: kubesched fit --kubeconfig K --pod {key} (or --snapshot FILE)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    return 0


# Any: a pod's explanation (`explain_pod`), read by its keys as the fetched one is
def _simulated(args: argparse.Namespace, key: str) -> dict[str, Any]:
    result = simulation(args, horizon=30.0, explain=[key])
    return result.explained.get(key) or {"pod": key, "attempts": []}


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    exp = sub.add_parser(name, help=help)
    exp.set_defaults(run=explain_command)
    exp.add_argument("pod", metavar="NAMESPACE/POD", help="the pod (a bare name means the default namespace)")
    exp.add_argument("--url", help="a running scheduler's endpoints (default: the simulation kubesched queue runs)")
    exp.add_argument("--attempt", type=int, metavar="N", help="this attempt (default: the last one kept)")
    exp.add_argument("--node", metavar="NAME", help="one node in full: its Filter verdict or its scores by plugin")
    exp.add_argument("--all-nodes", action="store_true", help="list every node of each Filter group")
    exp.add_argument("--nodes", type=int, default=3, help="without --url: fake nodes (default 3)")
    exp.add_argument("--pods", type=int, default=12, help="without --url: small pods (default 12)")
    exp.add_argument("--seed", type=int, default=0, help="without --url: seed for pod sizes (default 0)")
    options.add_output_option(exp, "the attempts as recorded, the last one explained")
