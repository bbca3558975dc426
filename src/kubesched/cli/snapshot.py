"""`kubesched snapshot save`: what the scheduler reads of a cluster, read from any cluster with list
requests only, into one file that `cluster up --from` and `capacity --snapshot` start from."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from kubesched.cli import options
from kubesched.cli.capacity import read_cluster


def add_parser(sub: Any) -> None:
    snap = sub.add_parser("snapshot", help="save a cluster's scheduling state to a file (read-only)")
    snap_sub = snap.add_subparsers(dest="snapshot_command", required=True)
    save = snap_sub.add_parser(
        "save",
        help="read nodes, pods and what placement depends on into one YAML file",
        description="Read a cluster with list requests only: nodes, pods, PriorityClasses, budgets, the "
        "workloads spread defaults look at, volumes, DRA objects and custom resources with their definitions, "
        "and the namespaces holding them. Secrets are never read; pods keep their env variables' names only.",
    )
    save.add_argument("--kubeconfig", metavar="K", help="the cluster to read (default: in-cluster, $KUBECONFIG)")
    save.add_argument("-o", "--output", required=True, metavar="FILE", help="the file to write (- for stdout)")
    save.add_argument(
        "-l",
        "--selector",
        metavar="SELECTOR",
        help="keep only the pods, claims, services, workloads and budgets this label selector matches",
    )


def snapshot_command(console: Console, args: argparse.Namespace) -> int:
    try:
        snapshot = read_cluster(args.kubeconfig, selector=args.selector or "")
    except options.UsageError as e:
        options.print_error(console, str(e))
        return 2
    if args.output == "-":
        console.file.write(snapshot.dumps())
        return 0
    try:
        snapshot.save(Path(args.output))
    except OSError as e:
        options.print_error(console, f"--output: {args.output}: {e.strerror or e}")
        return 2
    kinds = len({(i.get("apiVersion"), i.get("kind")) for i in snapshot.items})
    console.print(f"saved {len(snapshot.items)} objects of {kinds} kinds to {args.output}", highlight=False)
    return 0
