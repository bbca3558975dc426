"""One point of a sweep, run: its cluster in a memory store on virtual time, the scheduler (and
fake kubelets, and the controllers asked for) over it, the pods arriving at their times; the run
ends when every pod is bound or at the horizon, and the metrics are taken.

A point's run is deterministic for its seed: the same document gives the same metrics in any
process, on any machine (`wallSeconds` aside). A point fails — and says why — when its document
cannot be simulated (a field, a configuration, a plugin that does not load) or when a plugin
raised during the run (the scheduler treats that as an error status; a sweep does not measure it).
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import msgspec
from lightkube.resources import core_v1

from kubesched.api.objects import meta_of
from kubesched.clock import VirtualClock
from kubesched.cluster.codec import decoder
from kubesched.config import SchedulerConfig
from kubesched.config.load import ConfigError, load_data
from kubesched.controllers import ControllerManager, parse_controllers
from kubesched.framework import FrameworkError
from kubesched.framework.preemption import preempted
from kubesched.framework.registry import Registry
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import Controller, PluginLoadError, controllers, plugin_registry
from kubesched.sim import FakeKubelets
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import Record, Tracer
from kubesched.whatif.scenario.fields import ScenarioError
from kubesched.whatif.scenario.runner import stored
from kubesched.whatif.sweep import plan as plans
from kubesched.whatif.sweep.metrics import BUILTIN, WALL, Metric, Outcome, declared, measure
from kubesched.whatif.sweep.spec import Job
from kubesched.workloads import runner as bench_runner
from kubesched.workloads.cases import select

ATTEMPT_SECONDS = 0.001  # each scheduling attempt takes a virtual millisecond
OK, FAILED = "ok", "failed"


class PointError(Exception):
    """Why a point could not be measured, in one line."""


class PointJson(TypedDict):
    """A PointResult as a results file keeps it, and as executors hand it back."""

    index: int
    point: dict[str, object]
    status: str
    error: NotRequired[str]  # a failed point's
    metrics: dict[str, object]  # by name: a number, or None where the metric does not apply
    wallSeconds: float


@dataclass
class PointResult:
    """A point's outcome: `ok` with its metrics, or `failed` with the reason."""

    index: int
    coordinates: dict[str, object]
    status: str
    metrics: dict[str, object] = field(default_factory=dict)
    error: str = ""
    wall: float = 0.0

    def to_json(self) -> PointJson:
        wall = round(self.wall, 3)
        if self.error:  # the error comes before the metrics in a results file's line
            return {
                "index": self.index,
                "point": self.coordinates,
                "status": self.status,
                "error": self.error,
                "metrics": self.metrics,
                "wallSeconds": wall,
            }
        return {
            "index": self.index,
            "point": self.coordinates,
            "status": self.status,
            "metrics": self.metrics,
            "wallSeconds": wall,
        }

    @classmethod
    def from_json(cls, data: PointJson) -> PointResult:
        return cls(
            index=int(data["index"]),
            coordinates=dict(data["point"]),
            status=str(data["status"]),
            metrics=dict(data.get("metrics") or {}),
            error=str(data.get("error") or ""),
            wall=float(data.get("wallSeconds") or 0.0),
        )


@dataclass
class Run:
    """A point's finished run: what it ended with, its metrics, the store, and (with `keep_trace`)
    its trace records (for the UI)."""

    outcome: Outcome
    metrics: dict[str, object]
    store: MemoryStore
    metric_list: list[Metric]
    records: list[Record] = field(default_factory=list)


