"""Running a scenario: its cluster in a memory store on virtual time, with the scheduler, the fake
kubelets and the controllers over it, and its steps one after another.

A step runs not before its `at` (seconds from the start) or `after` seconds past the step before.
Creates, patches and deletes are API calls; one the API refuses is an error. A `wait` or an
`assert` with `within` watches the cluster until its condition holds or the time is up; an
`assert` without `within` looks once. The first step that fails or errs ends the run, the steps
after it are skipped.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import yaml
from lightkube.resources import core_v1

from kubesched.api.objects import Served, meta_of, present
from kubesched.clock import VirtualClock
from kubesched.cluster.errors import ApiError
from kubesched.cluster.kinds import Kind
from kubesched.config import SchedulerConfig, default_config
from kubesched.config.load import ConfigError, load_file, load_text
from kubesched.controllers import ControllerManager, parse_controllers
from kubesched.framework.preemption import preempted
from kubesched.framework.registry import Registry
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import Controller, PluginLoadError, controllers, plugin_registry
from kubesched.sim import FakeKubelets
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.storage.system import create_system_priority_classes
from kubesched.trace import Tracer
from kubesched.whatif import snapshot as snapshots
from kubesched.whatif.documents import metadata, string
from kubesched.whatif.scenario.conditions import Condition, World
from kubesched.whatif.scenario.fields import ScenarioError
from kubesched.whatif.scenario.spec import (
    AddNodes,
    Assert,
    Create,
    Delete,
    NodeGroup,
    Patch,
    Ref,
    Scenario,
    Step,
    Wait,
    node_groups,
)

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"


@dataclass
class StepResult:
    """How a step went: its outcome, when it began and ended (virtual seconds from the start) and,
    unless it passed, why."""

    step: Step
    outcome: str
    started: float = 0.0
    ended: float = 0.0
    message: str = ""
    wall: float = 0.0  # seconds of real time the step took

    def to_json(self) -> dict[str, object]:
        return {
            "step": self.step.number,
            "name": self.step.name,
            "title": self.step.title,
            "outcome": self.outcome,
            "started": round(self.started, 6),
            "ended": round(self.ended, 6),
            "message": self.message,
        }


@dataclass
class ScenarioRun:
    """A scenario's run under one scheduler configuration (`config`: how it is named)."""

    scenario: Scenario
    config: str
    steps: list[StepResult] = field(default_factory=list)
    wall: float = 0.0

    @property
    def passed(self) -> bool:
        return all(s.outcome == PASSED for s in self.steps)

    @property
    def failure(self) -> StepResult | None:
        return next((s for s in self.steps if s.outcome in (FAILED, ERROR)), None)

    def count(self, outcome: str) -> int:
        return sum(1 for s in self.steps if s.outcome == outcome)

    def to_json(self) -> dict[str, object]:
        return {
            "scenario": self.scenario.name,
            "file": str(self.scenario.path),
            "config": self.config,
            "passed": self.passed,
            "wallSeconds": round(self.wall, 3),
            "steps": [s.to_json() for s in self.steps],
        }


def scheduler_setup(
    scenario: Scenario, *, config: str | None = None, plugins: Sequence[str] = ()
) -> tuple[SchedulerConfig, Registry]:
    """The registry (in-tree, installed, the scenario's `plugins` and `plugins`) and the
    configuration — the file `config`, else the scenario's own, else upstream's default."""
    try:
        registry = plugin_registry([*scenario.plugins, *plugins])
    except PluginLoadError as e:
        raise ScenarioError(f"{scenario.path}: scheduler.plugins: {e}") from None
    try:
        if config is not None:
            return load_file(config, registry), registry
        if isinstance(scenario.config, dict):
            source = f"{scenario.path}: scheduler.config"
            return load_text(yaml.safe_dump(scenario.config), registry, source=source), registry
        if scenario.config is not None:
            return load_file(scenario.config, registry), registry
    except ConfigError as e:
        raise ScenarioError(str(e) if config is not None else f"{scenario.path}: scheduler.config: {e}") from None
    return default_config(registry), registry


