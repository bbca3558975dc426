"""PreScore (the weights and domain counts of the soft constraints), Score and NormalizeScore, per
node and over NodeTable rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.plugin import MAX_NODE_SCORE, SKIP, Status, StatusError
from kubesched.plugin.batch import Bool, Int
from kubesched.plugins.pod_topology_spread.args import HOSTNAME, SCHEDULE_ANYWAY
from kubesched.plugins.pod_topology_spread.columns import Columns, _sums
from kubesched.plugins.pod_topology_spread.constraints import Constraint, _labels, count_matching, has_all_keys
from kubesched.plugins.pod_topology_spread.go_math import _go_round_array, go_log, go_round
from kubesched.plugins.pod_topology_spread.state import PRE_SCORE_STATE_KEY, Domains, _domains_of, _PreScoreState

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable

MAX_INT64 = 2**63 - 1


def topology_normalizing_weight(size: int) -> float:
    return go_log(float(size + 2))


class Scoring(Columns):
    """PreScore, Score and NormalizeScore of the plugin."""

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes: Sequence[NodeInfo] = self.handle.snapshot.node_info_list
        if not all_nodes:
            return SKIP
        try:
            constraints = self.constraints(pod.pod, SCHEDULE_ANYWAY)
        except ValueError as err:
            return Status.error(f"calculating preScoreState: {err}")
        if not constraints:
            return SKIP
        # Nodes must have every key unless the constraints are the system defaults (so that nodes
        # without a zone still spread by hostname).
        require_all = bool(pod.pod.spec.topologySpreadConstraints) or not self.system_defaulted
        found = self._rows(nodes)
        whole = self._rows(all_nodes) if found is not None else None
        if found is not None and whole is not None:
            pre = self._pre_score_from_table(pod, constraints, require_all, found[0], found[1], whole[1])
        else:
            pre = self._pre_score_per_node(pod, constraints, require_all, nodes, all_nodes)
        state.write(PRE_SCORE_STATE_KEY, pre)
        return None

    def _pre_score_per_node(
        self,
        pod: PodInfo,
        constraints: Sequence[Constraint],
        require_all: bool,
        nodes: Sequence[NodeInfo],
        all_nodes: Sequence[NodeInfo],
    ) -> _PreScoreState:
        ignored = np.array(
            [require_all and not has_all_keys(_labels(n.node), constraints) for n in nodes], dtype=np.bool_
        )
        scored = [n for n, skip in zip(nodes, ignored.tolist(), strict=True) if not skip]
        weights: list[float] = []
        domains: list[Domains | None] = []
        for c in constraints:
            if c.topology_key == HOSTNAME:
                weights.append(topology_normalizing_weight(len(scored)))
                domains.append(None)
                continue
            ids = self._ids(c.topology_key)
            wanted = {ids.setdefault(_labels(n.node).get(c.topology_key, ""), len(ids)) for n in scored}
            weights.append(topology_normalizing_weight(len(wanted)))
            sums = dict.fromkeys(wanted, 0)
            for node in all_nodes:
                labels = _labels(node.node)
                if require_all and not has_all_keys(labels, constraints):
                    continue
                d = ids.get(labels.get(c.topology_key, ""))
                if d in sums and self._included(c, pod, node):
                    sums[d] += count_matching(node.pods, c.selector, pod.namespace)
            domains.append(_domains_of(ids, sums))
        return _PreScoreState(tuple(constraints), require_all, tuple(weights), tuple(domains), ignored, pod.namespace)

    def _pre_score_from_table(
        self,
        pod: PodInfo,
        constraints: Sequence[Constraint],
        require_all: bool,
        table: NodeTable,
        rows: Int,
        all_rows: Int,
    ) -> _PreScoreState:
        """The state over table rows: `rows` are the nodes to score, `all_rows` every node."""
        columns = [self._domain_column(table, c.topology_key) for c in constraints]
        has_all: Bool = np.logical_and.reduce([column >= 0 for column in columns])
        ignored = ~has_all[rows] if require_all else np.zeros(len(rows), dtype=np.bool_)
        scored = rows[~ignored]
        weights: list[float] = []
        domains: list[Domains | None] = []
        for c, column in zip(constraints, columns, strict=True):
            if c.topology_key == HOSTNAME:
                weights.append(topology_normalizing_weight(len(scored)))
                domains.append(None)
                continue
            ids = self._ids(c.topology_key)
            if not require_all:  # a node without the key belongs to the domain ""
                column = np.where(column < 0, ids.setdefault("", len(ids)), column)
            present = np.bincount(column[scored], minlength=len(ids)) > 0
            weights.append(topology_normalizing_weight(int(np.count_nonzero(present))))
            included = self._included_column(table, pod, c)
            eligible = has_all[all_rows] if require_all else np.ones(len(all_rows), dtype=np.bool_)
            if included is not None:
                eligible &= included[all_rows]
            counts = self._count_column(table, pod.namespace, c.selector)
            sums = _sums(column[all_rows], eligible, counts, all_rows, len(present))
            domains.append(Domains(ids, np.where(present, sums, 0), present))
        return _PreScoreState(tuple(constraints), require_all, tuple(weights), tuple(domains), ignored, pod.namespace)

    @staticmethod
    def _pre_score_state(state: CycleState) -> _PreScoreState:
        pre = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(pre, _PreScoreState):
            raise StatusError(Status.error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found'))
        return pre

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        pre = self._pre_score_state(state)
        if node.node is None:
            raise StatusError(Status.error("node not found"))
        labels = _labels(node.node)
        if pre.is_ignored(labels):
            return 0
        total = 0.0
        for c, weight, domains in zip(pre.constraints, pre.weights, pre.domains, strict=True):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            count = count_matching(node.pods, c.selector, pre.namespace) if domains is None else domains.count(value)
            total += count * weight + float(c.max_skew - 1)
        return go_round(total)

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        pre = self._pre_score_state(state)
        total = np.zeros(len(rows), dtype=np.float64)
        has_all = np.ones(len(rows), dtype=np.bool_)
        for c, weight, domains in zip(pre.constraints, pre.weights, pre.domains, strict=True):
            ids = self._domain_column(table, c.topology_key)[rows]
            has = ids >= 0
            has_all &= has
            if domains is None:
                column = self._count_column(table, pre.namespace, c.selector)
                counts = np.zeros(len(rows), dtype=np.int64) if column is None else column[rows]
            else:
                counts = domains.column(np.where(has, ids, 0))
            total = np.where(has, total + (counts.astype(np.float64) * weight + float(c.max_skew - 1)), total)
        scores = _go_round_array(total)
        if pre.require_all:
            scores = np.where(has_all, scores, 0)
        return scores

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        try:
            pre = self._pre_score_state(state)
        except StatusError as err:
            return err.status
        scores[:] = _normalize(pre, np.asarray(scores, dtype=np.int64)).tolist()
        return None

    def normalize_score_batch(self, state: CycleState, pod: PodInfo, scores: Int) -> Int:
        return _normalize(self._pre_score_state(state), scores)


def _normalize(pre: _PreScoreState, scores: Int) -> Int:
    """Ignored nodes get 0; the others `100 * (max + min - score) / max`, or 100 when max is 0."""
    ignored = pre.ignored if len(pre.ignored) == len(scores) else np.zeros(len(scores), dtype=np.bool_)
    kept = scores[~ignored]
    highest = max(int(kept.max()), 0) if len(kept) else 0
    lowest = int(kept.min()) if len(kept) else MAX_INT64
    if highest == 0:
        normalized = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
    else:
        normalized = MAX_NODE_SCORE * (highest + lowest - scores) // highest
    out: Int = np.where(ignored, 0, normalized)
    return out
