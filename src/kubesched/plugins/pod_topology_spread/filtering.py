"""PreFilter (the domain counts of the hard constraints), AddPod/RemovePod, and Filter, per node
and over NodeTable rows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.plugin import SKIP, PreFilterResult, Status
from kubesched.plugin.batch import Bool, Int, filter_per_node
from kubesched.plugins.pod_topology_spread.args import DO_NOT_SCHEDULE
from kubesched.plugins.pod_topology_spread.columns import Columns, _sums
from kubesched.plugins.pod_topology_spread.constraints import Constraint, _labels, count_matching, has_all_keys
from kubesched.plugins.pod_topology_spread.state import PRE_FILTER_STATE_KEY, Domains, _domains_of, _PreFilterState

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

# Failure codes of the batch filter, in the order the per-node Filter reports them.
_PASS, _MISSING_LABEL, _TOO_SKEWED = 0, 1, 2


class Filtering(Columns):
    """PreFilter, AddPod/RemovePod and Filter of the plugin."""

    # -- PreFilter and its extensions ------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        try:
            constraints = self.constraints(pod.pod, DO_NOT_SCHEDULE)
        except ValueError as err:
            return None, Status.error(f"get constraints from pod: {err}")
        if not constraints:
            return None, SKIP
        found = self._rows(nodes)
        if found is not None:
            domains = self._domains_from_table(pod, constraints, *found)
        else:
            domains = self._domains_per_node(pod, constraints, nodes)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(constraints, domains))
        return None, None

    def _domains_per_node(
        self, pod: PodInfo, constraints: Sequence[Constraint], nodes: Iterable[NodeInfo]
    ) -> list[Domains]:
        sums: list[dict[int, int]] = [{} for _ in constraints]
        ids = [self._ids(c.topology_key) for c in constraints]
        for node in nodes:
            if node.node is None:
                continue
            labels = _labels(node.node)
            if not has_all_keys(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if self._included(c, pod, node):
                    d = ids[i].setdefault(labels[c.topology_key], len(ids[i]))
                    sums[i][d] = sums[i].get(d, 0) + count_matching(node.pods, c.selector, pod.namespace)
        return [_domains_of(i, s) for i, s in zip(ids, sums, strict=True)]

    def _domains_from_table(
        self, pod: PodInfo, constraints: Sequence[Constraint], table: NodeTable, rows: Int
    ) -> list[Domains]:
        columns = [self._domain_column(table, c.topology_key)[rows] for c in constraints]
        has_all: Bool = np.logical_and.reduce([column >= 0 for column in columns])
        out: list[Domains] = []
        for c, column in zip(constraints, columns, strict=True):
            included = self._included_column(table, pod, c)
            eligible = has_all if included is None else has_all & included[rows]
            ids = self._ids(c.topology_key)
            present = np.bincount(column[eligible], minlength=len(ids)) > 0
            counts = self._count_column(table, pod.namespace, c.selector)
            out.append(Domains(ids, _sums(column, eligible, counts, rows, len(present)), present))
        return out

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod, pod_to_add, node, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod, pod_to_remove, node, -1)

    def _update_with_pod(
        self, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int
    ) -> Status | None:
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if other.namespace != pod.namespace or node.node is None:
            return None
        labels = _labels(node.node)
        if not has_all_keys(labels, pre.constraints):
            return None
        other_labels = other.pod.metadata.labels
        for c, domains in zip(pre.constraints, pre.domains, strict=True):
            if c.selector.matches(other_labels) and self._included(c, pod, node):
                domains.update(labels[c.topology_key], delta)
        return None

    # -- Filter -----------------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if node.node is None:
            return Status.error("node not found")
        labels = _labels(node.node)
        pod_labels = pod.pod.metadata.labels
        for c, domains in zip(pre.constraints, pre.domains, strict=True):
            value = labels.get(c.topology_key)
            if value is None:
                return Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            self_match = 1 if c.selector.matches(pod_labels) else 0
            if domains.count(value) + self_match - domains.global_minimum(c.min_domains) > c.max_skew:
                return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def _failure_codes(self, pre: _PreFilterState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        """Per row, why the per-node Filter rejects it (`_MISSING_LABEL`, `_TOO_SKEWED`) or `_PASS`."""
        codes = np.zeros(len(rows), dtype=np.int64)
        pod_labels = pod.pod.metadata.labels
        for c, domains in zip(pre.constraints, pre.domains, strict=True):
            ids = self._domain_column(table, c.topology_key)[rows]
            missing = ids < 0
            self_match = 1 if c.selector.matches(pod_labels) else 0
            limit = c.max_skew - self_match + domains.global_minimum(c.min_domains)
            skewed = domains.column(np.where(missing, 0, ids)) > limit
            codes = np.where(codes == _PASS, np.where(missing, _MISSING_LABEL, skewed * _TOO_SKEWED), codes)
        return codes

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return filter_per_node(self.filter, state, pod, table, rows)  # the same error on every node
        if not pre.constraints or not len(rows):
            return None
        failing: Bool = self._failure_codes(pre, pod, table, rows) != _PASS
        return failing if failing.any() else None

    def failure_signatures(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int | None:
        """For rows this plugin rejects: which of its two statuses `filter` gives there."""
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return None
        return self._failure_codes(pre, pod, table, rows)
