"""`kubesched cluster up`: serve the embedded cluster (and, with `--scheduler`, run kubesched's
scheduler in it) until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import secrets
from pathlib import Path

from lightkube.resources import core_v1
from rich.console import Console

from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.apiserver.rbac import RBAC
from kubesched.cli import options
from kubesched.cli.cluster import ClusterSpec, EmbeddedCluster, serve_forever
from kubesched.cli.runtime import until_stopped
from kubesched.cluster.journal import JournalError
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.scheduler.discovery import PluginLoadError
from kubesched.whatif.snapshot import Snapshot, SnapshotError, load


def _scheduler_config(args: argparse.Namespace, registry: Registry) -> SchedulerConfig | None:
    if not args.scheduler_config:
        return None
    if not args.scheduler:
        raise options.UsageError("--scheduler-config needs --scheduler")
    return options.scheduler_config("--scheduler-config", args.scheduler_config, registry)


def _access(args: argparse.Namespace) -> tuple[str | None, bool]:
    """The token to require (the file's; with --tls alone, a generated one), and whether it was
    generated. An address other than loopback serves an open API only when asked to."""
    token = options.token(args.token_file)
    generated = False
    if token is None and (args.tls or args.authorization == RBAC):
        token, generated = secrets.token_urlsafe(32), True
    if token is None and not args.allow_unauthenticated and not options.is_loopback(args.host):
        raise options.UsageError(
            f"--host {args.host}: the API would be open to anyone who can reach that address; give --token-file "
            "or --tls to require a token, or --allow-unauthenticated"
        )
    return token, generated


def _ui_actions(args: argparse.Namespace) -> bool:
    if args.ui_actions and not args.scheduler:
        raise options.UsageError("--ui-actions needs --scheduler (the UI is the scheduler's)")
    return bool(args.ui_actions)


def _snapshot(path: str | None) -> Snapshot | None:
    if path is None:
        return None
    try:
        return load(Path(path))
    except SnapshotError as e:
        raise options.UsageError(f"--from: {e}") from None


def cluster_up(console: Console, args: argparse.Namespace) -> int:
    if args.etcd and args.data_dir:
        raise options.UsageError("--etcd: a cluster is kept in --data-dir or in --etcd, not both")
    token, generated = _access(args)
    registry = options.registry(args.plugin)
    snapshot = _snapshot(args.snapshot)
    nodes = args.nodes if args.nodes is not None else 0 if snapshot else 3
    spec = ClusterSpec(
        nodes=options.at_least("--nodes", nodes, 0),
        snapshot=snapshot,
        template=options.node_template(args.node_template),
        host=args.host,
        port=args.port,
        token=token,
        history=options.at_least("--watch-history", args.watch_history, 1),
        event_ttl=args.event_ttl,
        results=options.result_store(args),
        tls=True if args.tls else None,
        authorization=args.authorization,
        kubelets=args.kubelets,
        builtin_controllers=options.controllers(args.controllers),
        scheduler=args.scheduler,
        scheduler_port=options.at_least("--scheduler-port", args.scheduler_port, 0),
        # the scheduler's endpoints have no authentication: off loopback only when asked to
        scheduler_host=args.host if args.allow_unauthenticated else "127.0.0.1",
        scheduler_config=_scheduler_config(args, registry),
        registry=registry,
        ui_actions=_ui_actions(args),
        data_dir=Path(args.data_dir) if args.data_dir else None,
        data_sync=args.data_sync,
        etcd=args.etcd,
        etcd_prefix=args.etcd_prefix,
    )

    def ready(cluster: EmbeddedCluster) -> None:
        path = write_kubeconfig(args.kubeconfig, cluster.url, token=token, ca_pem=cluster.ca_pem).resolve()
        saved = f" from {args.snapshot} ({len(snapshot.items)} objects)" if snapshot else ""
        if cluster.store.restored:
            saved = f" as it was kept in {spec.kept_in}"
        elif spec.kept_in:
            saved += f", kept in {spec.kept_in}"
        shown = len(cluster.store.list(core_v1.Node).items) if cluster.store.restored else nodes
        console.print(
            f"kubesched cluster is up at [bold]{cluster.url}[/bold]{saved} with {shown} fake nodes.", soft_wrap=True
        )
        if generated:
            console.print("  every request needs the generated token written into the kubeconfig")
        if args.authorization == RBAC:
            console.print(
                "  RBAC decides every request; the kubeconfig's token is in system:masters, and "
                "`kubectl create token SERVICEACCOUNT` signs a ServiceAccount in",
                soft_wrap=True,
            )
        console.print(f"  export KUBECONFIG={path}")
        console.print("  kubectl get nodes")
        if cluster.scheduler_url:
            console.print(
                f"kubesched scheduler is running, serving /healthz, /metrics and /debug/queue at "
                f"[bold]{cluster.scheduler_url}[/bold].",
                soft_wrap=True,
            )
            console.print(f"  kubesched queue --url {cluster.scheduler_url}")
            login = f"?token={spec.token}" if spec.token else ""
            console.print(f"  the UI: {cluster.scheduler_url}/ui/{login}", soft_wrap=True)
        for entry in cluster.controllers:
            console.print(f"  controller {entry.name} ({entry.source}) is running")
        console.print("Press Ctrl-C to stop.")

    try:
        asyncio.run(until_stopped(serve_forever(spec, ready)))
    except PluginLoadError as e:
        options.print_error(console, str(e))
        return 2
    except SnapshotError as e:
        options.print_error(console, f"--from: {e}")
        return 2
    except JournalError as e:
        options.print_error(console, f"{'--etcd' if args.etcd else '--data-dir'}: {e}")
        return 2
    except OSError as e:
        ports = f"{args.port} (scheduler {args.scheduler_port})" if args.scheduler else f"{args.port}"
        options.print_error(console, f"cannot serve on {args.host}:{ports}: {e}")
        return 1
    console.print("kubesched cluster stopped.")
    return 0
