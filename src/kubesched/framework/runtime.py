"""The framework runtime: one profile's plugins, run at each extension point with upstream's rules."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from lightkube.models import core_v1

from kubesched.cache import NodeInfo, PodInfo
from kubesched.cache.table import NodeTable
from kubesched.framework.assembly import FrameworkError, Points, ProfilePlugins, build, expand
from kubesched.framework.conformance import declares
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, WILDCARD_EVENT, ActionType, ClusterEvent, ClusterEventWithHint
from kubesched.framework.handle import FrameworkHandle, Services
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MAX_PERMIT_TIMEOUT,
    MIN_NODE_SCORE,
    REJECTING_POINTS,
    EnqueueExtensions,
    ExtensionPoint,
    FailureSignatures,
    FilterBatchPlugin,
    FilterPlugin,
    HintKeys,
    NodeToStatus,
    NormalizeScoreBatch,
    Plugin,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
    QueueSortKey,
    QueueSortPlugin,
    ScoreBatchPlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kubesched.framework.queued import QueuedPodInfo
from kubesched.framework.registry import Registry
from kubesched.framework.status import SKIP, Code, Status, StatusError
from kubesched.framework.waiting import WaitingPod, WaitingPods

IntArray = npt.NDArray[np.int64]
EXTENSION_POINTS = tuple(ExtensionPoint)


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


def _raised(e: Exception) -> Status:
    """What a plugin that raised is taken to have returned."""
    return Status.error(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)


def _out_of_range(active: Sequence[ScorePlugin], normalized: list[IntArray]) -> Status | None:
    """The error for the first plugin with a normalized score outside [MIN_NODE_SCORE, MAX_NODE_SCORE]."""
    for plugin, scores in zip(active, normalized, strict=True):
        out = np.flatnonzero((scores > MAX_NODE_SCORE) | (scores < MIN_NODE_SCORE))
        if len(out):
            message = (
                f'plugin "{plugin.name}" returns an invalid score {int(scores[out[0]])}, it should in the '
                f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
            )
            return Status(Code.ERROR, message, plugin=plugin.name)
    return None


def _error(template: str, plugin: str, status: Status) -> Status:
    return Status(Code.ERROR, template.format(plugin=plugin, message=status.message), plugin=plugin)


class Framework:
    """A profile's plugins. Each `run_*` method applies one extension point's semantics."""

    def __init__(
        self,
        profile_name: str,
        plugins: ProfilePlugins,
        registry: Registry,
        services: Services,
        *,
        percentage_of_nodes_to_score: int | None = None,
    ) -> None:
        self.profile_name = profile_name
        self.services = services
        self.clock = services.clock
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.waiting_pods = WaitingPods()
        self.handle = FrameworkHandle(services, profile_name=profile_name, framework=self)
        self.instances: dict[str, Plugin] = {}
        for entries in plugins.enabled.values():
            for name, _ in entries:
                if name not in self.instances:
                    self.instances[name] = build(name, plugins.args.get(name), registry, self.handle)
        self.weights: dict[str, int] = {}
        self.points = Points()
        for point in EXTENSION_POINTS:
            self.points.at(point).extend(expand(point, plugins, self.instances, self.weights))
        if len(self.points.queue_sort) != 1:
            raise FrameworkError(
                f'only one queue sort plugin required for profile with scheduler name "{profile_name}", '
                f"but got {len(self.points.queue_sort)}"
            )
        if not self.points.bind:
            raise FrameworkError(f'at least one bind plugin is needed for profile with scheduler name "{profile_name}"')
        self.weights = {p.name: self.weights.get(p.name) or 1 for p in self.points.score}
        self._batch_filter = {p.name for p in self.points.filter if declares(p, FilterBatchPlugin)}
        self._batch_score = {p.name for p in self.points.score if declares(p, ScoreBatchPlugin)}
        self._scores_in_batch = len(self._batch_score) == len(self.points.score)
        self._events = self._events_to_register()

    def _crashed(self, plugin: Plugin, point: str, e: Exception) -> Status:
        """A plugin raised: count it, trace it, and treat it as an Error status."""
        self.services.metrics.plugin_exception(plugin.name, point)
        self.services.tracer.emit("plugin.raised", plugin=plugin.name, point=point, error=f"{type(e).__name__}: {e}")
        return _raised(e)

    # -- queue side -------------------------------------------------------------------------------

    @property
    def queue_sort(self) -> QueueSortPlugin:
        return self.points.queue_sort[0]

    @property
    def queue_sort_key(self) -> Callable[[QueuedPodInfo], Any] | None:  # Any: the plugin's sort key, as `sort_key`'s
        """The QueueSort plugin's `sort_key`, if it declares `QueueSortKey`."""
        plugin = self.queue_sort
        return plugin.sort_key if declares(plugin, QueueSortKey) else None

    def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        for plugin in self.points.pre_enqueue:
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as e:
                status = self._crashed(plugin, ExtensionPoint.PRE_ENQUEUE, e)
            if status is not None and status.code != Code.SUCCESS:
                return status.with_plugin(plugin.name)
        return None

    def _events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        out: dict[str, list[ClusterEventWithHint]] = {}
        for point in REJECTING_POINTS:
            for plugin in self.points.at(point):
                if plugin.name in out:
                    continue
                if not declares(plugin, EnqueueExtensions):
                    out[plugin.name] = [ALL_EVENTS]
                    continue
                try:
                    registered = list(plugin.events_to_register())
                except Exception as e:
                    raise FrameworkError(
                        f'plugin "{plugin.name}": events_to_register failed: {type(e).__name__}: {e}'
                    ) from None
                out[plugin.name] = _with_taint_updates(registered)
        return out

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Per plugin that can reject a pod: the events that may requeue it (default: every event)."""
        return dict(self._events)

    def hint_keys(self) -> dict[str, Callable[[core_v1.Pod], Hashable]]:
        """Per plugin that can reject a pod and declares `HintKeys`: its `hint_key`."""
        return {
            plugin.name: plugin.hint_key
            for point in REJECTING_POINTS
            for plugin in self.points.at(point)
            if declares(plugin, HintKeys)
        }

    # -- scheduling cycle -----------------------------------------------------------------------

    def run_pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """Returns the merged PreFilterResult, the verdict, and the plugins that narrowed the nodes."""
        result: PreFilterResult | None = None
        verdict: Status | None = None
        narrowing: list[str] = []
        for plugin in self.points.pre_filter:
            try:
                res, status = plugin.pre_filter(state, pod, nodes)
            except Exception as e:
                res, status = None, self._crashed(plugin, ExtensionPoint.PRE_FILTER, e)
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

    def filter_status(self, plugin: FilterPlugin, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """One Filter plugin's verdict on one node, as the framework records it (plugin name set,
        a non-rejection turned into an Error)."""
        try:
            status = plugin.filter(state, pod, node)
        except Exception as e:
            status = self._crashed(plugin, ExtensionPoint.FILTER, e)
        if status is None or status.code == Code.SUCCESS:
            return None
        if not status.is_rejected():
            return _error('running "{plugin}" filter plugin: {message}', plugin.name, status)
        return status.with_plugin(plugin.name)

    def run_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """The node's verdict: the first plugin that does not pass decides."""
        skip = state.skip_filter_plugins
        for plugin in self.points.filter:
            if skip and plugin.name in skip:
                continue
            status = self.filter_status(plugin, state, pod, node)
            if status is not None:
                return status
        return None

    def run_filter_with_nominated_pods(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """Filter accounting for the pods nominated to the node with at least the pod's priority:
        first with them added (through the PreFilter AddPod extensions), then, if that passes and
        some were added, again without them (a rule that passed only thanks to them must not count)."""
        nominated = self.services.nominator.pods_for_node(node.name)
        others = [p for p in nominated if p.priority >= pod.priority and p.uid != pod.uid]
        if not others:
            return self.run_filter(state, pod, node)
        node_with, state_with = node.clone(), state.clone()
        for other in others:
            node_with.add_pod(other)
            status = self.run_add_pod(state_with, pod, other, node_with)
            if status is not None:
                return status
        status = self.run_filter(state_with, pod, node_with)
        if status is not None:
            return status
        return self.run_filter(state, pod, node)

    def nominated_nodes(self, pod: PodInfo) -> list[str]:
        """The nodes where `run_filter_with_nominated_pods` differs from `run_filter` for `pod`:
        those some other pod of at least its priority is nominated to."""
        return self.services.nominator.nodes_at_or_above(pod.priority, excluding=pod.uid)

    def batch_filters(self, state: CycleState) -> list[FilterBatchPlugin] | None:
        """The Filter plugins this cycle runs, if every one of them has a batch method."""
        skip = state.skip_filter_plugins
        plugins = [p for p in self.points.filter if p.name not in skip]
        batch = [p for p in plugins if declares(p, FilterBatchPlugin)]
        return batch if len(batch) == len(plugins) else None

    def run_filter_batch(
        self, plugins: Sequence[FilterBatchPlugin], state: CycleState, pod: PodInfo, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """For each row, the index in `plugins` of the first plugin it fails, or -1; None when
        every row passes. Each plugin sees only the rows that passed the plugins before it, as in
        the per-node loop. A plugin that raises fails every row it was given."""
        first: IntArray | None = None
        alive: IntArray | None = None  # positions still passing, once some row has failed
        for k, plugin in enumerate(plugins):
            subset = rows if alive is None else rows[alive]
            try:
                failed = plugin.filter_batch(state, pod, table, subset)
            except Exception as e:
                self._crashed(plugin, ExtensionPoint.FILTER, e)
                failed = np.ones(len(subset), dtype=np.bool_)
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

    @staticmethod
    def failure_signatures(
        plugin: FilterBatchPlugin, state: CycleState, pod: PodInfo, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """The plugin's failure signatures for failing rows, if it declares them."""
        if not declares(plugin, FailureSignatures):
            return None
        return plugin.failure_signatures(state, pod, table, rows)

    def run_add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        """Every PreFilter plugin's AddPod extension (those not skipped this cycle)."""
        return self._pre_filter_extensions("AddPod", state, lambda p: p.add_pod(state, pod, pod_to_add, node))

    def run_remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        """Every PreFilter plugin's RemovePod extension (those not skipped this cycle)."""
        return self._pre_filter_extensions("RemovePod", state, lambda p: p.remove_pod(state, pod, pod_to_remove, node))

    def _pre_filter_extensions(
        self, label: str, state: CycleState, call: Callable[[PreFilterExtensions], Status | None]
    ) -> Status | None:
        for plugin in self.points.pre_filter:
            if not declares(plugin, PreFilterExtensions) or plugin.name in state.skip_filter_plugins:
                continue
            try:
                status = call(plugin)
            except Exception as e:
                status = self._crashed(plugin, ExtensionPoint.PRE_FILTER, e)
            if status is not None and status.code != Code.SUCCESS:
                return _error(f'running {label} on PreFilter plugin "{{plugin}}": {{message}}', plugin.name, status)
        return None

    def run_post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.points.post_filter:
            res: PostFilterResult | None
            status: Status | None
            try:
                res, status = plugin.post_filter(state, pod, statuses)
            except Exception as e:
                res, status = None, self._crashed(plugin, ExtensionPoint.POST_FILTER, e)
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
        for plugin in self.points.pre_score:
            try:
                status = plugin.pre_score(state, pod, nodes)
            except Exception as e:
                status = self._crashed(plugin, ExtensionPoint.PRE_SCORE, e)
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
        active = [p for p in self.points.score if p.name not in skip] if skip else self.points.score
        batch = table is not None and (self._scores_in_batch or all(p.name in self._batch_score for p in active))
        if batch and rows is None and table is not None:
            rows = np.fromiter((table.index[n.name] for n in nodes), dtype=np.int64, count=count)
        zeros = np.zeros(count, dtype=np.int64)
        raws, failed = self._raw_scores(active, state, pod, nodes, table if batch else None, rows)
        if failed is None:
            normalized, failed = self._normalized(active, raws, state, pod, batch=batch)
        if failed is not None:
            return zeros, [], failed
        if not active:
            return zeros, [], None
        matrix = np.stack(normalized)
        if count and (matrix.max() > MAX_NODE_SCORE or matrix.min() < MIN_NODE_SCORE):
            return zeros, [], _out_of_range(active, normalized)
        weights = [self.weights[p.name] for p in active]
        totals: IntArray = np.asarray(weights, dtype=np.int64) @ matrix
        parts = zip(active, raws, normalized, weights, strict=True)
        return totals, [PluginScores(p.name, raw, scores, w) for p, raw, scores, w in parts], None

    def _raw_scores(
        self,
        active: Sequence[ScorePlugin],
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        table: NodeTable | None,
        rows: IntArray | None,
    ) -> tuple[list[IntArray], Status | None]:
        """Each plugin's Score over the nodes, over the table's columns when there is a `table`."""
        raws: list[IntArray] = []
        for plugin in active:
            try:
                if table is not None and rows is not None and declares(plugin, ScoreBatchPlugin):
                    raw = plugin.score_batch(state, pod, table, rows)
                    if raw.dtype != np.int64:
                        raw = raw.astype(np.int64)
                else:
                    raw = np.fromiter((plugin.score(state, pod, n) for n in nodes), dtype=np.int64, count=len(nodes))
            except StatusError as e:
                message = f'running Score plugins: plugin "{plugin.name}" failed with: {e.status.message}'
                return raws, Status(Code.ERROR, message, plugin=plugin.name)
            except Exception as e:
                status = self._crashed(plugin, ExtensionPoint.SCORE, e)
                message = f'running Score plugins: plugin "{plugin.name}" failed with: {status.message}'
                return raws, Status(Code.ERROR, message, plugin=plugin.name)
            raws.append(raw)
        return raws, None

    def _normalized(
        self, active: Sequence[ScorePlugin], raws: list[IntArray], state: CycleState, pod: PodInfo, *, batch: bool
    ) -> tuple[list[IntArray], Status | None]:
        """Each plugin's scores after its NormalizeScore (as they were, for a plugin without one)."""
        normalized: list[IntArray] = []
        for plugin, raw in zip(active, raws, strict=True):
            scores = raw
            try:
                if batch and declares(plugin, NormalizeScoreBatch):
                    scores = plugin.normalize_score_batch(state, pod, raw)
                elif declares(plugin, ScoreExtensions):
                    values = raw.tolist()
                    verdict = plugin.normalize_score(state, pod, values)
                    if verdict is not None and verdict.code != Code.SUCCESS:
                        message = (
                            f'running Normalize on Score plugins: plugin "{plugin.name}" failed with: {verdict.message}'
                        )
                        return normalized, Status(Code.ERROR, message, plugin=plugin.name)
                    scores = np.asarray(values, dtype=np.int64)
            except Exception as e:
                status = self._crashed(plugin, ExtensionPoint.SCORE, e)
                message = f'running Normalize on Score plugins: plugin "{plugin.name}" failed with: {status.message}'
                return normalized, Status(Code.ERROR, message, plugin=plugin.name)
            normalized.append(scores)
        return normalized, None

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        for plugin in self.points.reserve:
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as e:
                status = self._crashed(plugin, ExtensionPoint.RESERVE, e)
            if status is not None and status.code != Code.SUCCESS:
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return _error('running Reserve plugin "{plugin}": {message}', plugin.name, status)
        return None

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for plugin in reversed(self.points.reserve):
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception as e:
                self._crashed(plugin, ExtensionPoint.RESERVE, e)

    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        waits: dict[str, float] = {}
        for plugin in self.points.permit:
            status: Status | None
            try:
                status, timeout = plugin.permit(state, pod, node_name)
            except Exception as e:
                status, timeout = self._crashed(plugin, ExtensionPoint.PERMIT, e), 0.0
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
        for plugin in self.points.pre_bind:
            try:
                status = await plugin.pre_bind(state, pod, node_name)
            except Exception as e:
                status = self._crashed(plugin, ExtensionPoint.PRE_BIND, e)
            if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return _error('running PreBind plugin "{plugin}": {message}', plugin.name, status)
        return None

    async def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        for plugin in self.points.bind:
            try:
                status = await plugin.bind(state, pod, node_name)
            except Exception as e:
                status = self._crashed(plugin, ExtensionPoint.BIND, e)
            if status is not None and status.code == Code.SKIP:
                continue
            if status is None or status.code == Code.SUCCESS:
                return None
            if status.is_rejected():
                return status.with_plugin(plugin.name)
            return _error('running Bind plugin "{plugin}": {message}', plugin.name, status)
        return SKIP

    def run_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for plugin in self.points.post_bind:
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception as e:
                self._crashed(plugin, ExtensionPoint.POST_BIND, e)

    # -- introspection ----------------------------------------------------------------------------

    def plugin(self, name: str) -> Plugin | None:
        return self.instances.get(name)

    def names(self, point: ExtensionPoint | str) -> list[str]:
        return [p.name for p in self.points.at(ExtensionPoint(point))]

    def score_weights(self) -> Mapping[str, int]:
        return dict(self.weights)

    def has_post_filter(self) -> bool:
        return bool(self.points.post_filter)

    def has_score(self) -> bool:
        return bool(self.points.score)
