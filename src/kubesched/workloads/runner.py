"""Run a scheduler_perf test case's workload against the memory cluster, the scheduler in the same
process on the real clock, and measure its throughput as scheduler_perf does (`collector`).

The operations run as upstream's runWorkload runs them: nodes from their template (labels given
round-robin), namespaces, pods from their template into `namespace-<op index>` or the namespace
the operation names, churn in the background, barriers. A createPods op with collectMetrics starts
the collector on its namespace, creates the pods, waits until all are scheduled, then stops it.
The API server is the memory store with the Priority admission plugin off, as in the API server
scheduler_perf starts (its templates set `spec.priority`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import resource
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from lightkube.resources import core_v1

from kubesched.api.objects import Served, meta_of, name_of
from kubesched.clock import RealClock
from kubesched.cluster import NotFound
from kubesched.config import default_config
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import Sink, Tracer
from kubesched.workloads.cases import (
    ATTEMPTED,
    Barrier,
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    CreatePodSets,
    DeletePods,
    Op,
    Selected,
)
from kubesched.workloads.collector import SUB_SECOND, Throughput, ThroughputCollector, TickerThread, measured
from kubesched.workloads.templates import make_namespace, make_node, make_object, make_pod_from

STALL_SECONDS = 30.0  # a workload whose pods stop being scheduled for this long fails
WAIT_POLL = 0.01  # how often a wait for scheduled pods looks


@dataclass
class Result:
    """One run of a workload."""

    workload: str
    params: dict[str, int]
    throughput: Throughput = field(default_factory=Throughput)  # the reported figure (`measured`)
    ticks: Throughput = field(default_factory=Throughput)  # scheduler_perf's one-second collector's
    scheduled: int = 0  # measured pods scheduled
    seconds: float = 0.0  # from the measured op's start to its last pod scheduled
    peak_rss_mib: float = 0.0

    @property
    def overall(self) -> float:
        return self.scheduled / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "throughput": self.throughput.to_json(),
            "oneSecond": self.ticks.to_json(),
            "scheduled": self.scheduled,
            "seconds": round(self.seconds, 3),
            "overallPodsPerSecond": round(self.overall, 1),
            "peakRssMiB": round(self.peak_rss_mib, 1),
        }


def make_pod(name: str, requests: dict[str, str], labels: dict[str, str] | None = None, **spec: object) -> core_v1.Pod:
    """A pod of one pause container with `requests`, `labels`, and more spec fields."""
    container = {"name": "pause", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests}}
    pod = core_v1.Pod.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": {"containers": [container], **spec},
        }
    )
    return cast(core_v1.Pod, pod)


class Stalled(RuntimeError):
    """Pods that should be scheduled are not, and nothing has moved for a while."""


# Any: a pod the Pod informer hands its handlers, read on each change without narrowing
def _attempted(pod: Any) -> bool:
    """Scheduled, or tried: scheduler_perf's isAttempted (any PodScheduled condition)."""
    if pod.spec.nodeName:
        return True
    return any(c.type == "PodScheduled" for c in (pod.status.conditions if pod.status else None) or ())


