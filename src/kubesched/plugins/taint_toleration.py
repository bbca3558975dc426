"""TaintToleration: filter out nodes with untolerated NoSchedule/NoExecute taints, and prefer nodes
with fewer untolerated PreferNoSchedule taints."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
import numpy as np
from lightkube.models import core_v1
from lightkube.models import core_v1 as m

from kubesched.api.objects import meta_of
from kubesched.api.tolerations import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, find_untolerated_taint, tolerates
from kubesched.plugin import (
    MAX_NODE_SCORE,
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    PreScorePlugin,
    QueueingHint,
    Status,
    StatusError,
    default_normalize_score,
)
from kubesched.plugin.batch import (
    Bool,
    FailureSignatures,
    HintKeys,
    Int,
    NormalizeScoreBatch,
    ScoreBatchPlugin,
    default_normalize_array,
    filter_memo,
    score_per_node,
)

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, Handle, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable

NAME = "TaintToleration"
ERR_REASON_NOT_MATCH = "node(s) had untolerated taint(s)"
PRE_SCORE_STATE_KEY = "PreScore" + NAME

# Only these effects keep a pod off a node; PreferNoSchedule merely lowers the score.
_FILTER_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})


@dataclass(frozen=True)
class _PreScoreState:
    """The pod's tolerations that can tolerate a PreferNoSchedule taint (effect empty or PreferNoSchedule)."""

    tolerations: tuple[core_v1.Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self  # immutable


def _taints(node: core_v1.Node) -> list[core_v1.Taint]:
    return list((node.spec.taints if node.spec is not None else None) or ())


def has_untolerated_hard_taint(node: core_v1.Node, tolerations: Sequence[core_v1.Toleration] | None) -> bool:
    """Whether the node has a NoSchedule/NoExecute taint none of `tolerations` tolerates (Filter's check)."""
    return find_untolerated_taint(_taints(node), tolerations, effects=_FILTER_EFFECTS) is not None


def count_intolerable_prefer_no_schedule(
    taints: Sequence[core_v1.Taint], tolerations: Sequence[core_v1.Toleration]
) -> int:
    """How many PreferNoSchedule taints none of `tolerations` tolerates."""
    return sum(
        1
        for taint in taints
        if taint.effect == PREFER_NO_SCHEDULE and not any(tolerates(t, taint) for t in tolerations)
    )


class TaintToleration(FailureSignatures, PreScorePlugin, ScoreBatchPlugin, NormalizeScoreBatch, HintKeys):
    name: ClassVar[str] = NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.node is None:
            return Status.error("node not found")
        if not has_untolerated_hard_taint(node.node, pod.pod.spec.tolerations):
            return None
        return Status.unresolvable(ERR_REASON_NOT_MATCH)

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        # A node without NoSchedule/NoExecute taints passes. The verdict depends on the node's
        # taints and the pod's tolerations only: a memo column per distinct set of tolerations,
        # kept across cycles (pods of one template share it), refreshed for updated nodes.
        if table.flagged("hard_taints", rows) is None:
            return None
        return filter_memo(self.filter, state, pod, table, rows, (NAME + "/filter", id(self), self.hint_key(pod.pod)))

    def failure_signatures(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        """Every failing node fails with the same status."""
        return np.zeros(len(rows), dtype=np.int64)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        kept = tuple(t for t in pod.pod.spec.tolerations or () if not t.effect or t.effect == PREFER_NO_SCHEDULE)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(kept))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        data = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(data, _PreScoreState):
            raise StatusError(Status.error(f'reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found'))
        if node.node is None:
            raise StatusError(Status.error("node not found"))
        return count_intolerable_prefer_no_schedule(_taints(node.node), data.tolerations)

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        if not isinstance(state.get(PRE_SCORE_STATE_KEY), _PreScoreState):
            return score_per_node(self.score, state, pod, table, rows)  # raises as the per-node method does
        # A node without PreferNoSchedule taints has none to count: 0.
        return score_per_node(self.score, state, pod, table, rows, flag="soft_taints")

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        # More intolerable taints is worse: the node with the most gets 0, nodes with none get 100.
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    def normalize_score_batch(self, state: CycleState, pod: PodInfo, scores: Int) -> Int:
        return default_normalize_array(MAX_NODE_SCORE, True, scores)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                hint=self._is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATION),
                hint=self._is_schedulable_after_pod_toleration_change,
            ),
        ]

    # Any: the queued pod as served (spec set), read without checks on the queue's per-pod path
    def hint_key(self, pod: Any) -> Hashable:
        """The hints read the pod's tolerations (and, for its own updates, its identity)."""
        return msgspec.json.encode(pod.spec.tolerations or [])

    def _is_schedulable_after_node_change(self, pod: m.Pod, old: m.Node | None, new: m.Node) -> QueueingHint:
        """Queue when the pod tolerates every hard taint of the node now but did not before (or the
        node is new)."""
        tolerations = pod.spec.tolerations if pod.spec else None
        was_untolerated = old is None or has_untolerated_hard_taint(old, tolerations)
        if was_untolerated and not has_untolerated_hard_taint(new, tolerations):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # Any: the event's pod as served (metadata set), read without checks in this hint
    def _is_schedulable_after_pod_toleration_change(self, pod: m.Pod, old: object, new: Any) -> QueueingHint:
        """Queue when the updated pod is the queued pod itself; other pods' tolerations do not matter."""
        if (new.metadata.uid or "") == (meta_of(pod).uid or ""):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def new(args: object, handle: Handle) -> TaintToleration:
    """TaintToleration takes no arguments."""
    return TaintToleration()
