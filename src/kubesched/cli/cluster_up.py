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
from kubesched.cli.cluster import ClusterSpec, EmbeddedCluster, serve_forever
from kubesched.cli.commands import Subparsers
from kubesched.cli.runtime import until_stopped
from kubesched.config import SchedulerConfig
from kubesched.console import options
from kubesched.controllers import CONTROLLERS
from kubesched.framework.registry import Registry
from kubesched.scheduler.discovery import PluginLoadError
from kubesched.scheduler.server import DEFAULT_PORT
from kubesched.storage.journal import JournalError
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
    spec = _spec(args, token=token, registry=registry, snapshot=snapshot, nodes=nodes)

    def ready(cluster: EmbeddedCluster) -> None:
        _announce(console, args, spec, cluster, snapshot=snapshot, nodes=nodes, generated=generated)

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


def _spec(
    args: argparse.Namespace, *, token: str | None, registry: Registry, snapshot: Snapshot | None, nodes: int
) -> ClusterSpec:
    """The cluster the options ask for, each checked (UsageError naming the option)."""
    return ClusterSpec(
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


def _announce(
    console: Console,
    args: argparse.Namespace,
    spec: ClusterSpec,
    cluster: EmbeddedCluster,
    *,
    snapshot: Snapshot | None,
    nodes: int,
    generated: bool,
) -> None:
    """What is up and how to reach it, printed once the cluster serves."""
    path = write_kubeconfig(args.kubeconfig, cluster.url, token=spec.token, ca_pem=cluster.ca_pem).resolve()
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


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    cluster = sub.add_parser(name, help=help)
    cluster.set_defaults(run=cluster_up)
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
    _serving_options(up)
    _simulation_options(up)
    _storage_options(up)
    _scheduler_options(up)


def _serving_options(up: argparse.ArgumentParser) -> None:
    """Where and how the API is served: address, port, kubeconfig, tokens, TLS, authorization."""
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


def _simulation_options(up: argparse.ArgumentParser) -> None:
    """What runs beside the API: the fake kubelets and the built-in controllers."""
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


def _storage_options(up: argparse.ArgumentParser) -> None:
    """Where the cluster is kept (memory, SQLite, etcd) and for how long its history and Events."""
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


def _scheduler_options(up: argparse.ArgumentParser) -> None:
    """kubesched's scheduler run beside the cluster, and its UI."""
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
