"""NodeUnschedulable: reject cordoned nodes (`spec.unschedulable`) unless the pod tolerates the
`node.kubernetes.io/unschedulable:NoSchedule` taint."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from lightkube.models import core_v1
from lightkube.models import core_v1 as m

from kubesched.api.objects import meta_of
from kubesched.api.tolerations import NO_SCHEDULE, tolerates
from kubesched.plugin import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Status
from kubesched.plugin.batch import Bool, FilterBatchPlugin, HintKeys, Int

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, Handle, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

_UNSCHEDULABLE_TAINT = core_v1.Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=NO_SCHEDULE)


def tolerates_unschedulable(tolerations: Sequence[core_v1.Toleration] | None) -> bool:
    """Whether a pod's tolerations tolerate the taint a cordoned node carries (and so the cordon itself)."""
    return any(tolerates(t, _UNSCHEDULABLE_TAINT) for t in tolerations or ())


def _cordoned(node: core_v1.Node) -> bool:
    return node.spec is not None and bool(node.spec.unschedulable)


class NodeUnschedulable(FilterBatchPlugin, HintKeys):
    name: ClassVar[str] = NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.node is None:
            return Status.unresolvable(ERR_REASON_UNKNOWN_CONDITION)
        if not _cordoned(node.node):
            return None
        if tolerates_unschedulable(pod.pod.spec.tolerations):
            return None
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        # Snapshot rows always have a Node object, so only the cordon flag matters.
        cordoned = table.flagged("unschedulable", rows)
        if cordoned is None or not cordoned.any() or tolerates_unschedulable(pod.pod.spec.tolerations):
            return None
        return cordoned

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # A node added or uncordoned (UpdateNodeTaint covers spec.unschedulable turning false),
        # or the pod gaining a toleration, may make it schedulable.
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

    def hint_key(self, pod: object) -> Hashable:
        """The hints do not read the queued pod (beyond its identity, for its own updates)."""
        return ""

    def _is_schedulable_after_node_change(self, pod: m.Pod, old: m.Node | None, new: m.Node) -> QueueingHint:
        """Queue for a node added uncordoned, or a node uncordoned."""
        if not _cordoned(new) and (old is None or _cordoned(old)):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # Any: the event's pod as served (metadata set), read without checks in this hint
    def _is_schedulable_after_pod_toleration_change(self, pod: m.Pod, old: object, new: Any) -> QueueingHint:
        """Queue when the updated pod is the queued pod itself and now tolerates the cordon taint."""
        if (new.metadata.uid or "") == (meta_of(pod).uid or "") and tolerates_unschedulable(new.spec.tolerations):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def new(args: object, handle: Handle) -> NodeUnschedulable:
    """NodeUnschedulable takes no arguments."""
    return NodeUnschedulable()
