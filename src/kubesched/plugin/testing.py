"""Testing plugins: a handle and a framework without a scheduler, and `check_plugin`, which builds
a framework with one plugin, runs its points on the pods and nodes given, and checks that its
batch methods agree with its per-node ones, node for node.

    from kubesched.plugin.testing import check_plugin

    verdicts = check_plugin(new, name="NoSundays", nodes=[...], pending=[...])
    assert verdicts[0].filter["sunday-node"].message == "node(s) rest on Sundays"
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np

from kubesched.cache import Cache, NodeInfo, PodInfo, Snapshot
from kubesched.cache.table import NodeTable
from kubesched.clock.base import TimerHandle
from kubesched.cluster import Cluster
from kubesched.framework import Framework, ProfilePlugins
from kubesched.framework.conformance import declares
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import (
    EventRecorder,
    FrameworkHandle,
    Handle,
    Listers,
    Nominator,
    Services,
    StaticInformers,
)
from kubesched.framework.interface import (
    BindPlugin,
    FilterBatchPlugin,
    FilterPlugin,
    NormalizeScoreBatch,
    Plugin,
    PreScorePlugin,
    QueueSortPlugin,
    ScoreBatchPlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kubesched.framework.queued import QueuedPodInfo
from kubesched.framework.registry import Factory, PluginSpec, Registry
from kubesched.framework.status import SKIP, Code, Status

DEFAULT_NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z

T = TypeVar("T")


class FrozenClock:
    """A clock that always says `at`; timers are not supported (use a VirtualClock for Permit waits)."""

    def __init__(self, at: float = DEFAULT_NOW) -> None:
        self.at = at

    def now(self) -> float:
        return self.at

    def call_at(self, when: float, callback: Callable[..., object], *args: object) -> TimerHandle:
        raise NotImplementedError("FrozenClock has no timers")

    def call_later(self, delay: float, callback: Callable[..., object], *args: object) -> TimerHandle:
        raise NotImplementedError("FrozenClock has no timers")

    async def sleep(self, delay: float) -> None:
        raise NotImplementedError("FrozenClock does not sleep")

    def run(self, main: Awaitable[T]) -> T:
        raise NotImplementedError("FrozenClock runs nothing")


def snapshot_of(nodes: Iterable[object], pods: Iterable[object] = ()) -> Snapshot:
    """A snapshot (with its NodeTable) of Node objects and the pods bound to them."""
    cache = Cache()
    for node in nodes:
        cache.add_node(node)
    for pod in pods:
        cache.add_pod(pod)
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return snapshot


class Deferred:
    """Background work plugins start (`handle.run_in_background`), kept until the test runs it."""

    def __init__(self) -> None:
        self.coroutines: list[Coroutine[Any, Any, None]] = []  # Any: a coroutine's yield and send types

    def __call__(self, coro: Coroutine[Any, Any, None]) -> None:  # Any: as `coroutines`'
        self.coroutines.append(coro)

    async def run(self) -> None:
        """Await every coroutine started so far, and those they start, in order."""
        while self.coroutines:
            await self.coroutines.pop(0)

    def __del__(self) -> None:
        for coro in self.coroutines:  # never run: closed, so that nobody warns about it
            coro.close()


class RecordingMetrics:
    """`FrameworkMetrics` that keeps the counts, for assertions."""

    def __init__(self) -> None:
        self.preemption_attempts = 0
        self.victims: list[int] = []
        self.exceptions: list[tuple[str, str]] = []

    def preemption_attempted(self) -> None:
        self.preemption_attempts += 1

    def preemption(self, victims: int) -> None:
        self.victims.append(victims)

    def plugin_exception(self, plugin: str, point: str) -> None:
        self.exceptions.append((plugin, point))


@dataclass
class _Nominated:
    by_node: Mapping[str, Sequence[PodInfo]]

    def pods_for_node(self, node: str) -> Sequence[PodInfo]:
        return self.by_node.get(node, ())

    def nodes_at_or_above(self, priority: int, *, excluding: str = "") -> list[str]:
        return [
            node
            for node, pods in self.by_node.items()
            if any(p.priority >= priority and p.uid != excluding for p in pods)
        ]


def services(
    *,
    snapshot: Snapshot | None = None,
    cluster: Cluster | None = None,
    clock: Any = None,  # Any: a Clock (a VirtualClock, say), taken as is
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
    pdbs: Sequence[Any] = (),  # Any: PodDisruptionBudgets, taken as is
    objects: Mapping[type[object], Iterable[object]] | None = None,
    nominated: Mapping[str, Sequence[PodInfo]] | None = None,
    nominator: Nominator | None = None,
    pod: Callable[[str, str], object | None] | None = None,
    events: Callable[[str], EventRecorder] | None = None,
    activate: Callable[[Sequence[PodInfo]], None] | None = None,
    seed: int = 0,
) -> Services:
    """`Services` without a scheduler: fixed listers and informers (`objects` per kind), background
    work kept in a `Deferred` (`services.spawn`), metrics in a `RecordingMetrics`."""
    informers = StaticInformers(objects)
    listers = Listers(informers, namespaces=namespaces or {}, pdbs=list(pdbs), pod=pod)
    svc = Services(
        snapshot=snapshot if snapshot is not None else Snapshot(),
        clock=clock or FrozenClock(),
        cluster=cluster,
        listers=listers,
        informers=informers,
        nominator=nominator if nominator is not None else _Nominated(nominated or {}),
        metrics=RecordingMetrics(),
        spawn=Deferred(),
        seed=seed,
    )
    if events is not None:
        svc.events = events
    if activate is not None:
        svc.activate = activate
    return svc


def standalone_handle(**kw: Any) -> Handle:  # Any: the keywords of `services`, passed on
    """A handle for a plugin built on its own (no framework); keywords as `services`."""
    return FrameworkHandle(services(**kw), profile_name="test-scheduler")


class _QueueOrder(QueueSortPlugin):
    name: ClassVar[str] = "kubesched.testing/QueueOrder"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.timestamp < b.timestamp


class _NoBind(BindPlugin):
    name: ClassVar[str] = "kubesched.testing/NoBind"

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return SKIP


def framework(
    plugins: Mapping[str, Factory | PluginSpec] | Registry,
    *,
    enabled: Sequence[str] | None = None,
    args: Mapping[str, object] | None = None,
    profile_name: str = "test-scheduler",
    **kw: Any,  # Any: the keywords of `services`, passed on
) -> Framework:
    """A framework with `plugins` enabled through multiPoint (all of them, or `enabled`, in order),
    plus a FIFO queue sort and a binder that skips when none of them is one; keywords as `services`."""
    registry = plugins if isinstance(plugins, Registry) else Registry()
    if not isinstance(plugins, Registry):
        for name, spec in plugins.items():
            if isinstance(spec, PluginSpec):
                registry.register(name, spec.factory, spec.args_type)
            else:
                registry.register(name, spec)
    names = list(enabled if enabled is not None else registry)
    svc = services(**kw)
    probe = FrameworkHandle(svc, profile_name=profile_name)
    built: dict[str, Plugin | None] = {}
    for n in names:
        entry = registry.get(n)
        try:
            built[n] = entry.factory((args or {}).get(n), probe) if entry is not None else None
        except Exception:  # the framework reports it, naming the plugin
            built[n] = None
    stubs: list[tuple[type[object], Callable[[], Plugin]]] = [(QueueSortPlugin, _QueueOrder), (BindPlugin, _NoBind)]
    for proto, make in stubs:
        stub_name = getattr(make, "name", "")
        if not any(declares(p, proto) for p in built.values()) and stub_name not in registry:
            registry.register(stub_name, _constant(make))
            names.append(stub_name)
    profile = ProfilePlugins(enabled={"multiPoint": [(n, None) for n in names]}, args=dict(args or {}))
    return Framework(profile_name, profile, registry, svc)


def _constant(make: Callable[[], Plugin]) -> Factory:
    return lambda args, handle: make()


@dataclass
class Verdicts:
    """What one plugin said about one pod: its PreFilter status, its Filter status per node (None:
    passes; nodes it was not asked about are absent), its raw and normalized score per feasible node."""

    pod: PodInfo
    pre_filter: Status | None = None
    filter: dict[str, Status | None] = field(default_factory=dict)
    raw_scores: dict[str, int] = field(default_factory=dict)
    scores: dict[str, int] = field(default_factory=dict)

    @property
    def feasible(self) -> list[str]:
        return [n for n, s in self.filter.items() if s is None]


class Disagreement(AssertionError):
    """A plugin's batch method and its per-node method differ."""