class _Watcher:
    """What the run sees happen to pods, from the scheduler's own pod informer: when each pending
    pod arrived and was bound, the victims, and whether any pod is still unbound."""

    def __init__(self, now: Callable[[], float]) -> None:
        self.now = now
        self.start = now()
        self.outcome = Outcome(nodes=[], pods=[])
        self.unbound: set[str] = set()
        self.changed = asyncio.Event()

    # Any: pods the Pod informer hands its handlers, read on each change without narrowing
    def __call__(self, old: Any | None, new: Any | None) -> None:
        pod = new if new is not None else old
        assert pod is not None
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        at = self.now() - self.start
        if new is None:
            self.unbound.discard(key)
        elif not new.spec.nodeName:
            if old is None:
                self.outcome.arrived.setdefault(key, at)
                self.unbound.add(key)
        else:
            if (old is not None and not old.spec.nodeName) or key in self.unbound:
                self.outcome.bound.setdefault(key, at)
            self.unbound.discard(key)
        if new is not None and preempted(new):
            self.outcome.preempted.add(key)
        self.changed.set()

    def arriving(self, pod: core_v1.Pod) -> None:
        """`pod` is being created now (the informer sees it a moment later)."""
        meta = meta_of(pod)
        key = f"{meta.namespace}/{meta.name}"
        self.outcome.arrived.setdefault(key, self.now() - self.start)
        self.unbound.add(key)

    async def settled(self, deadline: float) -> None:
        """Until no pod is unbound, or the deadline."""
        while self.unbound:
            remaining = deadline - self.now()
            if remaining <= 0:
                return
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except TimeoutError:
                return


def _pod(entry: plans.Pods, index: int, scheduler_name: str, where: str) -> core_v1.Pod:
    body = msgspec.json.decode(msgspec.json.encode(entry.template))
    metadata = body.setdefault("metadata", {})
    metadata["name"] = entry.name.format(i=index)
    metadata.setdefault("namespace", entry.namespace)
    body.setdefault("spec", {}).setdefault("schedulerName", scheduler_name)
    try:
        pod: core_v1.Pod = decoder(core_v1.Pod).decode(msgspec.json.encode({**body, "apiVersion": "v1", "kind": "Pod"}))
    except msgspec.ValidationError as e:
        raise PointError(f"{where}.template: {e}") from None
    return pod


async def _arrivals(
    plan: plans.Plan, store: MemoryStore, scheduler_name: str, clock: VirtualClock, watcher: _Watcher
) -> None:
    start = clock.now()
    for at, j, i in plan.arrivals():
        await clock.sleep(max(0.0, start + at - clock.now()))
        pod = _pod(plan.pods[i], j, scheduler_name, f"workload.pods[{i}]")
        watcher.arriving(pod)
        store.create(pod)


async def _bench(plan: plans.Plan, scheduler: Scheduler, store: MemoryStore) -> None:
    assert plan.bench is not None
    try:
        selected = select(plan.bench.workload, plan.bench.params)
    except KeyError as e:
        raise PointError(f"cluster.bench: {e.args[0]}") from None
    await bench_runner.play(selected, scheduler, store, measure=False)


def simulate(plan: plans.Plan, *, tracer: Tracer | None = None, keep_trace: bool = False) -> Run:
    """Run `plan` to its end; PointError when it cannot be run or a plugin raised. With
    `keep_trace` (and no `tracer`), every trace record of the run is kept on `Run.records`."""
    try:
        registry = plugin_registry(plan.plugins)
        config = load_data(plan.config, registry)
        metric_list = [*BUILTIN, *declared(plan.metrics)]
        names = parse_controllers(plan.controllers)
    except (PluginLoadError, ConfigError, ValueError) as e:
        raise PointError(str(e)) from None
    clock = VirtualClock()
    try:
        tracer = tracer or Tracer(clock.now, keep=keep_trace)
        # the bench catalogue's templates set spec.priority, as scheduler_perf's API server allows
        admission_off = ("Priority",) if plan.bench is not None else ()
        store = MemoryStore(clock=clock, seed=plan.seed, tracer=tracer, disable_admission=admission_off)
        try:
            stored(store, snapshot=plan.snapshot, nodes=plan.nodes, objects=plan.objects)
        except ScenarioError as e:
            raise PointError(str(e)) from None
        scheduler, watcher, actors = _actors(plan, store, clock, config, registry, tracer, names)

        async def main() -> None:
            await asyncio.sleep(0)  # the scheduler's informers list what is there first
            if plan.bench is not None:
                await _bench(plan, scheduler, store)
            await _arrivals(plan, store, config.profiles[0].scheduler_name, clock, watcher)
            await watcher.settled(watcher.start + plan.horizon)

        clock.run_alongside(main(), [a.run for a in actors])
    finally:
        clock.close()
    _raised(scheduler, store)
    outcome = watcher.outcome
    outcome.nodes = store.list(core_v1.Node).items
    outcome.pods = store.list(core_v1.Pod).items
    outcome.attempts = scheduler.attempts
    outcome.horizon = plan.horizon
    try:
        metrics = measure(outcome, metric_list)
    except Exception as e:
        raise PointError(f"a metric raised: {type(e).__name__}: {e}") from None
    return Run(outcome, metrics, store, metric_list, records=tracer.records)


