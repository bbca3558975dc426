"""How long `explain` takes for one pod at scale: a scheduled pod and one that fits nowhere, on a
scheduler with N fake nodes (virtual clock).

.venv/bin/python -m bench.explain [--nodes N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from kubesched.clock import VirtualClock
from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.scheduler.explain import explain_pod
from kubesched.sim import make_nodes
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.workloads.burst import make_pod


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=15_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    clock = VirtualClock()
    store = MemoryStore(clock=clock, watch_latency=0.001)
    for node in make_nodes(args.nodes):
        store.create(node)
    registry = in_tree_registry()
    scheduler = Scheduler(MemoryCluster(store), clock, default_config(registry), registry)
    task = clock.loop.create_task(scheduler.run())
    clock.advance(1)
    store.create(make_pod("fits", cpu="1", scheduler="default-scheduler"))
    store.create(make_pod("too-big", cpu="64", scheduler="default-scheduler"))
    clock.advance(2)
    for key in ("default/fits", "default/too-big"):
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            json.dumps(explain_pod(scheduler, key))  # what /debug/pods answers
            times.append(time.perf_counter() - start)
        print(
            f"{key} at {args.nodes} nodes, {args.repeat} runs: median {statistics.median(times) * 1000:.1f} ms"
            f" (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f})"
        )
    task.cancel()
    clock.advance(0.01)


if __name__ == "__main__":
    main()
