"""`kubesched cluster up`: serve the embedded cluster until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal

from rich.console import Console

from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli import options
from kubesched.cli.cluster import ClusterSpec, EmbeddedCluster, serve_forever


def cluster_up(console: Console, args: argparse.Namespace) -> int:
    token = options.token(args.token_file)
    spec = ClusterSpec(
        nodes=options.at_least("--nodes", args.nodes, 0),
        template=options.node_template(args.node_template),
        host=args.host,
        port=args.port,
        token=token,
        history=options.at_least("--watch-history", args.watch_history, 1),
        tls=True if args.tls else None,
    )

    def ready(cluster: EmbeddedCluster) -> None:
        path = write_kubeconfig(args.kubeconfig, cluster.url, token=token, ca_pem=cluster.ca_pem).resolve()
        console.print(f"kubesched cluster is up at [bold]{cluster.url}[/bold] with {args.nodes} fake nodes.")
        console.print(f"  export KUBECONFIG={path}")
        console.print("  kubectl get nodes")
        console.print("Press Ctrl-C to stop.")

    async def main() -> None:
        task = asyncio.ensure_future(serve_forever(spec, ready))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    try:
        asyncio.run(main())
    except OSError as e:
        console.print(f"[red]cannot serve on {args.host}:{args.port}: {e}[/red]")
        return 1
    console.print("kubesched cluster stopped.")
    return 0
