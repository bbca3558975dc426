"""`scheduling-basic` through HTTP: the scheduler in this process, `kubesched cluster up` (the API
server and its store, no kubelets, as scheduler_perf's nodes have none) in another.

.venv/bin/python -m bench.scheduling_http [--nodes N] [--initial I] [--measured M]

Pods are created through the API (64 requests in flight) as scheduler_perf's createPods does;
throughput is sampled as `kubesched bench` samples it (pods bound per second while measured pods
are pending, first sample dropped).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kubesched.cli.runtime import tune_gc
from kubesched.clock import RealClock
from kubesched.cluster.kube import KubeCluster
from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.workloads.runner import make_pod

IN_FLIGHT = 64
REQUESTS = {"cpu": "100m", "memory": "500Mi"}


def start_server(nodes: int, kubeconfig: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "kubesched.cli.main", "cluster", "up", "--nodes", str(nodes), "--port", "0"]
    command += ["--no-kubelets"]  # as scheduler_perf: nodes without kubelets, bound pods stay as bound
    server = subprocess.Popen([*command, "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    for line in server.stdout:
        if re.search(r"is up at", line):
            return server
    raise RuntimeError("cluster up did not start")


async def create(cluster: KubeCluster, first: int, count: int) -> None:
    names = iter(range(first, first + count))

    async def worker() -> None:
        for i in names:
            await cluster.create(make_pod(f"pod-{i}", REQUESTS))

    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))


async def measure(nodes: int, initial: int, measured: int, kubeconfig: Path) -> dict[str, object]:
    registry = in_tree_registry()
    async with KubeCluster.from_kubeconfig(kubeconfig, qps=0) as cluster:
        scheduler = Scheduler(cluster, RealClock(), default_config(registry), registry, identity="bench")
        task = asyncio.ensure_future(scheduler.run())
        while not scheduler.synced or len(scheduler.cache.nodes) < nodes:
            await asyncio.sleep(0.1)
        await create(cluster, 0, initial)
        while scheduler.scheduled < initial:
            await asyncio.sleep(0.05)
        start_bound, samples = scheduler.scheduled, []
        creating = asyncio.ensure_future(create(cluster, initial, measured))
        began, last = time.perf_counter(), start_bound
        while scheduler.scheduled < start_bound + measured:
            await asyncio.sleep(1.0)
            samples.append(scheduler.scheduled - last)
            last = scheduler.scheduled
        seconds = time.perf_counter() - began
        await creating
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    kept = sorted(samples[1:])
    return {
        "p50": kept[len(kept) // 2] if kept else 0,
        "average": round(statistics.fmean(kept), 1) if kept else 0.0,
        "overall": round(measured / seconds, 1),
        "samples": len(kept),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--initial", type=int, default=1000)
    parser.add_argument("--measured", type=int, default=10000)
    args = parser.parse_args()
    tune_gc()
    with tempfile.TemporaryDirectory() as scratch:
        kubeconfig = Path(scratch) / "kubeconfig"
        server = start_server(args.nodes, kubeconfig)
        try:
            result = asyncio.run(measure(args.nodes, args.initial, args.measured, kubeconfig))
        finally:
            server.terminate()
            server.wait(10)
    print(f"scheduling-basic over HTTP, {args.nodes} nodes, {args.initial} + {args.measured} pods: {result}")


if __name__ == "__main__":
    main()
