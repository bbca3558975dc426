"""NodeName: a pod that names a node in `spec.nodeName` fits only that node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from kubesched.plugin import NODE, ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions, Status
from kubesched.plugin.batch import Bool, FilterBatchPlugin, Int

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, Handle, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterBatchPlugin, EnqueueExtensions):
    name: ClassVar[str] = NAME

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.node is None:
            return Status.error("node not found")
        wanted = pod.node_name
        if wanted and wanted != node.node.metadata.name:
            return Status.unresolvable(ERR_REASON)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        wanted = pod.node_name
        if not wanted:
            return None
        row = table.index.get(wanted)
        mask: Bool = rows != (-1 if row is None else row)
        return mask

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Only a new node (with the requested name) can change this plugin's verdict. Upstream
        # attaches no hint function (the event always requeues), so none is given here either.
        return [ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD))]


def new(args: object, handle: Handle) -> NodeName:
    """NodeName takes no arguments."""
    return NodeName()
