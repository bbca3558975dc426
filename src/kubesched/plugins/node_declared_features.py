"""NodeDeclaredFeatures (beta in 1.36): a pod that needs node features (inferred from its spec)
fits only nodes whose `status.declaredFeatures` list them.

No modelled pod field requires a declared feature, so PreFilter returns Skip and Filter passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.status import SKIP, Status
from kubesched.plugins.batch import Bool, Int

if TYPE_CHECKING:
    from kubesched.cache import NodeInfo, PodInfo
    from kubesched.cache.table import NodeTable
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interface import Handle

NAME = "NodeDeclaredFeatures"


class NodeDeclaredFeatures:
    name: ClassVar[str] = NAME

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, SKIP

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        return None  # Filter passes every node

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE)),
            ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE)),
        ]


def new(args: Any, handle: Handle) -> NodeDeclaredFeatures:
    """NodeDeclaredFeatures takes no arguments."""
    return NodeDeclaredFeatures()
