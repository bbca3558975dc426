"""One scheduling attempt's search: PreFilter, Filter until enough nodes fit, Score, pick a host."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubesched.cache import Cache, NodeInfo, PodInfo, Snapshot
from kubesched.cache.table import NodeTable, RowNodes
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import FilterBatchPlugin
from kubesched.framework.runtime import Framework, IntArray, PluginScores
from kubesched.framework.status import Code, Status
from kubesched.scheduler.fit_error import NO_NODES_AVAILABLE, Diagnosis, FitError, num_feasible_nodes_to_find
from kubesched.trace import Tracer


class SchedulingError(Exception):
    """The attempt failed with an error (not a verdict): the pod backs off and is retried."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


class NoNodesAvailable(SchedulingError):
    def __init__(self) -> None:
        super().__init__(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_NODES_AVAILABLE))


@dataclass
class Search:
    """Where the last search started and how far it meant to go: the nodes PreFilter left, the
    feasible nodes to find (numFeasibleNodesToFind), the round-robin start index."""

    candidates: int = 0
    to_find: int = 0
    start: int = 0
    nominated: str = ""  # the pod's nominated node, when it passed and no search was made


@dataclass
class ScheduleResult:
    """The chosen host, and what the search saw (for traces, the golden runner and tests)."""

    host: str
    evaluated_nodes: int
    feasible_nodes: int
    scored: Sequence[NodeInfo] = field(default_factory=list)
    totals: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))  # per scored node
    plugin_scores: list[PluginScores] = field(default_factory=list)
    top_indices: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))  # into `scored`
    diagnosis: Diagnosis | None = None  # the verdicts of the nodes that failed Filter on the way

    @property
    def top(self) -> list[str]:
        """The scored nodes sharing the highest total (the host is one of them)."""
        return [self.scored[i].name for i in self.top_indices.tolist()]


FilterFn = Callable[[Framework, CycleState, PodInfo, NodeInfo], Status | None]


