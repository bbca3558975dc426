"""The `Handle`: everything a plugin may use from the scheduler that runs it, typed.

Each profile's framework gives its plugins a handle of their own (as upstream's framework is its
plugins' handle): the shared `Services` a scheduler lends every profile — snapshot, cluster, clock,
listers, nominator, informers, event recorders, background tasks, activation, metrics — plus what
only the profile's framework can do: run its Filter plugins (with the nominated pods, too), its
PreFilter extensions, and hold pods waiting at Permit. A plugin gets it at construction and needs
nothing attached afterwards.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

from lightkube.models import meta_v1
from lightkube.resources import apps_v1, core_v1, policy_v1

from kubesched.cache import NodeInfo, PodInfo, Snapshot
from kubesched.clock import Clock
from kubesched.cluster import Cluster
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.features import Features
from kubesched.framework.status import Status
from kubesched.framework.waiting import WaitingPod
from kubesched.trace import Tracer

if TYPE_CHECKING:
    from kubesched.framework.runtime import Framework

T = TypeVar("T")


class Nominator(Protocol):
    """Pods nominated to nodes (by preemption), as the scheduling queue keeps them."""

    def pods_for_node(self, node: str) -> Sequence[PodInfo]: ...

    def nodes_at_or_above(self, priority: int, *, excluding: str = "") -> list[str]:
        """The nodes some pod other than `excluding` is nominated to with at least `priority`."""
        ...


class EventRecorder(Protocol):
    """Posts events.k8s.io/v1 Events as the profile's scheduler; failing to record is not an error."""

    async def record(
        self, regarding: object, type_: str, reason: str, action: str, note: str, *, related: object | None = None
    ) -> None: ...


class FrameworkMetrics(Protocol):
    """What the framework and its plugins count in the scheduler's metrics."""

    def preemption_attempted(self) -> None: ...

    def preemption(self, victims: int) -> None: ...

    def plugin_exception(self, plugin: str, point: str) -> None: ...


class InformerHandler(Protocol):
    """Called for each change an informer sees (after its own store is updated)."""

    # Any: objects of the informer's kind, as each handler types them
    def __call__(self, old: Any | None, new: Any | None) -> None: ...


class Informer(Protocol, Generic[T]):
    """One kind, listed and watched by the scheduler: its objects now, and changes as they come."""

    def list(self) -> list[T]: ...

    def get(self, name: str, namespace: str | None = None) -> T | None: ...

    def __len__(self) -> int: ...

    def add_handler(self, handler: InformerHandler) -> None:
        """`handler(old, new)`: (None, obj) on add, (old, new) on update, (obj, None) on delete."""
        ...


class InformerFactory(Protocol):
    def informer(self, kind: type[T]) -> Informer[T]:
        """The shared informer of `kind` (a lightkube resource class, or a custom kind's), started
        with the scheduler's other informers."""
        ...


class StaticInformer(Generic[T]):
    """An informer over a fixed list of objects (for plugins run without a scheduler)."""

    def __init__(self, objects: Iterable[T] = ()) -> None:
        self._objects = list(objects)

    def list(self) -> list[T]:
        return list(self._objects)

    def __len__(self) -> int:
        return len(self._objects)

    def get(self, name: str, namespace: str | None = None) -> T | None:
        for obj in self._objects:
            meta: meta_v1.ObjectMeta | None = getattr(obj, "metadata", None)  # the kinds served have metadata
            if meta is not None and meta.name == name and (namespace is None or (meta.namespace or None) == namespace):
                return obj
        return None

    def add_handler(self, handler: InformerHandler) -> None:
        return None


class StaticInformers:
    """`InformerFactory` over fixed objects per kind."""

    def __init__(self, objects: Mapping[type[object], Iterable[object]] | None = None) -> None:
        self._objects = {k: list(v) for k, v in (objects or {}).items()}

    def informer(self, kind: type[T]) -> Informer[T]:
        found = cast("list[T]", self._objects.get(kind, []))  # given per kind: those of `kind`
        return StaticInformer(found)