def check_plugin(
    plugin: Factory | PluginSpec,
    *,
    name: str,
    nodes: Sequence[object],
    pods: Sequence[object] = (),
    pending: Sequence[object] = (),
    args: object = None,
    **kw: Any,  # Any: the keywords of `services`, passed on
) -> list[Verdicts]:
    """Build a framework with the plugin (its conformance checked), then for each pending pod run
    its PreFilter, Filter on every node, PreScore, Score and NormalizeScore on the feasible ones,
    per node and, where it has them, in batch over the NodeTable; a difference between the two is
    a `Disagreement` naming the node. Returns the per-node verdicts."""
    snapshot = snapshot_of(nodes, pods)
    fwk = framework({name: plugin}, args={name: args} if args is not None else None, snapshot=snapshot, **kw)
    instance = fwk.plugin(name)
    assert instance is not None
    table = snapshot.table
    out: list[Verdicts] = []
    for obj in pending:
        pod = PodInfo(obj)
        state = CycleState()
        verdicts = Verdicts(pod)
        all_nodes = snapshot.node_info_list
        _, status, _ = fwk.run_pre_filter(state, pod, all_nodes)
        verdicts.pre_filter = status
        if status is not None and status.code != Code.SUCCESS:
            out.append(verdicts)
            continue
        feasible: list[NodeInfo] = list(all_nodes)
        if declares(instance, FilterPlugin) and name not in state.skip_filter_plugins:
            verdicts.filter = {n.name: fwk.filter_status(instance, state, pod, n) for n in all_nodes}
            if declares(instance, FilterBatchPlugin):
                rows = np.fromiter((table.index[n.name] for n in all_nodes), dtype=np.int64, count=len(all_nodes))
                mask = instance.filter_batch(state, pod, table, rows)
                for i, node in enumerate(all_nodes):
                    batch_fails = bool(mask[i]) if mask is not None else False
                    if batch_fails != (verdicts.filter[node.name] is not None):
                        raise Disagreement(
                            f'{name}: filter_batch says node "{node.name}" {"fails" if batch_fails else "passes"} '
                            f"for pod {pod.key}, filter says {verdicts.filter[node.name]!r}"
                        )
            feasible = [n for n in all_nodes if verdicts.filter[n.name] is None]
        else:
            verdicts.filter = {n.name: None for n in all_nodes}
        if declares(instance, ScorePlugin) and feasible:
            _score(instance, name, state, pod, feasible, table, verdicts)
        out.append(verdicts)
    return out


