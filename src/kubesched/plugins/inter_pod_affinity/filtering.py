"""Filter: AddPod/RemovePod update PreFilter's counts; Filter checks a node against them, per node or
over NodeTable rows (with which check rejects each row)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.plugin import Status
from kubesched.plugin.batch import Bool, Int, filter_per_node
from kubesched.plugins.inter_pod_affinity.base import _Base
from kubesched.plugins.inter_pod_affinity.counts import _bump
from kubesched.plugins.inter_pod_affinity.names import PRE_FILTER_STATE_KEY
from kubesched.plugins.inter_pod_affinity.state import _not_found, _PreFilterState
from kubesched.plugins.inter_pod_affinity.terms import _labels, _matches_all

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
# Filter verdicts of the batch path, in the order Filter checks them.
_PASSES, _NO_AFFINITY, _ANTI_AFFINITY, _EXISTING_ANTI_AFFINITY = 0, 1, 2, 3


class _Filtering(_Base):
    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        return self._update(state, pod_to_add, node, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        return self._update(state, pod_to_remove, node, -1)

    def _update(self, state: CycleState, other: PodInfo, node: NodeInfo, delta: int) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status.error(_not_found("error reading {}", PRE_FILTER_STATE_KEY))
        labels = _labels(node)
        for t in self._terms(other.pod).required_anti_affinity:
            if t.matches(s.pod, s.namespace_labels):
                _bump(s.existing, labels, t.topology_key, delta)
        if _matches_all(s.affinity_terms, other.pod):
            for t in s.affinity_terms:
                _bump(s.affinity, labels, t.topology_key, delta)
        for t in s.anti_affinity_terms:
            if t.matches(other.pod, None):
                _bump(s.anti_affinity, labels, t.topology_key, delta)
        return None

    # -- Filter -------------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status.error(_not_found("error reading {}", PRE_FILTER_STATE_KEY))
        if node.node is None:
            return Status.error("node not found")
        labels = _labels(node)
        if not s.satisfies_affinity(labels):
            return Status.unresolvable(ERR_REASON_AFFINITY)
        if not s.satisfies_anti_affinity(labels):
            return Status.unschedulable(ERR_REASON_ANTI_AFFINITY)
        if not s.satisfies_existing(labels):
            return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return filter_per_node(self.filter, state, pod, table, rows)  # the same error on every node
        failed = self._verdicts(s, table, rows) != _PASSES
        return failed if failed.any() else None

    def failure_signatures(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int | None:
        """For rejected rows: which of Filter's three checks rejects each (it decides the status)."""
        s = state.get(PRE_FILTER_STATE_KEY)
        return self._verdicts(s, table, rows) if isinstance(s, _PreFilterState) else None

    def _verdicts(self, s: _PreFilterState, table: NodeTable, rows: Int) -> Int:
        """Per row, the first of Filter's checks the node fails (`_PASSES` when none)."""
        out = np.zeros(len(rows), dtype=np.int64)
        if s.affinity_terms:
            missing = np.zeros(len(rows), dtype=np.bool_)
            short = np.zeros(len(rows), dtype=np.bool_)
            for t in s.affinity_terms:
                domains = self._domain_column(table, s.index, t.topology_key)[rows]
                missing |= domains < 0
                short |= s.affinity.padded(t.topology_key)[domains] <= 0
            first_of_group = not s.affinity.nonzero and s.matches_own_affinity
            out[missing if first_of_group else missing | short] = _NO_AFFINITY
        for counts, keys, verdict in (
            (s.anti_affinity, [t.topology_key for t in s.anti_affinity_terms], _ANTI_AFFINITY),
            (s.existing, list(s.existing.arrays), _EXISTING_ANTI_AFFINITY),
        ):
            if not counts.nonzero:
                continue
            hit = np.zeros(len(rows), dtype=np.bool_)
            for key in keys:
                domains = self._domain_column(table, s.index, key)[rows]
                hit |= counts.padded(key)[domains] > 0
            out[hit & (out == _PASSES)] = verdict
        return out