class ScheduledCounter:
    """Pods scheduled per namespace, counted as scheduler_perf's collector counts them: an added or
    updated pod that has a node and had none (from the scheduler's own pod informer); and pods
    scheduled or attempted, for barriers on the Attempted stage."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.attempted: Counter[str] = Counter()

    # Any: pods the Pod informer hands its handlers, read on each change without narrowing
    def __call__(self, old: Any | None, new: Any | None) -> None:
        if new is None:
            return
        if new.spec.nodeName and (old is None or not old.spec.nodeName):
            self.counts[new.metadata.namespace or ""] += 1
        if (old is None or not _attempted(old)) and _attempted(new):
            self.attempted[new.metadata.namespace or ""] += 1


class _Run:
    def __init__(
        self,
        selected: Selected,
        scheduler: Scheduler,
        store: MemoryStore,
        counter: ScheduledCounter,
        *,
        measure: bool = True,
    ) -> None:
        self.selected = selected
        self.measure = measure
        self.scheduler = scheduler
        self.store = store
        self.counter = counter
        self.result = Result(selected.name, selected.params)
        self.waiting: Counter[str] = Counter()  # pods each namespace's barrier waits for
        self.background: list[asyncio.Task[None]] = []  # churn, deletions not waited for
        self.next_node = 0

    def _unrolled(self) -> list[Op]:
        """The test case's ops with each createPodSets replaced by its createPods ops."""
        ops: list[Op] = []
        for op in self.selected.case.ops:
            if isinstance(op, CreatePodSets):
                for i in range(self.selected.count(op.count)):
                    ops.append(dataclasses.replace(op.pods, namespace=f"{op.namespace_prefix}-{i}"))
            else:
                ops.append(op)
        return ops

    async def run(self) -> None:
        for index, op in enumerate(self._unrolled()):
            if isinstance(op, CreateNodes):
                self._create_nodes(op, index)
            elif isinstance(op, CreateNamespaces):
                for i in range(self.selected.count(op.count)):
                    self._namespace(f"{op.prefix}-{i}", op.template)
            elif isinstance(op, CreatePods):
                await self._create_pods(op, index)
            elif isinstance(op, DeletePods):
                await self._delete_pods(op)
            elif isinstance(op, CreateAny):
                self._create_any(op)
            elif isinstance(op, Churn):
                self.background.append(asyncio.ensure_future(self._churn(op, index)))
            elif isinstance(op, Barrier):
                await self._barrier(op)
        for task in self.background:
            task.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)

    def _create_nodes(self, op: CreateNodes, index: int) -> None:
        count = self.selected.count(op.count)
        prefix = f"node-{index}-" if not op.template else None
        for i in range(count):
            node = make_node(op.template, self.next_node + i, prefix=prefix)
            if op.label_values:
                value = op.label_values[i % len(op.label_values)]
                meta = meta_of(node)
                meta.labels = {**(meta.labels or {}), op.label_key: value}
            self.store.create(node)
        self.next_node += count

    def _namespace(self, name: str, template: str = "") -> None:
        try:
            self.store.get(core_v1.Namespace, name)
        except NotFound:
            self.store.create(make_namespace(template, name))

    async def _create_pods(self, op: CreatePods, index: int) -> None:
        count = self.selected.count(op.count)
        namespace = op.namespace or f"namespace-{index}"
        path = op.template or self.selected.case.default_pod_template
        self._namespace(namespace)
        tickers: list[TickerThread] = []
        if op.collect_metrics and self.measure:
            counts = self.counter.counts
            for collector in (ThroughputCollector(), ThroughputCollector(interval=SUB_SECOND)):
                tickers.append(TickerThread(collector, lambda: counts[namespace]))
                tickers[-1].start()
        began = time.perf_counter()
        already = self.waiting[namespace]
        for i in range(count):
            self.store.create(make_pod_from(path, already + i, namespace))
        self.waiting[namespace] += count
        if op.skip_wait and not tickers:
            return
        try:
            await self._until(lambda: self.counter.counts[namespace] >= self.waiting[namespace])
        finally:
            for ticker in tickers:
                ticker.stop()
        if tickers:
            ticks, sub_second = (t.collector.throughput for t in tickers)
            self.result.seconds = time.perf_counter() - began
            self.result.scheduled = count
            self.result.ticks, self.result.throughput = ticks, measured(ticks, sub_second)

    async def _barrier(self, op: Barrier) -> None:
        counts = self.counter.attempted if op.stage == ATTEMPTED else self.counter.counts
        await self._until(lambda: all(counts[ns] >= n for ns, n in self.waiting.items()))

    async def _delete_pods(self, op: DeletePods) -> None:
        """The pods there now, deleted with the API's default grace: a pod with a finalizer stays,
        terminating, as nothing in the workload removes it."""
        wanted = dict(op.labels)
        pods: list[core_v1.Pod] = [
            p
            for p in self.store.list(core_v1.Pod, namespace=op.namespace).items
            if wanted.items() <= (meta_of(p).labels or {}).items()
        ]

        async def delete() -> None:
            for pod in pods:
                with contextlib.suppress(NotFound):
                    self.store.delete(core_v1.Pod, name_of(pod), namespace=op.namespace)
                if op.per_second:
                    await asyncio.sleep(1.0 / op.per_second)

        if op.skip_wait:
            self.background.append(asyncio.ensure_future(delete()))
        else:
            await delete()

    def _create_any(self, op: CreateAny) -> None:
        if op.namespace:
            self._namespace(op.namespace)
        for i in range(self.selected.count(op.count)):
            self.store.create(make_object(op.template, i, op.namespace))

    async def _until(self, done: Callable[[], bool]) -> None:
        """Until `done()`; Stalled when no pod is scheduled for STALL_SECONDS meanwhile."""
        seen, still = self.scheduler.scheduled, 0.0
        while not done():
            await asyncio.sleep(WAIT_POLL)
            if self.scheduler.scheduled != seen:
                seen, still = self.scheduler.scheduled, 0.0
                continue
            still += WAIT_POLL
            if still >= STALL_SECONDS:
                left = sum(max(0, n - self.counter.counts[ns]) for ns, n in self.waiting.items())
                raise Stalled(f"{left} pods still unscheduled after {STALL_SECONDS:g} s without progress")

    async def _churn(self, op: Churn, index: int) -> None:
        """Make (and, recreating, remove) objects of each template every `op.interval` seconds."""
        namespace = f"namespace-{index}"
        self._namespace(namespace)
        made: dict[str, list[Served]] = {path: [] for path in op.templates}
        serial = 0
        while True:
            for path in op.templates:
                mine = made[path]
                if op.mode == "recreate" and len(mine) >= op.number:
                    old = mine.pop(0)
                    with contextlib.suppress(NotFound):
                        self.store.delete(type(old), name_of(old), namespace=meta_of(old).namespace)
                if op.mode == "create" and op.number and len(mine) >= op.number:
                    continue
                mine.append(self.store.create(make_object(path, serial, namespace)))
            serial += 1
            await asyncio.sleep(op.interval)


