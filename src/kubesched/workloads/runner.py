"""Run a workload against the memory cluster on the real clock and measure throughput the way
scheduler_perf does: the number of pods scheduled in each one-second window while measured pods
are pending; the first window is dropped; mean and percentiles over the rest."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import resource
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, cast

from lightkube.models import meta_v1
from lightkube.resources import core_v1, scheduling_v1

from kubesched.clock import RealClock
from kubesched.cluster import AlreadyExists
from kubesched.cluster.memory import MemoryCluster, MemoryStore
from kubesched.config import default_config
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.sim import NodeTemplate, make_nodes
from kubesched.workloads.spec import Barrier, CreateNodes, CreatePods, Settle, Workload

SAMPLE_SECONDS = 1.0
STALL_SECONDS = 30.0  # a workload whose pods stop being scheduled for this long fails


@dataclass
class Result:
    workload: str
    params: dict[str, Any]
    samples: list[float] = field(default_factory=list)
    scheduled: int = 0
    seconds: float = 0.0
    peak_rss_mib: float = 0.0

    def summary(self) -> dict[str, Any]:
        s = sorted(self.samples)

        def pct(p: float) -> float:
            return s[min(len(s) - 1, round(p * (len(s) - 1)))] if s else 0.0

        return {
            "workload": self.workload,
            "params": self.params,
            "scheduled": self.scheduled,
            "seconds": round(self.seconds, 3),
            "throughput": {
                "average": round(statistics.fmean(s), 1) if s else 0.0,
                "perc50": pct(0.5),
                "perc90": pct(0.9),
                "perc99": pct(0.99),
                "samples": len(s),
            },
            "overall_pods_per_second": round(self.scheduled / self.seconds, 1) if self.seconds else 0.0,
            "peak_rss_mib": round(self.peak_rss_mib, 1),
        }


def make_pod(name: str, requests: dict[str, str], labels: dict[str, str] | None = None, **spec: Any) -> core_v1.Pod:
    """A workload pod: one pause container with `requests`, `labels`, and more spec fields."""
    container = {"name": "pause", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests}}
    pod = core_v1.Pod.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": {"containers": [container], **spec},
        }
    )
    return cast(core_v1.Pod, pod)


async def _run(
    workload: Workload, *, config: dict[str, Any] | None, batch: bool, registry: Registry, record: bool
) -> Result:
    clock = RealClock()
    store = MemoryStore(clock=clock)
    cluster = MemoryCluster(store)
    config_ = default_config(registry, **(config or {}))
    scheduler = Scheduler(cluster, clock, config_, registry, seed=0, identity="bench", record_results=record)
    scheduler.algorithm.batch = batch
    result = Result(workload.name, workload.params)
    created = 0  # pods created that are expected to be scheduled
    named = 0  # pods created
    task = asyncio.ensure_future(scheduler.run())
    await asyncio.sleep(0)
    for op in workload.operations:
        if isinstance(op, CreateNodes):
            for node in make_nodes(op.count, NodeTemplate(capacity=op.capacity, zones=op.zones)):
                store.create(node)
        elif isinstance(op, CreatePods):
            start_bound = scheduler.scheduled
            first = named
            spec = dict(op.spec)
            if op.priority is not None:
                spec["priorityClassName"] = _priority_class(store, op.priority)
            for i in range(op.count):
                store.create(make_pod(f"pod-{first + i}", op.requests, op.labels, **spec))
            named += op.count
            if op.schedulable:
                created += op.count
            if op.collect_metrics:
                began = time.perf_counter()
                await _until_scheduled(scheduler, created, SAMPLE_SECONDS, result.samples)
                result.seconds = time.perf_counter() - began
                result.scheduled = scheduler.scheduled - start_bound
                result.samples = result.samples[1:]
        elif isinstance(op, Barrier):
            await _until_scheduled(scheduler, created, 0.05)
        elif isinstance(op, Settle):
            await _settle(scheduler)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    result.peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def _priority_class(store: MemoryStore, value: int) -> str:
    """The name of a PriorityClass of `value`, made if missing."""
    name = f"priority-{value}"
    with contextlib.suppress(AlreadyExists):
        store.create(scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name=name), value=value))
    return name


class Stalled(RuntimeError):
    """Pods that should be scheduled are not, and nothing has moved for a while."""


async def _until_scheduled(
    scheduler: Scheduler, target: int, period: float, samples: list[float] | None = None
) -> None:
    """Until `target` pods are bound, looking every `period` seconds (and appending the pods bound
    in each period to `samples`); Stalled when none is bound for STALL_SECONDS."""
    stalled, seen = 0.0, scheduler.scheduled
    while scheduler.scheduled < target:
        await asyncio.sleep(period)
        if samples is not None:
            samples.append(float(scheduler.scheduled - seen))
        stalled = stalled + period if scheduler.scheduled == seen else 0.0
        if stalled >= STALL_SECONDS:
            waiting = target - scheduler.scheduled
            raise Stalled(f"{waiting} pods still unscheduled after {STALL_SECONDS:g} s without progress")
        seen = scheduler.scheduled


async def _settle(scheduler: Scheduler) -> None:
    """Until nothing is left to try or in flight, and the failures' events and status updates
    are written and seen by the informers."""
    queue = scheduler.queue
    while True:
        await scheduler.wait_for_bindings()
        await asyncio.sleep(0.1)
        if not (queue.pending()["active"] or queue.pending()["backoff"] or len(queue.in_flight)):
            return


def run(
    workload: Workload,
    *,
    config: dict[str, Any] | None = None,
    batch: bool = True,
    registry: Registry | None = None,
    record: bool = True,
) -> Result:
    """Run the workload; `batch=False` forces the per-node plugin methods, `record=False` keeps no
    attempt results (the result store's cost, measured)."""
    gc.collect()
    registry = registry or in_tree_registry()
    return asyncio.run(_run(workload, config=config, batch=batch, registry=registry, record=record))
