"""The NodeTable memo columns the batch paths read: each node's domain id per topology key, its
matching-pod count per (namespace, selector), and the inclusion policies; domain sums over rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from kubesched.api.selectors import LabelSelectorMatcher
from kubesched.plugin.batch import Bool, Int, RowNodes
from kubesched.plugins.pod_topology_spread.args import HONOR, NAME
from kubesched.plugins.pod_topology_spread.base import SpreadBase
from kubesched.plugins.pod_topology_spread.constraints import (
    Constraint,
    _labels,
    count_matching,
    is_empty,
    selector_key,
)
from kubesched.plugins.taint_toleration import has_untolerated_hard_taint

if TYPE_CHECKING:
    from kubesched.plugin import NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable


class Columns(SpreadBase):
    """The plugin's NodeTable columns, and its inclusion policies per node."""

    def _rows(self, nodes: Sequence[NodeInfo]) -> tuple[NodeTable, Int] | None:
        """The snapshot's table and the rows of `nodes` in it, when every one of `nodes` is a row
        of it (table rows, the snapshot's node list, or the very NodeInfo objects of some rows);
        else None, and the caller walks `nodes` one by one."""
        snapshot = self.handle.snapshot
        table = snapshot.table
        if not len(table):
            return None
        if isinstance(nodes, RowNodes):
            rows = nodes.rows
            return (table, rows) if not len(rows) or table.nodes[int(rows[0])] is nodes[0] else None
        in_step = len(nodes) == len(table) and table.nodes[0] is nodes[0] and table.nodes[-1] is nodes[-1]
        if nodes is snapshot.node_info_list and in_step:
            return table, table.ring[: len(table)]
        found = [table.index.get(n.name, -1) for n in nodes]
        if -1 in found or any(table.nodes[r] is not n for r, n in zip(found, nodes, strict=True)):
            return None
        return table, np.asarray(found, dtype=np.int64)

    def _domain_column(self, table: NodeTable, key: str) -> Int:
        """Each node's domain id for `key` (-1: the node lacks the label)."""
        ids = self._ids(key)

        def one(node: NodeInfo) -> int:
            value = _labels(node.node).get(key) if node.node is not None else None
            return -1 if value is None else ids.setdefault(value, len(ids))

        nodes = table.nodes
        return table.memo(
            (NAME + "/domain", self._token, key),
            lambda rows: np.fromiter((one(nodes[r]) for r in rows.tolist()), dtype=np.int64, count=len(rows)),
            one,
        )

    @staticmethod
    def _count_column(table: NodeTable, namespace: str, selector: LabelSelectorMatcher) -> Int | None:
        """Each node's count of pods of `namespace` the selector matches; None when it matches none."""
        if is_empty(selector) or selector.matches_nothing:
            return None

        def one(node: NodeInfo) -> int:
            return count_matching(node.pods, selector, namespace)

        nodes = table.nodes
        return table.memo(
            (NAME + "/count", namespace, selector_key(selector)),
            lambda rows: np.fromiter((one(nodes[r]) for r in rows.tolist()), dtype=np.int64, count=len(rows)),
            one,
        )

    @staticmethod
    def _affinity_column(table: NodeTable, pod: PodInfo) -> Int | None:
        """1 where the node satisfies the pod's nodeSelector and required node affinity; None when
        the pod has neither (every node does)."""
        spec = pod.pod.spec
        affinity = spec.affinity.nodeAffinity if spec.affinity is not None else None
        required = affinity.requiredDuringSchedulingIgnoredDuringExecution if affinity is not None else None
        if not spec.nodeSelector and required is None:
            return None
        matcher = pod.required_affinity

        def one(node: NodeInfo) -> int:
            n = node.node
            return int(n is not None and matcher.matches(n.metadata.name or "", n.metadata.labels))

        nodes = table.nodes
        key = msgspec.json.encode((sorted((spec.nodeSelector or {}).items()), required))
        return table.memo(
            (NAME + "/affinity", key),
            lambda rows: np.fromiter((one(nodes[r]) for r in rows.tolist()), dtype=np.int64, count=len(rows)),
            one,
        )

    @staticmethod
    def _taint_column(table: NodeTable, pod: PodInfo) -> Int | None:
        """1 where the node has a NoSchedule/NoExecute taint the pod does not tolerate; None when no
        node has such taints."""
        if not table.flag_counts["hard_taints"]:
            return None
        tolerations = pod.pod.spec.tolerations

        def one(node: NodeInfo) -> int:
            return int(node.node is not None and has_untolerated_hard_taint(node.node, tolerations))

        def every(rows: Int) -> Int:
            out = np.zeros(len(rows), dtype=np.int64)
            tainted = np.flatnonzero(table.hard_taints[rows])
            out[tainted] = [one(table.nodes[r]) for r in rows[tainted].tolist()]
            return out

        return table.memo((NAME + "/taints", msgspec.json.encode(tolerations or [])), every, one)

    def _included_column(self, table: NodeTable, pod: PodInfo, c: Constraint) -> Bool | None:
        """Where the node passes the constraint's inclusion policies (None: everywhere)."""
        included: Bool | None = None
        if c.node_affinity_policy == HONOR and (column := self._affinity_column(table, pod)) is not None:
            included = column != 0
        if c.node_taints_policy == HONOR and (column := self._taint_column(table, pod)) is not None:
            included = column == 0 if included is None else included & (column == 0)
        return included

    @staticmethod
    def _included(c: Constraint, pod: PodInfo, node: NodeInfo) -> bool:
        """Whether the node passes the constraint's inclusion policies for the pod."""
        n = node.node
        if n is None:
            return False
        if c.node_affinity_policy == HONOR and not pod.required_affinity.matches(n.metadata.name or "", _labels(n)):
            return False
        return not (c.node_taints_policy == HONOR and has_untolerated_hard_taint(n, pod.pod.spec.tolerations))


def _sums(domains: Int, eligible: Bool, counts: Int | None, rows: Int, size: int) -> Int:
    """Per domain id (`size` of them), the sum of `counts` at the eligible `rows` of each domain
    (`domains` and `eligible` are by position in `rows`)."""
    if counts is None:
        return np.zeros(size, dtype=np.int64)
    sums: Int = np.bincount(domains[eligible], weights=counts[rows][eligible], minlength=size).astype(np.int64)
    return sums