def served(store: MemoryStore, kind: str, api_version: str | None) -> Kind:
    """The served kind of that name (and apiVersion, when given); a KeyError naming it otherwise."""
    if api_version is not None:
        found = store.kind_named(api_version, kind)
    else:
        found = next((k for k in store.kinds() if k.kind == kind), None)
    if found is None:
        raise KeyError(f"{api_version + ' ' if api_version else ''}{kind} is not a kind the cluster serves")
    return found


def decode(store: MemoryStore, document: dict[str, object]) -> Served:
    """A manifest as the object of its kind (in `default` when namespaced and naming none)."""
    kind = served(store, string(document["kind"], "kind"), string(document["apiVersion"], "apiVersion"))
    body = copy.deepcopy(document)
    if kind.namespaced:
        metadata(body).setdefault("namespace", "default")
    try:
        return msgspec.json.decode(json.dumps(body).encode(), type=kind.cls)
    except msgspec.ValidationError as e:
        raise ValueError(f"{document['kind']} {metadata(body)['name']}: {e}") from None


class Observer:
    """What a scenario sees of the cluster as it goes: a watch on pods, nodes and Events that
    notes each preemption victim and wakes whoever waits for a condition."""

    def __init__(self, cluster: MemoryCluster, world: World) -> None:
        self.cluster = cluster
        self.world = world
        self.changed = asyncio.Event()

    async def run(self) -> None:
        await asyncio.gather(*(self._watch(kind) for kind in (core_v1.Pod, core_v1.Node, core_v1.Event)))

    async def _watch(self, kind: type[Served]) -> None:
        async for event in self.cluster.watch(kind):
            if kind is core_v1.Pod:
                self._note(event.object)
            self.changed.set()

    def _note(self, pod: core_v1.Pod) -> None:
        if preempted(pod):
            meta = meta_of(pod)
            key = f"{meta.namespace}/{meta.name}"
            self.world.preempted.setdefault(key, present(pod.spec, "the pod's spec").priority or 0)

    async def until(self, condition: Condition, deadline: float, clock: VirtualClock) -> str | None:
        """None once `condition` holds, or what is so instead when `deadline` comes first."""
        while True:
            why = condition.check(self.world)
            remaining = deadline - clock.now()
            if why is None or remaining <= 0:
                return why
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except TimeoutError:
                return condition.check(self.world)


def stored(
    store: MemoryStore,
    *,
    snapshot: Path | None = None,
    nodes: Sequence[NodeGroup] = (),
    objects: Sequence[dict[str, object]] = (),
) -> None:
    """A cluster before the start, as scenario and sweep files give it: the system
    PriorityClasses, the snapshot, the node groups, the objects; ScenarioError naming the field
    (`cluster.snapshot`, `cluster.objects[2]`) when one cannot be stored."""
    create_system_priority_classes(store)
    if snapshot is not None:
        try:
            snapshots.load(snapshot).restore(store)
        except snapshots.SnapshotError as e:
            raise ScenarioError(f"cluster.snapshot: {e}") from None
    for name, index, template in node_groups(nodes):
        store.create(template.make(name, index))
    for i, document in enumerate(objects):
        try:
            store.create(decode(store, document))
        except (KeyError, ValueError, ApiError) as e:
            message = e.args[0] if isinstance(e, KeyError) else str(e)
            raise ScenarioError(f"cluster.objects[{i}]: {message}") from None


