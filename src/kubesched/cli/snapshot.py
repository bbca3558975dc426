"""`kubesched snapshot save`: what the scheduler reads of a cluster, read from any cluster with list
requests only, into one file that `cluster up --from` and `capacity --snapshot` start from."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from rich.console import Console

from kubesched.cli.capacity import kube_cluster, read_cluster
from kubesched.cli.commands import Subparsers
from kubesched.cli.runtime import until_stopped
from kubesched.cluster.errors import ApiError
from kubesched.console import options
from kubesched.whatif.sync import Syncer


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    snap = sub.add_parser(name, help=help)
    snap.set_defaults(run=snapshot_command)
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

    sync = snap_sub.add_parser(
        "sync",
        help="keep a cluster (a cluster up) in step with another, reading the source only",
        description="List and watch the source as snapshot save reads it (never writing to it) and apply each "
        "object and change to the target: created, relabelled, bound, given its status, deleted. Run the target "
        "without controllers (cluster up --controllers '') or they make pods of their own for synced workloads. "
        "Stops after --duration, or on Ctrl-C / SIGTERM.",
    )
    sync.add_argument("--kubeconfig", metavar="K", help="the source cluster (default: in-cluster, $KUBECONFIG)")
    sync.add_argument("--to", required=True, metavar="K", help="the kubeconfig of the cluster to keep in step")
    sync.add_argument("--duration", metavar="D", help="stop after this long (10m, 1h; default: until interrupted)")


def snapshot_command(console: Console, args: argparse.Namespace) -> int:
    if args.snapshot_command == "sync":
        return sync_command(console, args)
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


def sync_command(console: Console, args: argparse.Namespace) -> int:
    try:
        duration = options.seconds("--duration", args.duration) if args.duration else None
        source = kube_cluster(args.kubeconfig)
        target = kube_cluster(args.to, option="--to")
    except options.UsageError as e:
        options.print_error(console, str(e))
        return 2
    syncer = Syncer(source, target)
    said = Console(stderr=True)

    async def announce() -> None:
        await syncer.synced.wait()
        said.print(f"synced {syncer.applied} objects; following changes", highlight=False, soft_wrap=True)

    async def follow() -> None:
        announcing = asyncio.ensure_future(announce())
        try:
            await syncer.run()
        finally:
            announcing.cancel()

    async def go() -> None:
        try:
            await until_stopped(follow(), duration=duration)
        finally:
            await source.close()
            await target.close()

    try:
        asyncio.run(go())
    except ApiError as e:
        options.print_error(console, f"syncing: {e}")
        return 1
    refused = f", {syncer.refused} refused ({'; '.join(syncer.reasons)})" if syncer.refused else ""
    said.print(f"applied {syncer.applied} objects and changes{refused}", highlight=False, soft_wrap=True)
    return 0
