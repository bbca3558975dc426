"""The memory cluster a lab runs in: a store, the scheduler over it and a tracer, on virtual time."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from lightkube.resources import core_v1

from kubesched.api.objects import Served, present
from kubesched.clock import VirtualClock
from kubesched.cluster import Cluster
from kubesched.config import default_config
from kubesched.framework.features import Features
from kubesched.framework.registry import Registry
from kubesched.lab.drill.story import failed_scheduling
from kubesched.plugin import Handle, Plugin, PluginSpec
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import plugin_registry
from kubesched.sim import FakeKubelets, NodeTemplate
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import ListSink, Record, Tracer
from kubesched.trace.narrate import Step, steps

NODE = NodeTemplate(capacity={"cpu": "4", "memory": "16Gi", "pods": "110"}, zones=())  # the labs' usual node

# While `recording()` runs, each lab cluster made keeps its trace records in a ListSink of its own
# here (`lab run --ui` replays them).
_RECORDED: contextvars.ContextVar[list[ListSink] | None] = contextvars.ContextVar(
    "kubesched_lab_recorded", default=None
)


@contextlib.contextmanager
def recording() -> Iterator[list[ListSink]]:
    """Every lab cluster made within the block has its trace records kept: one ListSink a cluster,
    in the order they were made."""
    kept: list[ListSink] = []
    token = _RECORDED.set(kept)
    try:
        yield kept
    finally:
        _RECORDED.reset(token)


class Actor(Protocol):
    """What runs alongside a lab's schedulers (a kubelet, another scheduler) until the lab ends."""

    def run(self) -> Awaitable[object]: ...


class PluginClass(Protocol):
    """A plugin class that is its own factory: made from its arguments and the handle."""

    @property
    def name(self) -> str: ...

    def __call__(self, args: object, handle: Handle) -> Plugin: ...


@dataclass
class LabCluster:
    clock: VirtualClock
    tracer: Tracer
    store: MemoryStore
    cluster: MemoryCluster
    scheduler: Scheduler
    registry: Registry
    start: float  # the virtual time the lab began at
    seed: int = 1
    others: list[Scheduler] = field(default_factory=list)  # schedulers of their own, run alongside

    def second_scheduler(self, *, identity: str, **config: object) -> Scheduler:
        """Another scheduler over the same cluster — a process of its own in a real one — with the
        same registry and `config`'s top-level fields; `run` runs it too."""
        built = default_config(self.registry, **config)
        other = Scheduler(
            self.cluster, self.clock, built, self.registry, tracer=self.tracer, seed=self.seed + 1, identity=identity
        )
        self.others.append(other)
        return other

    def run(self, body: Callable[[], Awaitable[None]], *, kubelets: bool = False, actors: Sequence[Actor] = ()) -> None:
        """Run `body` while the schedulers run (and, with `kubelets`, a fake kubelet per node, and
        `actors` of the lab's own, such as kubelets it restarts), on the virtual clock."""
        actors = [self.scheduler, *self.others, *actors]
        if kubelets:
            actors.append(FakeKubelets(self.cluster, self.clock, tracer=self.tracer))
        self.clock.run_alongside(body(), [a.run for a in actors])

    def records(self, *kinds: str, pod: str | None = None) -> list[Record]:
        return [r for r in self.tracer.records if r.kind in kinds and (pod is None or r.pod == pod)]

    def told(self, *pods: str, kinds: Collection[str] | None = None) -> list[Step]:
        """The trace of `pods` (names in `default`) told as steps, from the lab's start."""
        return steps(self.tracer.records, since=self.start, kinds=kinds, pods={f"default/{p}" for p in pods})

    def pod(self, name: str) -> core_v1.Pod:
        return self.store.get(core_v1.Pod, name, namespace="default")

    def node_of(self, name: str) -> str | None:
        """The node the pod `name` is bound to (None: not bound)."""
        return present(self.pod(name).spec, "the pod's spec").nodeName

    def failed_scheduling(self) -> dict[str, str]:
        """Each pod's latest FailedScheduling message, by name."""
        return failed_scheduling(self.store)


def lab_cluster(
    *,
    seed: int,
    nodes: Iterable[Served],
    pods: Iterable[Served] = (),
    objects: Iterable[Served] = (),
    plugins: Iterable[PluginClass | PluginSpec] = (),
    modules: Sequence[str] = (),
    features: Features | None = None,
    attempt_seconds: float = 0.0,
    link: Callable[[MemoryStore, VirtualClock], Cluster] | None = None,
    **config: object,
) -> LabCluster:
    """`objects` (PriorityClasses, budgets...), `nodes` and `pods` (those with a `nodeName` already
    bound) stored, and a scheduler with upstream's default configuration plus `config`'s top-level
    fields (`profiles`, `percentageOfNodesToScore`...), its registry holding `plugins` and those
    `modules` name (`--plugin`'s `module:attr` or `file.py:attr`) too. `features`, `attempt_seconds`:
    the scheduler's (`Scheduler`'s arguments); `link`: the cluster the scheduler talks to, made from
    the store and the clock (a slow network), where the lab's own calls and the kubelets go direct."""
    clock = VirtualClock()
    tracer = Tracer(clock.now, keep=True)
    recorded = _RECORDED.get()
    if recorded is not None:
        recorded.append(ListSink())
        tracer.add_sink(recorded[-1])
    store = MemoryStore(clock=clock, seed=seed, tracer=tracer)
    for obj in (*objects, *nodes, *pods):
        store.create(obj)
    registry = plugin_registry(modules)
    for plugin in plugins:
        if isinstance(plugin, PluginSpec):
            registry.register(plugin.name, plugin.factory, plugin.args_type)
        else:
            registry.register(plugin.name, plugin)
    built = default_config(registry, **config)
    cluster = MemoryCluster(store)
    scheduler = Scheduler(
        link(store, clock) if link is not None else cluster,
        clock,
        built,
        registry,
        tracer=tracer,
        seed=seed,
        identity="lab",
        features=features,
        attempt_seconds=attempt_seconds,
    )
    return LabCluster(clock, tracer, store, cluster, scheduler, registry, clock.now(), seed)