def _actors(
    plan: plans.Plan,
    store: MemoryStore,
    clock: VirtualClock,
    config: SchedulerConfig,
    registry: Registry,
    tracer: Tracer,
    controller_names: list[str],
) -> tuple[Scheduler, _Watcher, list[Controller]]:
    """The point's scheduler (with the watcher of its pods), kubelets and controllers."""
    cluster = MemoryCluster(store)
    try:
        scheduler = Scheduler(
            cluster,
            clock,
            config,
            registry,
            tracer=tracer,
            seed=plan.seed,
            identity="sweep",
            attempt_seconds=ATTEMPT_SECONDS,
            record_results=False,
        )
    except FrameworkError as e:  # a profile's plugins that cannot be built
        raise PointError(str(e)) from None
    watcher = _Watcher(clock.now)
    scheduler.shared_informers.informer(core_v1.Pod).add_handler(watcher)
    actors: list[Controller] = [scheduler]
    if plan.kubelets:
        actors.append(FakeKubelets(cluster, clock, tracer=tracer))
    if controller_names:
        actors.append(ControllerManager.on_store(store, clock, names=controller_names, tracer=tracer))
    actors += [entry.factory(MemoryCluster(store), clock) for entry in controllers()]
    return scheduler, watcher, actors


def _raised(scheduler: Scheduler, store: MemoryStore) -> None:
    """PointError naming the plugin that raised during the run, and what it raised."""
    raised = scheduler.metrics.plugin_exceptions
    if not raised:
        return
    (plugin, point), count = sorted(raised.items())[0]
    messages = [
        c.message
        for pod in store.list(core_v1.Pod).items
        for c in (pod.status.conditions if pod.status else None) or ()
        if c.type == "PodScheduled" and c.reason == "SchedulerError" and c.message
    ]
    why = f": {messages[0]}" if messages else ""
    times = "once" if count == 1 else f"{count} times"
    raise PointError(f"plugin {plugin} raised at {point} ({times}){why}")


def run_job(job: Job) -> PointJson:
    """A sweep's unit of work, as executors hand it out: `{index, point, document, root}` in,
    a PointResult's JSON out. Nothing it raises escapes: a failure is a `failed` result."""
    began = time.perf_counter()
    index, coordinates = int(job["index"]), dict(job["point"])
    try:
        plan = plans.read(job["document"], Path(job["root"]))
        run = simulate(plan)
        result = PointResult(index, coordinates, OK, run.metrics)
    except (PointError, ScenarioError) as e:
        result = PointResult(index, coordinates, FAILED, error=str(e))
    except Exception as e:
        frame = traceback.extract_tb(e.__traceback__)[-1]
        where = f" (at {Path(frame.filename).name}:{frame.lineno})"
        result = PointResult(index, coordinates, FAILED, error=f"{type(e).__name__}: {e}{where}")
    result.wall = time.perf_counter() - began
    if result.status == OK:
        result.metrics[WALL.name] = round(result.wall, 3)
    return result.to_json()
