"""What a filtering plugin does for a pod that needs none of what it checks: PreFilter returns
Skip (so its Filter does not run) and Filter, per node or over the table, passes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubesched.plugin import SKIP, PreFilterPlugin, PreFilterResult, Status
from kubesched.plugin.batch import Bool, FilterBatchPlugin, Int

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable


class SkippingFilter(PreFilterPlugin, FilterBatchPlugin):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, SKIP

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        return None  # Filter passes every node
