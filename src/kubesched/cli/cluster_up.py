"""`kubesched cluster up`: serve the embedded cluster until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from pathlib import Path

from rich.console import Console

from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, EmbeddedCluster, serve_forever
from kubesched.sim import NodeTemplate


def cluster_up(console: Console, args: argparse.Namespace) -> int:
    if args.nodes < 0:
        console.print("[red]--nodes must be at least 0[/red]")
        return 2
    try:
        template = NodeTemplate.from_file(args.node_template) if args.node_template else None
    except (OSError, ValueError) as e:
        console.print(f"[red]--node-template: {e}[/red]")
        return 2
    token = None
    if args.token_file:
        try:
            token = Path(args.token_file).read_text().strip()
        except OSError as e:
            console.print(f"[red]--token-file: {e}[/red]")
            return 2
        if not token:
            console.print(f"[red]--token-file: {args.token_file} is empty[/red]")
            return 2
    if args.watch_history < 1:
        console.print("[red]--watch-history must be at least 1[/red]")
        return 2
    spec = ClusterSpec(
        nodes=args.nodes,
        template=template,
        host=args.host,
        port=args.port,
        token=token,
        history=args.watch_history,
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
