"""Score: a node's sum of PreScore's scores over its domains, per node or over NodeTable rows, and
the min-max normalization to 0-100."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.plugin import MAX_NODE_SCORE, Status, StatusError
from kubesched.plugin.batch import Int, score_per_node
from kubesched.plugins.inter_pod_affinity.base import _Base
from kubesched.plugins.inter_pod_affinity.names import PRE_SCORE_STATE_KEY
from kubesched.plugins.inter_pod_affinity.state import _not_found, _PreScoreState
from kubesched.plugins.inter_pod_affinity.terms import _labels

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable


class _Scoring(_Base):
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            raise StatusError(Status.error(_not_found("failed to read {}", PRE_SCORE_STATE_KEY)))
        labels = _labels(node)
        return sum(s.scores.get(key, labels[key]) for key in s.scores.arrays if key in labels)

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return score_per_node(self.score, state, pod, table, rows)  # raises the per-node error
        out = np.zeros(len(rows), dtype=np.int64)
        for key in s.scores.arrays:
            domains = self._domain_column(table, s.index, key)[rows]
            out += s.scores.padded(key)[domains]
        return out

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        if not isinstance(state.get(PRE_SCORE_STATE_KEY), _PreScoreState):
            return Status.error(_not_found("failed to read {}", PRE_SCORE_STATE_KEY))
        if not scores:
            return None
        low = min(scores)
        spread = max(scores) - low
        for i, value in enumerate(scores):
            scores[i] = int(MAX_NODE_SCORE * (float(value - low) / float(spread))) if spread > 0 else 0
        return None

    def normalize_score_batch(self, state: CycleState, pod: PodInfo, scores: Int) -> Int:
        if not len(scores):
            return scores
        low = int(scores.min())
        spread = int(scores.max()) - low
        if spread <= 0:
            return np.zeros(len(scores), dtype=np.int64)
        out: Int = (MAX_NODE_SCORE * ((scores - low).astype(np.float64) / float(spread))).astype(np.int64)
        return out