def plain_filter(fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
    """Filter one node with the profile's plugins (no nominated pods to account for)."""
    return fwk.run_filter(state, pod, node)


def with_nominated(fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
    """Filter one node counting the pods nominated to it (the framework's two-pass filter)."""
    return fwk.run_filter_with_nominated_pods(state, pod, node)


class Algorithm:
    """The search, with its state across attempts: the round-robin start index and the tie-break RNG."""

    def __init__(
        self,
        cache: Cache,
        snapshot: Snapshot,
        *,
        percentage: int,
        seed: int = 0,
        batch: bool = True,
        tracer: Tracer | None = None,
    ) -> None:
        self.trace = tracer or Tracer(lambda: 0.0)  # a disabled one unless given
        self.batch = batch  # use plugins' batch methods over the NodeTable where every plugin has one
        self.feasible_rows: IntArray | None = None  # table rows of the last search's feasible nodes (batch path)
        self.cache = cache
        self.snapshot = snapshot
        self.percentage = percentage
        self.next_start_node_index = 0
        self.search = Search()  # the last search's
        self.rng = random.Random(seed)

    def percentage_for(self, fwk: Framework) -> int:
        p = fwk.percentage_of_nodes_to_score
        return self.percentage if p is None else p

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: PodInfo, run_filter: FilterFn) -> ScheduleResult:
        """Find the best node for `pod`; FitError when none fits, SchedulingError on an error."""
        self.cache.update_snapshot(self.snapshot)
        if not self.snapshot.node_info_list:
            raise NoNodesAvailable()
        self.feasible_rows = None
        feasible, diagnosis = self.find_nodes_that_fit(fwk, state, pod, run_filter)
        evaluated = len(feasible) + len(diagnosis.node_to_status)
        if self.trace.enabled:
            self.trace.emit("cycle.filtered", pod=pod.key, feasible=len(feasible), evaluated=evaluated)
        if not feasible:
            raise FitError(pod.key, len(self.snapshot.node_info_list), diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(
                feasible[0].name,
                evaluated,
                1,
                scored=list(feasible),
                top_indices=np.zeros(1, np.int64),
                diagnosis=diagnosis,
            )
        table = self.snapshot.table if self.batch else None
        totals, plugin_scores = self.prioritize(fwk, state, pod, feasible, table, self.feasible_rows)
        best = np.flatnonzero(totals == totals.max())
        if self.trace.enabled:
            self.trace.emit("cycle.scored", pod=pod.key, scored=len(feasible), best=int(totals.max()), tied=len(best))
        chosen = int(best[0]) if len(best) == 1 else self.rng.choice(best.tolist())
        return ScheduleResult(
            feasible[chosen].name, evaluated, len(feasible), feasible, totals, plugin_scores, best, diagnosis
        )

    def find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: PodInfo, run_filter: FilterFn
    ) -> tuple[Sequence[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        all_nodes = self.snapshot.node_info_list
        self.search = Search(start=self.next_start_node_index % len(all_nodes))
        result, status, narrowing = fwk.run_pre_filter(state, pod, all_nodes)
        diagnosis.unschedulable_plugins.update(narrowing)
        if status is not None and status.code != Code.SUCCESS:
            if not status.is_rejected():
                raise SchedulingError(status)
            diagnosis.node_to_status.absent = status
            diagnosis.pre_filter_msg = status.message
            diagnosis.add_plugin(status)
            return [], diagnosis
        nominated = pod.pod.status.nominatedNodeName if pod.pod.status else None
        if nominated:
            node = self.snapshot.get(nominated)
            if node is not None:
                verdict = run_filter(fwk, state, pod, node)
                if verdict is None:
                    self.search.nominated = nominated
                    return [node], diagnosis
                if verdict.code != Code.ERROR:
                    diagnosis.record(node.name, verdict)
        nodes: Sequence[NodeInfo] = all_nodes
        if result is not None and not result.all_nodes():
            wanted = result.node_names or set()
            nodes = [n for n in all_nodes if n.name in wanted]
            diagnosis.node_to_status.absent = Status.unresolvable(
                f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}]"
            )
        feasible = self.find_nodes_that_pass_filters(fwk, state, pod, nodes, diagnosis, run_filter)
        processed = len(feasible) + len(diagnosis.node_to_status)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        return feasible, diagnosis

    def find_nodes_that_pass_filters(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        diagnosis: Diagnosis,
        run_filter: FilterFn,
    ) -> Sequence[NodeInfo]:
        count = len(nodes)
        if count == 0:
            return []
        to_find = num_feasible_nodes_to_find(self.percentage_for(fwk), count)
        if not fwk.has_score():
            to_find = 1
        start = self.next_start_node_index % count
        self.search = Search(candidates=count, to_find=to_find, start=start)
        if not fwk.points.filter:
            return [nodes[(start + i) % count] for i in range(min(to_find, count))]
        plugins = fwk.batch_filters(state) if self.batch else None
        if plugins is not None:
            per_node = self._nominated_rows(fwk, pod) if run_filter is not plain_filter else None
            return self._pass_filters_batch(
                fwk, plugins, state, pod, nodes, diagnosis, start, to_find, per_node=per_node, run_filter=run_filter
            )
        feasible: list[NodeInfo] = []
        for i in range(count):
            node = nodes[(start + i) % count]
            status = run_filter(fwk, state, pod, node)
            if status is None:
                feasible.append(node)
                if len(feasible) >= to_find:
                    break
            elif status.code == Code.ERROR:
                raise SchedulingError(status)
            else:
                diagnosis.record(node.name, status)
        return feasible

    def _nominated_rows(self, fwk: Framework, pod: PodInfo) -> IntArray | None:
        """The table rows of the nodes other pods of at least `pod`'s priority are nominated to."""
        index = self.snapshot.table.index
        rows = [index[name] for name in fwk.nominated_nodes(pod) if name in index]
        return np.array(rows, dtype=np.int64) if rows else None

    def _pass_filters_batch(
        self,
        fwk: Framework,
        plugins: list[FilterBatchPlugin],
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        diagnosis: Diagnosis,
        start: int,
        to_find: int,
        *,
        per_node: IntArray | None = None,
        run_filter: FilterFn = plain_filter,
    ) -> Sequence[NodeInfo]:
        """The same search over the NodeTable: each node's first failing plugin, computed chunk by
        chunk, and the verdicts of exactly the nodes the sequential search would have visited
        before finding `to_find` feasible ones. The rows in `per_node` (nodes with pods nominated
        to them) are judged by `run_filter` one by one instead; a failure there is marked with
        the index one past the plugins and its status kept."""
        table = self.snapshot.table
        judged: dict[int, Status] = {}
        count = len(nodes)
        rows = self._rows_from(nodes, start)
        # Visit the rows in chunks (each twice the last), as the sequential search would, until
        # enough nodes fit.
        chunk = max(2 * to_find, 256)
        parts: list[IntArray | None] = []
        sizes: list[int] = []
        found = offset = 0
        while offset < count:
            part = fwk.run_filter_batch(plugins, state, pod, table, rows[offset : offset + chunk])
            size = min(chunk, count - offset)
            if per_node is not None:
                part = self._judge_per_node(
                    fwk, state, pod, rows[offset : offset + size], part, per_node, judged, run_filter, len(plugins)
                )
            parts.append(part)
            sizes.append(size)
            found += size if part is None else int(np.count_nonzero(part < 0))
            if found >= to_find:
                break
            offset, chunk = offset + size, 2 * chunk
        if all(part is None for part in parts):  # every visited node passes
            self.feasible_rows = rows[: min(to_find, count)]
            return self._nodes_of(self.feasible_rows)
        first = np.concatenate(
            [np.full(size, -1, np.int64) if p is None else p for p, size in zip(parts, sizes, strict=True)]
        )
        passing = np.flatnonzero(first < 0)[:to_find]
        end = int(passing[-1]) + 1 if len(passing) == to_find else len(first)
        positions = np.flatnonzero(first[:end] >= 0)
        failing = rows[positions]
        distinct, which = self._failure_statuses(fwk, plugins, state, pod, failing, first[positions], judged)
        for status in distinct:
            if status.code == Code.ERROR:
                raise SchedulingError(status)
        diagnosis.record_many(table.names_of(failing), distinct, which)
        self.feasible_rows = rows[passing]
        return self._nodes_of(self.feasible_rows)

    def _rows_from(self, nodes: Sequence[NodeInfo], start: int) -> IntArray:
        """The table rows of `nodes` in the search's order: from the node at `start`, around."""
        table = self.snapshot.table
        count = len(nodes)
        if nodes is self.snapshot.node_info_list:
            ring = table.ring  # every row, twice: any rotation is a slice
        else:
            positions = np.fromiter((table.index[n.name] for n in nodes), dtype=np.int64, count=count)
            ring = np.concatenate((positions, positions))
        rows: IntArray = ring[start : start + count]
        return rows

    def _judge_per_node(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        chunk: IntArray,
        part: IntArray | None,
        per_node: IntArray,
        judged: dict[int, Status],
        run_filter: FilterFn,
        marker: int,
    ) -> IntArray | None:
        """`part` (the chunk's first failing plugins) with the rows in `per_node` judged by
        `run_filter` instead: -1 when they pass, `marker` (their status in `judged`) when not."""
        hits = np.flatnonzero(np.isin(chunk, per_node))
        if len(hits) == 0:
            return part
        part = np.full(len(chunk), -1, np.int64) if part is None else part.copy()
        nodes = self.snapshot.table.nodes
        for h in hits.tolist():
            row = int(chunk[h])
            status = run_filter(fwk, state, pod, nodes[row])
            if status is None:
                part[h] = -1
            else:
                part[h] = marker
                judged[row] = status
        return part

    def _failure_statuses(
        self,
        fwk: Framework,
        plugins: list[FilterBatchPlugin],
        state: CycleState,
        pod: PodInfo,
        rows: IntArray,
        culprits: IntArray,
        judged: dict[int, Status],
    ) -> tuple[list[Status], IntArray]:
        """The per-node Filter status of each failing row from the plugin that rejected it, as
        distinct statuses and, per row, the index of its own. A plugin with `failure_signatures`
        (equal signature, equal status) is asked once per signature; a row judged one by one
        (index one past the plugins) has the status it was judged with."""
        table = self.snapshot.table
        distinct: list[Status] = []
        which = np.zeros(len(rows), dtype=np.int64)
        for k in np.unique(culprits).tolist():
            at = np.flatnonzero(culprits == k)
            if k == len(plugins):
                for i in at.tolist():
                    which[i] = len(distinct)
                    distinct.append(judged[int(rows[i])])
                continue
            plugin = plugins[k]
            sigs = fwk.failure_signatures(plugin, state, pod, table, rows[at])
            if sigs is None:
                picks, shared = at, np.arange(len(at))
            else:
                _, first_of, shared = np.unique(sigs, return_index=True, return_inverse=True)
                picks = at[first_of]
            which[at] = len(distinct) + shared
            for i in picks.tolist():
                node = table.nodes[int(rows[i])]
                status = fwk.filter_status(plugin, state, pod, node)
                if status is None:  # the batch and per-node methods disagree: a plugin bug, reported as such
                    raise SchedulingError(Status.error(f"batch filter of {plugin.name} disagrees on {node.name}"))
                distinct.append(status)
        return distinct, which

    def _nodes_of(self, rows: IntArray) -> RowNodes:
        """The NodeInfo of each table row (looked up when read)."""
        return RowNodes(self.snapshot.table, rows)

    @staticmethod
    def prioritize(
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        table: NodeTable | None = None,
        rows: IntArray | None = None,
    ) -> tuple[IntArray, list[PluginScores]]:
        """Each node's total score (PreScore, Score, NormalizeScore, weights)."""
        if not fwk.has_score():
            return np.ones(len(nodes), dtype=np.int64), []
        status = fwk.run_pre_score(state, pod, nodes)
        if status is not None:
            raise SchedulingError(status)
        totals, plugin_scores, status = fwk.run_score(state, pod, nodes, table, rows)
        if status is not None:
            raise SchedulingError(status)
        return totals, plugin_scores