def _score(
    plugin: ScorePlugin,
    name: str,
    state: CycleState,
    pod: PodInfo,
    nodes: list[NodeInfo],
    table: NodeTable,
    out: Verdicts,
) -> None:
    if declares(plugin, PreScorePlugin):
        status = plugin.pre_score(state, pod, nodes)
        if status is not None and status.code == Code.SKIP:
            return
    raw = [plugin.score(state, pod, n) for n in nodes]
    out.raw_scores = {n.name: s for n, s in zip(nodes, raw, strict=True)}
    rows = np.fromiter((table.index[n.name] for n in nodes), dtype=np.int64, count=len(nodes))
    if declares(plugin, ScoreBatchPlugin):
        batch = plugin.score_batch(state, pod, table, rows).tolist()
        for node, a, b in zip(nodes, raw, batch, strict=True):
            if a != b:
                raise Disagreement(f'{name}: score_batch gives node "{node.name}" {b} for pod {pod.key}, score {a}')
    scores = list(raw)
    if declares(plugin, ScoreExtensions):
        plugin.normalize_score(state, pod, scores)
        if declares(plugin, NormalizeScoreBatch):
            batch = plugin.normalize_score_batch(state, pod, np.asarray(raw, dtype=np.int64)).tolist()
            for node, a, b in zip(nodes, scores, batch, strict=True):
                if a != b:
                    raise Disagreement(
                        f'{name}: normalize_score_batch gives node "{node.name}" {b} for pod {pod.key}, '
                        f"normalize_score {a}"
                    )
    out.scores = {n.name: s for n, s in zip(nodes, scores, strict=True)}


__all__ = [
    "DEFAULT_NOW",
    "Deferred",
    "Disagreement",
    "FrozenClock",
    "RecordingMetrics",
    "Verdicts",
    "check_plugin",
    "framework",
    "services",
    "snapshot_of",
    "standalone_handle",
]
