"""Why a pod fits nowhere: the per-node diagnosis and upstream's aggregate FailedScheduling text."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.framework.interface import NodeToStatus, PostFilterResult
from kubesched.framework.status import Code, Status

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass
class Diagnosis:
    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    post_filter_result: PostFilterResult | None = None  # what PostFilter achieved (a nomination)
    # How many recorded nodes have each (often shared) status object: id -> [status, count]; nodes
    # get their statuses through `record` and `record_many`, which keep it.
    # Any: a pair counted in place, per node (a list is the cheapest mutable pair)
    tally: dict[int, list[Any]] = field(default_factory=dict)

    def _count(self, status: Status, times: int) -> None:
        entry = self.tally.setdefault(id(status), [status, 0])
        entry[1] += times

    def record(self, node: str, status: Status) -> None:
        old = self.node_to_status.statuses.get(node)
        if old is not None:
            self._count(old, -1)
        self.node_to_status.set(node, status)
        self._count(status, 1)
        self.add_plugin(status)

    def record_many(self, nodes: Sequence[str], distinct: Sequence[Status], which: npt.NDArray[np.int64]) -> None:
        """`record` of `distinct[which[i]]` for each `nodes[i]`."""
        statuses = self.node_to_status.statuses
        if statuses:
            for node in nodes:
                if (old := statuses.get(node)) is not None:
                    self._count(old, -1)
        if len(distinct) == 1:
            statuses.update(zip(nodes, itertools.repeat(distinct[0])))
        else:
            statuses.update(zip(nodes, [distinct[i] for i in which.tolist()], strict=True))
        for status, times in zip(distinct, np.bincount(which, minlength=len(distinct)).tolist(), strict=True):
            self._count(status, times)
            self.add_plugin(status)

    def add_plugin(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)
        else:
            self.unschedulable_plugins.add(status.plugin)


class FitError(Exception):
    """No node fits the pod. `num_all_nodes` is the number of nodes considered (1 when the chosen
    node was rejected at Reserve or Permit)."""

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__(self.message())

    def message(self) -> str:
        d = self.diagnosis
        text = f"0/{self.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            text += f" {d.pre_filter_msg}."
        else:
            histogram: Counter[str] = Counter()
            statuses = d.node_to_status
            for status, times in d.tally.values():
                for reason in status.reasons:
                    histogram[reason] += times
            absent = self.num_all_nodes - len(statuses)
            if absent > 0:
                for reason in statuses.absent.reasons:
                    histogram[reason] += absent
            parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
            if parts:
                text += f" {', '.join(parts)}."
        if d.post_filter_msg:
            text += f" {d.post_filter_msg}"
        return text


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes Filter looks for before it stops (adaptive when percentage is 0)."""
    if num_all_nodes < 100:
        return num_all_nodes
    if percentage == 0:
        percentage = max(5, 50 - num_all_nodes // 125)
    return max(100, num_all_nodes * percentage // 100)