class Workloads:
    """What PodTopologySpread's system defaulting reads: the Services and controllers selecting a pod."""

    _CONTROLLERS: Mapping[str, type[object]] = {
        "ReplicationController": core_v1.ReplicationController,
        "ReplicaSet": apps_v1.ReplicaSet,
        "StatefulSet": apps_v1.StatefulSet,
    }

    def __init__(self, informers: InformerFactory) -> None:
        self._services = informers.informer(core_v1.Service)
        self._controllers = {name: informers.informer(kind) for name, kind in self._CONTROLLERS.items()}

    def empty(self) -> bool:
        """Whether there is no Service, ReplicationController, ReplicaSet or StatefulSet at all."""
        return not len(self._services) and not any(len(i) for i in self._controllers.values())

    def services(self, namespace: str) -> list[core_v1.Service]:
        """The Services of a namespace."""
        return [
            s
            for s in self._services.list()
            if s.metadata is not None and (s.metadata.namespace or "default") == namespace
        ]

    # Any: a ReplicationController, ReplicaSet or StatefulSet, as `kind` says
    def controller(self, kind: str, namespace: str, name: str) -> Any | None:
        """The ReplicationController, ReplicaSet or StatefulSet (by `kind`) of that name, if any."""
        informer = self._controllers.get(kind)
        return informer.get(name, namespace) if informer is not None else None


class Listers:
    """Read-only views of what the scheduler's informers hold."""

    def __init__(
        self,
        informers: InformerFactory,
        *,
        namespaces: Mapping[str, Mapping[str, str]] | None = None,
        pdbs: Sequence[policy_v1.PodDisruptionBudget] | None = None,
        pod: Callable[[str, str], object | None] | None = None,
    ) -> None:
        self._informers = informers
        self._namespaces = namespaces if namespaces is not None else {}
        self._pdbs: Sequence[policy_v1.PodDisruptionBudget] = pdbs if pdbs is not None else []
        self._pod = pod or (lambda namespace, name: None)
        self._workloads: Workloads | None = None

    @property
    def namespaces(self) -> Mapping[str, Mapping[str, str]]:
        """The labels of each namespace (for namespaceSelector)."""
        return self._namespaces

    @property
    def pdbs(self) -> Sequence[policy_v1.PodDisruptionBudget]:
        """The policy/v1 PodDisruptionBudgets."""
        return self._pdbs

    def set_pdbs(self, pdbs: Sequence[policy_v1.PodDisruptionBudget]) -> None:
        self._pdbs = pdbs

    def pod(self, namespace: str, name: str) -> Any | None:  # Any: a served pod, which plugins read as one
        """A pod as the scheduler knows it now (None once it is gone)."""
        return self._pod(namespace, name)

    @property
    def workloads(self) -> Workloads:
        """Services, ReplicationControllers, ReplicaSets and StatefulSets (watched once asked for)."""
        if self._workloads is None:
            self._workloads = Workloads(self._informers)
        return self._workloads


class _NoMetrics:
    def preemption_attempted(self) -> None:
        return None

    def preemption(self, victims: int) -> None:
        return None

    def plugin_exception(self, plugin: str, point: str) -> None:
        return None


class _NoEvents:
    async def record(
        self, regarding: object, type_: str, reason: str, action: str, note: str, *, related: object | None = None
    ) -> None:
        return None


class _NoNominations:
    def pods_for_node(self, node: str) -> Sequence[PodInfo]:
        return ()

    def nodes_at_or_above(self, priority: int, *, excluding: str = "") -> list[str]:
        return []


_BACKGROUND: set[asyncio.Future[None]] = set()


def _run_now(coro: Awaitable[None]) -> None:
    task = asyncio.ensure_future(coro)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


@dataclass(kw_only=True)
class Services:
    """What a scheduler lends every profile's handle. `standalone()` is a set for plugins run
    without a scheduler (tests, `kubesched.plugin.testing`)."""

    snapshot: Snapshot
    clock: Clock
    cluster: Cluster | None = None
    listers: Listers = field(default_factory=lambda: Listers(StaticInformers()))
    informers: InformerFactory = field(default_factory=StaticInformers)
    nominator: Nominator = field(default_factory=_NoNominations)
    tracer: Tracer = field(default_factory=lambda: Tracer(lambda: 0.0))
    metrics: FrameworkMetrics = field(default_factory=_NoMetrics)
    events: Callable[[str], EventRecorder] = lambda profile: _NoEvents()
    # Any: a coroutine's yield and send types
    spawn: Callable[[Coroutine[Any, Any, None]], None] = _run_now
    activate: Callable[[Sequence[PodInfo]], None] = lambda pods: None
    block: Callable[[Coroutine[Any, Any, None]], None] = _run_now  # Any: as `spawn`'s
    features: Features = field(default_factory=Features)
    seed: int = 0


