"""An unschedulable backlog through the unschedulable-pods flushes, on the virtual clock: the Events
the store holds (repeats are series, not new objects; the store expires them after an hour) and the
process's resident memory after each flush.

.venv/bin/python -m bench.backlog [--pods N] [--flushes F]
"""

from __future__ import annotations

import argparse
import gc
import os

from lightkube.resources import core_v1

from kubesched.clock import VirtualClock
from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.sim import NodeTemplate, make_nodes
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.workloads.burst import make_pod

FLUSH_SECONDS = 300.0  # podMaxInUnschedulablePodsDuration
EVENT_TTL = 3600.0  # kube-apiserver's --event-ttl default, as `cluster up` keeps it


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--flushes", type=int, default=6)
    args = parser.parse_args()
    clock = VirtualClock()
    store = MemoryStore(clock=clock, watch_latency=0.001, event_ttl=EVENT_TTL)
    for node in make_nodes(3, NodeTemplate(capacity={"cpu": "1", "memory": "4Gi", "pods": "110"})):
        store.create(node)
    registry = in_tree_registry()
    scheduler = Scheduler(MemoryCluster(store), clock, default_config(registry), registry)
    task = clock.loop.create_task(scheduler.run())
    clock.advance(0.1)
    for i in range(args.pods):
        store.create(make_pod(f"backlog-{i}", cpu="2", scheduler="default-scheduler"))  # fits no node
    clock.advance(60)
    start = clock.now()
    print("flush  minute  attempts  Event objects  in series  RSS MiB")
    for flush in range(args.flushes + 1):
        events = store.list(core_v1.Event).items
        counted = sum((e.series.count if e.series else 1) for e in events)
        gc.collect()
        attempts = sum(scheduler.attempt_results.values())
        minute = (clock.now() - start) / 60
        print(f"{flush:>5}  {minute:>6.0f}  {attempts:>8}  {len(events):>13}  {counted:>9}  {rss_mib():>7.1f}")
        clock.advance(FLUSH_SECONDS)
    task.cancel()
    clock.advance(0.01)


if __name__ == "__main__":
    main()