def run(scenario: Scenario, *, config: SchedulerConfig, registry: Registry, label: str = "") -> ScenarioRun:
    """Run `scenario` under `config` (named `label` in the report) on a cluster of its own."""
    try:
        names = parse_controllers(scenario.controllers)
    except ValueError as e:
        raise ScenarioError(f"{scenario.path}: cluster.controllers: {e}") from None
    began = time.perf_counter()
    clock = VirtualClock()
    tracer = Tracer(clock.now)
    store = MemoryStore(clock=clock, seed=scenario.seed, tracer=tracer)
    try:
        stored(store, snapshot=scenario.snapshot, nodes=scenario.nodes, objects=scenario.objects)
    except ScenarioError as e:
        raise ScenarioError(f"{scenario.path}: {e}") from None
    cluster = MemoryCluster(store)
    world = World(store)
    observer = Observer(cluster, world)
    actors: list[Controller] = [
        observer,
        Scheduler(cluster, clock, config, registry, tracer=tracer, seed=scenario.seed, identity="scenario"),
    ]
    if scenario.kubelets:
        actors.append(FakeKubelets(cluster, clock, tracer=tracer))
    if names:
        actors.append(ControllerManager.on_store(store, clock, names=names, tracer=tracer))
    actors += [entry.factory(MemoryCluster(store), clock) for entry in controllers()]
    result = ScenarioRun(scenario, label or _label(scenario))

    clock.run_alongside(_steps(scenario, cluster, observer, clock, result), [a.run for a in actors])
    result.wall = time.perf_counter() - began
    return result


def _label(scenario: Scenario) -> str:
    if isinstance(scenario.config, dict):
        return "its own"
    return str(scenario.config) if scenario.config is not None else "default"


async def _steps(
    scenario: Scenario, cluster: MemoryCluster, observer: Observer, clock: VirtualClock, result: ScenarioRun
) -> None:
    start = clock.now()
    for index, step in enumerate(scenario.steps):
        if step.at is not None:
            await clock.sleep(max(0.0, start + step.at - clock.now()))
        else:
            await clock.sleep(step.after)
        began, wall = clock.now() - start, time.perf_counter()
        try:
            why = await _perform(step, cluster, observer, clock)
            outcome = PASSED if why is None else FAILED
        except (ApiError, KeyError, ValueError) as e:
            outcome, why = ERROR, e.args[0] if isinstance(e, KeyError) else str(e)
        ended = clock.now() - start
        result.steps.append(StepResult(step, outcome, began, ended, why or "", time.perf_counter() - wall))
        if outcome != PASSED:
            result.steps += [StepResult(s, SKIPPED, ended, ended) for s in scenario.steps[index + 1 :]]
            return


async def _perform(step: Step, cluster: MemoryCluster, observer: Observer, clock: VirtualClock) -> str | None:
    """None when the step did what it says; else why it did not (a condition's failure)."""
    action = step.action
    store = cluster.store
    if isinstance(action, Create):
        for document in action.objects:
            for copied in _copies(document, action.copies):
                await cluster.create(decode(store, copied))
        return None
    if isinstance(action, AddNodes):
        for name, index, template in node_groups([action.group]):
            await cluster.create(template.make(name, index))
        return None
    if isinstance(action, Patch | Delete):
        kind, ref = _target(store, action.ref)
        if isinstance(action, Patch):
            await cluster.patch(kind.cls, ref.name, action.patch, namespace=ref.namespace, patch_type=action.patch_type)
        else:
            await cluster.delete(kind.cls, ref.name, namespace=ref.namespace)
        return None
    if isinstance(action, Wait):
        why = await observer.until(action.condition, clock.now() + action.timeout, clock)
        return None if why is None else f"not within {action.timeout:g}s: {why}"
    assert isinstance(action, Assert)
    if not action.within:
        return action.condition.check(observer.world)
    why = await observer.until(action.condition, clock.now() + action.within, clock)
    return None if why is None else f"not within {action.within:g}s: {why}"


def _copies(document: dict[str, object], copies: int | None) -> list[dict[str, object]]:
    if copies is None:
        return [document]
    out = []
    for i in range(copies):
        copied = copy.deepcopy(document)
        metadata(copied)["name"] = f"{metadata(document)['name']}-{i}"
        out.append(copied)
    return out


def _target(store: MemoryStore, ref: Ref) -> tuple[Kind, Ref]:
    kind = served(store, ref.kind, ref.api_version)
    namespace = (ref.namespace or "default") if kind.namespaced else None
    return kind, Ref(ref.kind, ref.name, ref.api_version, namespace)
