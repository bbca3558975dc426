"""SchedulingBasic through HTTP: the scheduler in this process, `kubesched cluster up` (the API
server and its store, no kubelets, as scheduler_perf's nodes have none) in another.

.venv/bin/python -m bench.scheduling_http [--nodes N] [--initial I] [--measured M]

Pods (upstream's pod-default.yaml) are created through the API (64 requests in flight) as
scheduler_perf's createPods does, by a third process of their own (started beforehand, told when
to begin), so the scheduler's process only schedules; throughput is measured by the collector
`kubesched bench` uses (`kubesched.workloads.collector`, scheduler_perf's).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import re
import subprocess
import sys
import tempfile
import time
from multiprocessing.synchronize import Event
from pathlib import Path

from kubesched.cli.runtime import tune_gc
from kubesched.client import KubeCluster
from kubesched.clock import RealClock
from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.workloads.collector import ThroughputCollector, TickerThread
from kubesched.workloads.templates import make_pod_from

IN_FLIGHT = 64


def start_server(nodes: int, kubeconfig: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "kubesched.cli.main", "cluster", "up", "--nodes", str(nodes), "--port", "0"]
    command += ["--no-kubelets"]  # as scheduler_perf: nodes without kubelets, bound pods stay as bound
    server = subprocess.Popen([*command, "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    for line in server.stdout:
        if re.search(r"is up at", line):
            return server
    raise RuntimeError("cluster up did not start")


async def create(kubeconfig: Path, first: int, count: int) -> None:
    names = iter(range(first, first + count))
    async with KubeCluster.from_kubeconfig(kubeconfig, qps=0) as cluster:

        async def worker() -> None:
            for i in names:
                await cluster.create(make_pod_from("pod-default.yaml", i, "default"))

        await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))


def _creator(kubeconfig: Path, first: int, count: int, go: Event) -> None:
    go.wait()
    asyncio.run(create(kubeconfig, first, count))


class Creator:
    """Pods created by a process of their own, once `start` is called."""

    def __init__(self, kubeconfig: Path, first: int, count: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._go = context.Event()
        self._process = context.Process(target=_creator, args=(kubeconfig, first, count, self._go), daemon=True)
        self._process.start()

    def start(self) -> None:
        self._go.set()

    async def wait(self) -> None:
        while self._process.is_alive():
            await asyncio.sleep(0.05)
        if self._process.exitcode != 0:
            raise RuntimeError(f"the pod creator exited with {self._process.exitcode}")


async def measure(nodes: int, initial: int, measured: int, kubeconfig: Path) -> dict[str, object]:
    registry = in_tree_registry()
    async with KubeCluster.from_kubeconfig(kubeconfig, qps=0) as cluster:
        scheduler = Scheduler(cluster, RealClock(), default_config(registry), registry, identity="bench")
        task = asyncio.ensure_future(scheduler.run())
        while not scheduler.synced or len(scheduler.cache.nodes) < nodes:
            await asyncio.sleep(0.1)
        first, then = Creator(kubeconfig, 0, initial), Creator(kubeconfig, initial, measured)
        first.start()
        await first.wait()
        while scheduler.scheduled < initial:
            await asyncio.sleep(0.05)
        start_bound = scheduler.scheduled
        collector = ThroughputCollector()
        ticker = TickerThread(collector, lambda: scheduler.scheduled - start_bound)
        ticker.start()
        began = time.perf_counter()
        then.start()
        while scheduler.scheduled < start_bound + measured:
            await asyncio.sleep(0.01)
        seconds = time.perf_counter() - began
        ticker.stop()
        await then.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return {**collector.throughput.to_json(), "overall": round(measured / seconds, 1)}


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
    print(f"SchedulingBasic over HTTP, {args.nodes} nodes, {args.initial} + {args.measured} pods: {result}")


if __name__ == "__main__":
    main()
