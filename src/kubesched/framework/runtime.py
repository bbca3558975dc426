"""The framework runtime: one profile's plugins, run at each extension point with upstream's rules."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.cache import NodeInfo, PodInfo
from kubesched.cache.table import NodeTable
from kubesched.clock import Clock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, WILDCARD_EVENT, ActionType, ClusterEvent, ClusterEventWithHint
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MAX_PERMIT_TIMEOUT,
    MIN_NODE_SCORE,
    Handle,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.registry import Registry
from kubesched.framework.status import SKIP, Code, Status, StatusError
from kubesched.framework.waiting import WaitingPod, WaitingPods

IntArray = npt.NDArray[np.int64]

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
# The method that marks a plugin as implementing each extension point.
METHODS = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
}
# Points whose plugins can reject a pod, and so are asked which events may requeue it.
REJECTING_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit")


class FrameworkError(ValueError):
    """A profile that cannot be built (no bind plugin, two queue sorts, an unknown plugin...)."""


MULTI_POINT = "multiPoint"


@dataclass
class ProfilePlugins:
    """A profile's plugin configuration after merging with the defaults: per extension point
    (and `multiPoint`) the enabled plugins in order with their weights, the disabled names
    (`*` for all), and each plugin's arguments."""

    enabled: dict[str, list[tuple[str, int | None]]] = field(default_factory=dict)
    disabled: dict[str, set[str]] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class PluginScores:
    """One score plugin's scores over the scored nodes: raw, after NormalizeScore, and its weight."""

    plugin: str
    raw: IntArray
    normalized: IntArray
    weight: int


ALL_EVENTS = ClusterEventWithHint(WILDCARD_EVENT)


def _with_taint_updates(registered: list[ClusterEventWithHint]) -> list[ClusterEventWithHint]:
    """A plugin registering Node/Add without Node/UpdateNodeTaint also gets UpdateNodeTaint,
    always Queue (a node whose taints change may have just become usable)."""
    node_add = next((r for r in registered if r.event.resource == NODE and r.event.action & ActionType.ADD), None)
    if node_add is None or any(
        r.event.resource == NODE and r.event.action & ActionType.UPDATE_NODE_TAINT for r in registered
    ):
        return registered
    return [*registered, ClusterEventWithHint(ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT))]