async def play(selected: Selected, scheduler: Scheduler, store: MemoryStore, *, measure: bool = True) -> Result:
    """Run the workload's operations against `store` with `scheduler` running over it, on whatever
    clock the loop keeps (a sweep runs it on virtual time, `measure=False`: no throughput sampled)."""
    counter = ScheduledCounter()
    scheduler.shared_informers.informer(core_v1.Pod).add_handler(counter)
    work = _Run(selected, scheduler, store, counter, measure=measure)
    await work.run()
    return work.result


Inspect = Callable[[MemoryStore], None]


async def _run(
    selected: Selected,
    *,
    config: Mapping[str, object] | None,
    batch: bool,
    registry: Registry,
    record: bool,
    inspect: Inspect | None,
    sinks: Sequence[Sink],
) -> Result:
    clock = RealClock()
    tracer = Tracer(clock.now)
    for sink in sinks:
        tracer.add_sink(sink)
    store = MemoryStore(clock=clock, disable_admission=("Priority",), tracer=tracer)
    cluster = MemoryCluster(store)
    config_ = default_config(registry, **(config or {}))
    scheduler = Scheduler(
        cluster, clock, config_, registry, seed=0, identity="bench", record_results=record, tracer=tracer
    )
    scheduler.algorithm.batch = batch
    counter = ScheduledCounter()
    scheduler.shared_informers.informer(core_v1.Pod).add_handler(counter)
    task = asyncio.ensure_future(scheduler.run())
    await asyncio.sleep(0)
    work = _Run(selected, scheduler, store, counter)
    try:
        await work.run()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    if inspect is not None:
        inspect(store)
    work.result.peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return work.result


def run(
    selected: Selected,
    *,
    config: Mapping[str, object] | None = None,
    batch: bool = True,
    registry: Registry | None = None,
    record: bool = True,
    inspect: Inspect | None = None,
    sinks: Sequence[Sink] = (),
) -> Result:
    """Run the workload once; `batch=False` forces the per-node plugin methods, `record=False`
    keeps no attempt results (the result store's cost, measured), `inspect` is shown the store
    at the end (what the workload made and where it went); every trace record goes to `sinks`
    (tracing off without them: it slows a run)."""
    gc.collect()
    registry = registry or in_tree_registry()
    return asyncio.run(
        _run(selected, config=config, batch=batch, registry=registry, record=record, inspect=inspect, sinks=sinks)
    )
