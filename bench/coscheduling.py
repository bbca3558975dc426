"""Coscheduling throughput: PodGroups of pods scheduled whole, on the memory cluster and the real clock.

.venv/bin/python -m bench.coscheduling [--groups G] [--size S] [--nodes N] [--repeat R]

`--nodes` 4-CPU nodes (no kubelets, as scheduler_perf's nodes), `--groups` PodGroups with
minMember = `--size`, and `--size` 100m pods each, created at once, scheduled by the package's
scheduler-plugins-scheduler profile (Coscheduling, CapacityScheduling, NodeResourcesAllocatable).
The figures: pods bound per second from the first creation to the last binding, and the time the
pods waited at Permit (from their assume to their binding: a group's first pod waits for its last).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

import msgspec
import yaml
from lightkube.resources import apiextensions_v1, core_v1

import kubesched_scheduler_plugins
from kubesched.clock import RealClock
from kubesched.config import load_file
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import plugin_registry
from kubesched.sim import NodeTemplate, make_nodes
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import Tracer
from kubesched.workloads.runner import make_pod
from kubesched_scheduler_plugins.apis import POD_GROUP_LABEL, PodGroup, PodGroupSpec

MANIFESTS = Path(kubesched_scheduler_plugins.__file__).parent / "manifests"


class _Waits:
    """Assume and bind times per pod, from the trace."""

    def __init__(self, now: object) -> None:
        self.assumed: dict[str, float] = {}
        self.bound: dict[str, float] = {}

    def write(self, record: object) -> None:
        kind = record.kind  # type: ignore[attr-defined]
        if kind == "cache.assumed":
            self.assumed.setdefault(record.pod, record.time)  # type: ignore[attr-defined]
        elif kind == "bind.done":
            self.bound[record.pod] = record.time  # type: ignore[attr-defined]


async def run(groups: int, size: int, nodes: int) -> tuple[float, list[float]]:
    clock = RealClock()
    store = MemoryStore(clock=clock)
    for name in ("podgroups",):
        data = yaml.safe_load((MANIFESTS / f"crd-{name}.yaml").read_text())
        store.create(msgspec.convert(data, apiextensions_v1.CustomResourceDefinition))
    for node in make_nodes(nodes, NodeTemplate(zones=())):
        store.create(node)
    registry = plugin_registry()
    config = load_file(MANIFESTS / "scheduler-config.yaml", registry)
    tracer = Tracer(clock.now)
    waits = _Waits(clock.now)
    tracer.add_sink(waits)
    scheduler = Scheduler(MemoryCluster(store), clock, config, registry, tracer=tracer, identity="bench")
    task = asyncio.ensure_future(scheduler.run())
    await asyncio.sleep(0.2)
    began = time.perf_counter()
    for g in range(groups):
        name = f"g{g}"
        store.create(PodGroup(metadata={"name": name, "namespace": "default"}, spec=PodGroupSpec(minMember=size)))
        for i in range(size):
            pod = make_pod(f"{name}-{i}", {"cpu": "100m", "memory": "64Mi"}, {POD_GROUP_LABEL: name})
            pod.spec.schedulerName = "scheduler-plugins-scheduler"
            store.create(pod)
    total = groups * size
    while scheduler.scheduled < total:
        await asyncio.sleep(0.05)
    seconds = time.perf_counter() - began
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    bound = [p for p in store.list(core_v1.Pod).items if p.spec.nodeName]
    assert len(bound) == total
    permit_waits = [waits.bound[k] - waits.assumed[k] for k in waits.bound if k in waits.assumed]
    return total / seconds, permit_waits


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rates = []
    for _ in range(args.repeat):
        rate, waits = asyncio.run(run(args.groups, args.size, args.nodes))
        rates.append(rate)
        waits.sort()
        p50, p99 = waits[len(waits) // 2], waits[int(len(waits) * 0.99) - 1]
        print(
            f"{args.groups} groups x {args.size} pods on {args.nodes} nodes: {rate:.0f} pods/s; "
            f"Permit wait p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, max {waits[-1] * 1000:.1f} ms",
            flush=True,
        )
    print(f"median {statistics.median(rates):.0f} pods/s (min {min(rates):.0f}, max {max(rates):.0f})")


if __name__ == "__main__":
    main()