def filter_status(plugin: Any, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
    """One Filter plugin's verdict on one node, as the framework records it (plugin name set,
    a non-rejection turned into an Error)."""
    status: Status | None = plugin.filter(state, pod, node)
    if status is None or status.code == Code.SUCCESS:
        return None
    if not status.is_rejected():
        return _error('running "{plugin}" filter plugin: {message}', plugin.name, status)
    return status.with_plugin(plugin.name)


def _error(template: str, plugin: str, status: Status) -> Status:
    return Status(Code.ERROR, template.format(plugin=plugin, message=status.message), plugin=plugin)


class Framework:
    """A profile's plugins. Each `run_*` method applies one extension point's semantics."""

    def __init__(
        self,
        profile_name: str,
        plugins: ProfilePlugins,
        registry: Registry,
        handle: Handle,
        *,
        clock: Clock,
        percentage_of_nodes_to_score: int | None = None,
    ) -> None:
        self.profile_name = profile_name
        self.handle = handle
        self.clock = clock
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.waiting_pods = WaitingPods()
        self.instances: dict[str, Any] = {}
        for entries in plugins.enabled.values():
            for name, _ in entries:
                if name in self.instances:
                    continue
                entry = registry.get(name)
                if entry is None:
                    raise FrameworkError(f'plugin "{name}" does not exist')
                self.instances[name] = entry.factory(plugins.args.get(name), handle)
        self.weights: dict[str, int] = {}
        self.points: dict[str, list[Any]] = {}
        for point in EXTENSION_POINTS:
            self.points[point] = self._expand(point, plugins)
        if len(self.points["queueSort"]) != 1:
            raise FrameworkError(
                f'only one queue sort plugin required for profile with scheduler name "{profile_name}", '
                f"but got {len(self.points['queueSort'])}"
            )
        if not self.points["bind"]:
            raise FrameworkError(f'at least one bind plugin is needed for profile with scheduler name "{profile_name}"')
        self.weights = {p.name: self.weights.get(p.name) or 1 for p in self.points["score"]}
        self._scores_in_batch = all(hasattr(p, "score_batch") for p in self.points["score"])

    def _expand(self, point: str, plugins: ProfilePlugins) -> list[Any]:
        """The plugins at one extension point: those enabled there explicitly, merged with the
        multiPoint plugins that implement it (upstream's order: explicit overrides of multiPoint
        plugins, then multiPoint plugins, then the other explicit ones)."""
        method = METHODS[point]
        explicit: list[str] = []
        for name, weight in plugins.enabled.get(point, []):
            if not hasattr(self.instances[name], method):
                raise FrameworkError(f'plugin "{name}" does not extend {point} plugin')
            if name in explicit:
                raise FrameworkError(f'plugin "{name}" already registered as "{point}"')
            explicit.append(name)
            if point == "score":
                self.weights[name] = weight or 1
        disabled = plugins.disabled.get(point, set())
        if "*" in disabled:
            return [self.instances[n] for n in explicit]
        overrides: list[str] = []
        multi: list[str] = []
        for name, weight in plugins.enabled.get(MULTI_POINT, []):
            if not hasattr(self.instances[name], method) or name in disabled:
                continue
            if name in explicit:
                overrides.append(name)
                continue
            if name in multi:
                raise FrameworkError(f'plugin "{name}" already registered as "{point}"')
            multi.append(name)
            if point == "score":
                self.weights[name] = weight or 1
        first = [n for n in explicit if n in overrides]  # in the explicit list's order
        rest = [n for n in explicit if n not in overrides]
        return [self.instances[n] for n in (*first, *multi, *rest)]

    # -- queue side -------------------------------------------------------------------------------

    @property
    def queue_sort(self) -> Any:
        return self.points["queueSort"][0]

    def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        for plugin in self.points["preEnqueue"]:
            status: Status | None = plugin.pre_enqueue(pod)
            if status is not None and status.code != Code.SUCCESS:
                return status.with_plugin(plugin.name)
        return None

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Per plugin that can reject a pod: the events that may requeue it (default: every event)."""
        out: dict[str, list[ClusterEventWithHint]] = {}
        for point in REJECTING_POINTS:
            for plugin in self.points[point]:
                if plugin.name in out:
                    continue
                register = getattr(plugin, "events_to_register", None)
                out[plugin.name] = _with_taint_updates(list(register())) if register else [ALL_EVENTS]
        return out

    def hint_keys(self) -> dict[str, Callable[[Any], Hashable]]:
        """Per plugin that can reject a pod and defines `hint_key`: that function."""
        return {
            plugin.name: plugin.hint_key
            for point in REJECTING_POINTS
            for plugin in self.points[point]
            if hasattr(plugin, "hint_key")
        }

    # -- scheduling cycle -----------------------------------------------------------------------

    def run_pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """Returns the merged PreFilterResult, the verdict, and the plugins that narrowed the nodes."""
        result: PreFilterResult | None = None
        verdict: Status | None = None
        narrowing: list[str] = []
        for plugin in self.points["preFilter"]:
            res, status = plugin.pre_filter(state, pod, nodes)
            if status is not None and status.code == Code.SKIP:
                state.skip_filter_plugins.add(plugin.name)
                continue
            if status is not None and status.code != Code.SUCCESS:
                status.with_plugin(plugin.name)
                if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, status, []
                if status.code == Code.UNSCHEDULABLE:
                    verdict = status  # keep going: preemption needs every plugin's state
                    continue
                return None, _error('running PreFilter plugin "{plugin}": {message}', plugin.name, status), []
            if res is not None and not res.all_nodes():
                narrowing.append(plugin.name)
            result = res if result is None else result.merge(res)
            if result is not None and not result.all_nodes() and not result.node_names:
                if len(narrowing) == 1:
                    message = f"node(s) didn't satisfy plugin {narrowing[0]}"
                else:
                    message = f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"
                return result, Status.unresolvable(message), narrowing
        return result, verdict, narrowing

    def run_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """The node's verdict: the first plugin that does not pass decides."""
        skip = state.skip_filter_plugins
        for plugin in self.points["filter"]:
            if skip and plugin.name in skip:
                continue
            status = filter_status(plugin, state, pod, node)
            if status is not None:
                return status
        return None

    def batch_filters(self, state: CycleState) -> list[Any] | None:
        """The Filter plugins this cycle runs, if every one of them has a batch method."""
        plugins = [p for p in self.points["filter"] if p.name not in state.skip_filter_plugins]
        return plugins if all(hasattr(p, "filter_batch") for p in plugins) else None

    @staticmethod
    def run_filter_batch(
        plugins: Sequence[Any], state: CycleState, pod: PodInfo, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """For each row, the index in `plugins` of the first plugin it fails, or -1; None when
        every row passes. Each plugin sees only the rows that passed the plugins before it, as in
        the per-node loop."""
        first: IntArray | None = None
        alive: IntArray | None = None  # positions still passing, once some row has failed
        for k, plugin in enumerate(plugins):
            failed = plugin.filter_batch(state, pod, table, rows if alive is None else rows[alive])
            if failed is None:
                continue
            if first is None or alive is None:
                first = np.full(len(rows), -1, dtype=np.int64)
                alive = np.arange(len(rows))
            first[alive[failed]] = k
            alive = alive[~failed]
            if not len(alive):
                break
        return first

    def run_add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        """Every PreFilter plugin's AddPod extension (those not skipped this cycle)."""
        return self._run_pre_filter_extension("add_pod", "AddPod", state, pod, pod_to_add, node)

    def run_remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        """Every PreFilter plugin's RemovePod extension (those not skipped this cycle)."""
        return self._run_pre_filter_extension("remove_pod", "RemovePod", state, pod, pod_to_remove, node)

    def _run_pre_filter_extension(
        self, method: str, label: str, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo
    ) -> Status | None:
        for plugin in self.points["preFilter"]:
            ext = getattr(plugin, method, None)
            if ext is None or plugin.name in state.skip_filter_plugins:
                continue
            status: Status | None = ext(state, pod, other, node)
            if status is not None and status.code != Code.SUCCESS:
                return _error(f'running {label} on PreFilter plugin "{{plugin}}": {{message}}', plugin.name, status)
        return None

    def run_post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.points["postFilter"]:
            res: PostFilterResult | None
            status: Status | None
            res, status = plugin.post_filter(state, pod, statuses)
            if status is None or status.code == Code.SUCCESS:
                return res, status
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return res, status.with_plugin(plugin.name)
            if not status.is_rejected():
                return None, Status(Code.ERROR, status.message, plugin=plugin.name)
            if res is not None and res.mode != "noop":
                result = res
            reasons += status.reasons
            rejector = rejector or plugin.name
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    def run_pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        for plugin in self.points["preScore"]:
            status: Status | None = plugin.pre_score(state, pod, nodes)
            if status is not None and status.code == Code.SKIP:
                state.skip_score_plugins.add(plugin.name)
            elif status is not None and status.code != Code.SUCCESS:
                return _error('running PreScore plugin "{plugin}": {message}', plugin.name, status)
        return None

    def run_score(
        self,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        table: NodeTable | None = None,
        rows: IntArray | None = None,
    ) -> tuple[IntArray, list[PluginScores], Status | None]:
        """Total weighted score per node (in `nodes` order) and each plugin's scores, in upstream's
        phases: every plugin's Score, then every NormalizeScore, then the range check and weights.
        With a `table` (and the nodes' `rows` in it, when known) and a batch method on every plugin
        that scores this cycle, scores and normalization are computed over the table's columns."""
        count = len(nodes)
        skip = state.skip_score_plugins
        active = [p for p in self.points["score"] if p.name not in skip] if skip else self.points["score"]
        batch = table is not None and (self._scores_in_batch or all(hasattr(p, "score_batch") for p in active))
        if batch and rows is None and table is not None:
            rows = np.fromiter((table.index[n.name] for n in nodes), dtype=np.int64, count=count)
        raws: list[IntArray] = []
        for plugin in active:
            try:
                if batch:
                    raw = plugin.score_batch(state, pod, table, rows)
                    if raw.dtype != np.int64:
                        raw = raw.astype(np.int64)
                else:
                    raw = np.fromiter((plugin.score(state, pod, n) for n in nodes), dtype=np.int64, count=count)
            except StatusError as e:
                message = f'running Score plugins: plugin "{plugin.name}" failed with: {e.status.message}'
                return np.zeros(count, dtype=np.int64), [], Status(Code.ERROR, message, plugin=plugin.name)
            raws.append(raw)
        normalized: list[IntArray] = []
        for plugin, raw in zip(active, raws, strict=True):
            scores = raw
            if batch and hasattr(plugin, "normalize_score_batch"):
                scores = plugin.normalize_score_batch(state, pod, raw)
            elif hasattr(plugin, "normalize_score"):
                values = raw.tolist()
                status = plugin.normalize_score(state, pod, values)
                if status is not None and status.code != Code.SUCCESS:
                    message = (
                        f'running Normalize on Score plugins: plugin "{plugin.name}" failed with: {status.message}'
                    )
                    return np.zeros(count, dtype=np.int64), [], Status(Code.ERROR, message, plugin=plugin.name)
                scores = np.asarray(values, dtype=np.int64)
            normalized.append(scores)
        if not active:
            return np.zeros(count, dtype=np.int64), [], None
        matrix = np.stack(normalized)
        if count and (matrix.max() > MAX_NODE_SCORE or matrix.min() < MIN_NODE_SCORE):
            for plugin, scores in zip(active, normalized, strict=True):
                out = np.flatnonzero((scores > MAX_NODE_SCORE) | (scores < MIN_NODE_SCORE))
                if len(out):
                    message = (
                        f'plugin "{plugin.name}" returns an invalid score {int(scores[out[0]])}, it should in the '
                        f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                    )
                    return np.zeros(count, dtype=np.int64), [], Status(Code.ERROR, message, plugin=plugin.name)
        weights = [self.weights[p.name] for p in active]
        totals: IntArray = np.asarray(weights, dtype=np.int64) @ matrix
        parts = zip(active, raws, normalized, weights, strict=True)
        return totals, [PluginScores(p.name, raw, scores, w) for p, raw, scores, w in parts], None

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        for plugin in self.points["reserve"]:
            status: Status | None = plugin.reserve(state, pod, node_name)
            if status is not None and status.code != Code.SUCCESS:
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return _error('running Reserve plugin "{plugin}": {message}', plugin.name, status)
        return None

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for plugin in reversed(self.points["reserve"]):
            plugin.unreserve(state, pod, node_name)

    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        waits: dict[str, float] = {}
        for plugin in self.points["permit"]:
            status: Status | None
            status, timeout = plugin.permit(state, pod, node_name)
            if status is None or status.code == Code.SUCCESS:
                continue
            if status.is_rejected():
                return status.with_plugin(plugin.name)
            if status.code == Code.WAIT:
                waits[plugin.name] = min(timeout, MAX_PERMIT_TIMEOUT)
                continue
            return _error('running Permit plugin "{plugin}": {message}', plugin.name, status)
        if waits:
            self.waiting_pods.add(WaitingPod(pod, waits, self.clock))
            return Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"')
        return None

    # -- binding cycle --------------------------------------------------------------------------

    async def wait_on_permit(self, pod: PodInfo) -> Status | None:
        waiting = self.waiting_pods.get(pod.uid)
        if waiting is None:
            return None
        try:
            status = await waiting.wait()
        finally:
            self.waiting_pods.remove(pod.uid)
        if status is None or status.is_rejected():
            return status
        return Status(Code.ERROR, f"waiting on permit for pod: {status.message}", plugin=status.plugin)

    async def run_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        for plugin in self.points["preBind"]:
            status: Status | None = await plugin.pre_bind(state, pod, node_name)
            if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return _error('running PreBind plugin "{plugin}": {message}', plugin.name, status)
        return None

    async def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        for plugin in self.points["bind"]:
            status: Status | None = await plugin.bind(state, pod, node_name)
            if status is not None and status.code == Code.SKIP:
                continue
            if status is None or status.code == Code.SUCCESS:
                return None
            if status.is_rejected():
                return status.with_plugin(plugin.name)
            return _error('running Bind plugin "{plugin}": {message}', plugin.name, status)
        return SKIP

    def run_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for plugin in self.points["postBind"]:
            plugin.post_bind(state, pod, node_name)

    # -- introspection ----------------------------------------------------------------------------

    def plugin(self, name: str) -> Any | None:
        return self.instances.get(name)

    def names(self, point: str) -> list[str]:
        return [p.name for p in self.points[point]]

    def score_weights(self) -> Mapping[str, int]:
        return dict(self.weights)

    def has_post_filter(self) -> bool:
        return bool(self.points["postFilter"])

    def has_score(self) -> bool:
        return bool(self.points["score"])