class Handle(Protocol):
    """What a plugin is given in its factory `(args, handle)`: its profile's view of the scheduler.
    The framework's `FrameworkHandle` is one; a test may pass anything that has these members."""

    profile_name: str
    rng: random.Random  # seeded from the scheduler's seed: the same seed, the same choices
    events: EventRecorder  # Events about pods, as this profile's scheduler posts them

    @property
    def snapshot(self) -> Snapshot:
        """The nodes as of the start of the current cycle (NodeInfo per node, the NodeTable)."""
        ...

    @property
    def cluster(self) -> Cluster:
        """The API, for plugins that write (binding, preemption)."""
        ...

    @property
    def clock(self) -> Clock: ...

    @property
    def listers(self) -> Listers: ...

    @property
    def nominator(self) -> Nominator: ...

    @property
    def tracer(self) -> Tracer: ...

    @property
    def metrics(self) -> FrameworkMetrics: ...

    @property
    def features(self) -> Features:
        """The feature gates the scheduler runs with."""
        ...

    def informer(self, kind: type[T]) -> Informer[T]:
        """The scheduler's informer of `kind` (asked for in the factory)."""
        ...

    def run_in_background(self, coro: Coroutine[Any, Any, None]) -> None:  # Any: a coroutine's yield and send types
        """Run `coro` as a task of the scheduler (awaited when it drains or stops)."""
        ...

    def run_blocking(self, coro: Coroutine[Any, Any, None]) -> None:  # Any: as run_in_background's
        """Run `coro`, the scheduler taking no other pod from its queue until it has finished."""
        ...

    def activate(self, pods: Sequence[PodInfo]) -> None:
        """Move these pods, if pending, to activeQ now."""
        ...

    def run_filter_plugins(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None: ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]: ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a pod waiting at Permit (for every plugin it waits on); whether there was one."""
        ...


class FrameworkHandle:
    """One profile's handle, as the framework builds it (a `Handle`). Without a framework (a
    plugin built on its own, in tests) the methods that run other plugins raise and no pod waits
    at Permit."""

    def __init__(self, services: Services, *, profile_name: str = "", framework: Framework | None = None) -> None:
        self._framework = framework
        self._services = services
        self.profile_name = profile_name
        self.rng = random.Random(services.seed)  # seeded: the same seed, the same choices
        self.events: EventRecorder = services.events(profile_name)

    def _fwk(self) -> Framework:
        if self._framework is None:
            raise RuntimeError("this handle has no framework (the plugin runs on its own)")
        return self._framework

    @property
    def snapshot(self) -> Snapshot:
        """The nodes as of the start of the current cycle (NodeInfo per node, the NodeTable)."""
        return self._services.snapshot

    @property
    def cluster(self) -> Cluster:
        """The API, for plugins that write (binding, preemption). Absent when run standalone."""
        cluster = self._services.cluster
        if cluster is None:
            raise RuntimeError("this handle has no cluster (the plugin runs without a scheduler)")
        return cluster

    @property
    def clock(self) -> Clock:
        return self._services.clock

    @property
    def listers(self) -> Listers:
        return self._services.listers

    @property
    def nominator(self) -> Nominator:
        return self._services.nominator

    @property
    def tracer(self) -> Tracer:
        return self._services.tracer

    @property
    def metrics(self) -> FrameworkMetrics:
        return self._services.metrics

    def informer(self, kind: type[T]) -> Informer[T]:
        """The scheduler's informer of `kind`; a plugin asks for it in its factory. Changes of a
        kind a plugin registered events for also requeue the pods that plugin rejected."""
        return self._services.informers.informer(kind)

    def run_in_background(self, coro: Coroutine[Any, Any, None]) -> None:  # Any: a coroutine's yield and send types
        """Run `coro` as a task of the scheduler (awaited when it drains or stops)."""
        self._services.spawn(coro)

    def run_blocking(self, coro: Coroutine[Any, Any, None]) -> None:  # Any: as run_in_background's
        """Run `coro` and let the scheduler take no other pod from its queue until it has
        finished: what a Go plugin does by blocking the scheduling goroutine on API calls."""
        self._services.block(coro)

    @property
    def features(self) -> Features:
        """The feature gates the scheduler runs with."""
        return self._services.features

    def activate(self, pods: Sequence[PodInfo]) -> None:
        """Move these pods, if pending, to activeQ now (without waiting for an event)."""
        self._services.activate(pods)

    # -- what the profile's framework runs for its plugins --------------------------------------------

    def run_filter_plugins(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return self._fwk().run_filter(state, pod, node)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """Filter, counting the pods nominated to the node with at least the pod's priority."""
        return self._fwk().run_filter_with_nominated_pods(state, pod, node)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        return self._fwk().run_add_pod(state, pod, pod_to_add, node)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        return self._fwk().run_remove_pod(state, pod, pod_to_remove, node)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._framework.waiting_pods.get(uid) if self._framework is not None else None

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]:
        return iter(self._framework.waiting_pods) if self._framework is not None else iter(())

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a pod waiting at Permit (for every plugin it waits on); whether there was one."""
        waiting = self.get_waiting_pod(uid)
        if waiting is None:
            return False
        waiting.reject("", "removed")
        return True
