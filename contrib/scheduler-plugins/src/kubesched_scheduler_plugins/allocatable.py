"""NodeResourcesAllocatable (scheduler-plugins `pkg/noderesources/allocatable.go`): a Score plugin
that prefers nodes by their allocatable resources — the smallest (`mode: Least`, the default) or the
largest (`Most`) — whatever is already running on them.

Score: each weighted resource contributes its allocatable amount (negated for Least) times its
weight; the sum is divided by the sum of the weights (integer division toward zero, as Go's).
Amounts are in the scheduler's units: milli-CPU, bytes; the default weights (cpu 1<<20, memory 1)
make one milli-CPU weigh as much as one MiB. NormalizeScore maps the lowest score to 0 and the
highest to 100 linearly (all 0 when every node scores the same).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import msgspec
import numpy as np

from kubesched.plugin import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    NodeInfo,
    PluginSpec,
    PodInfo,
    Status,
    StatusError,
    decode_args,
)
from kubesched.plugin.batch import NodeTable, NormalizeScoreBatch, Rows, ScoreBatchPlugin, Scores
from kubesched.plugin.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS

NAME = "NodeResourcesAllocatable"
LEAST = "Least"
MOST = "Most"
DEFAULT_RESOURCES = ((CPU, 1 << 20), (MEMORY, 1))
_EXACT = 1 << 62  # below this every weighted sum fits int64


class ResourceSpec(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    weight: int = 1


class NodeResourcesAllocatableArgs(msgspec.Struct, forbid_unknown_fields=True):
    """scheduler-plugins' NodeResourcesAllocatableArgs (kubescheduler.config.k8s.io/v1)."""

    mode: str = LEAST
    resources: list[ResourceSpec] = msgspec.field(
        default_factory=lambda: [ResourceSpec(name, weight) for name, weight in DEFAULT_RESOURCES]
    )
    kind: str = ""
    apiVersion: str = ""

    def validate(self, path: str = "") -> None:
        if self.mode not in ("", LEAST, MOST):
            raise ValueError(f"invalid mode, got {self.mode}")
        for r in self.resources:
            if r.weight <= 0:
                raise ValueError(f"resource Weight of {r.name} should be a positive value, got {r.weight}")


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero (Go's `/`)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _allocatable(node: NodeInfo, resource: str) -> int:
    # `pods` is neither a native nor a scalar resource to the port: it adds nothing, as upstream's.
    return 0 if resource == PODS else node.allocatable.get(resource)


class NodeResourcesAllocatable(ScoreBatchPlugin, NormalizeScoreBatch):
    name: ClassVar[str] = NAME

    def __init__(self, args: NodeResourcesAllocatableArgs) -> None:
        self.args = args
        self.sign = 1 if args.mode == MOST else -1
        self.weights = [(r.name, r.weight) for r in args.resources] or list(DEFAULT_RESOURCES)
        self.weight_sum = sum(w for _, w in self.weights)
        self._columns = all(name in (CPU, MEMORY, EPHEMERAL_STORAGE) for name, _ in self.weights)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        if node.node is None:
            raise StatusError(Status.error("node not found"))
        total = sum(self.sign * _allocatable(node, name) * weight for name, weight in self.weights)
        return _go_div(total, self.weight_sum)

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> Scores:
        columns = {CPU: table.alloc_cpu, MEMORY: table.alloc_mem, EPHEMERAL_STORAGE: table.alloc_eph}
        if not self._columns or not len(rows):
            return np.fromiter((self.score(state, pod, table.nodes[r]) for r in rows.tolist()), np.int64, len(rows))
        parts = [(columns[name][rows], weight) for name, weight in self.weights]
        bound = sum(int(np.abs(values).max(initial=0)) * weight for values, weight in parts)
        if bound >= _EXACT:  # too large for int64: the per-node path, in Python integers
            return np.fromiter((self.score(state, pod, table.nodes[r]) for r in rows.tolist()), np.int64, len(rows))
        total = sum(values * (self.sign * weight) for values, weight in parts)
        assert isinstance(total, np.ndarray)
        out: Scores = np.where(total >= 0, total // self.weight_sum, -(-total // self.weight_sum))
        return out

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        if not scores:
            return None
        lowest, highest = min(scores), max(scores)
        span = highest - lowest
        for i, s in enumerate(scores):
            scores[i] = MIN_NODE_SCORE if span == 0 else (s - lowest) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // span
        return None

    def normalize_score_batch(self, state: CycleState, pod: PodInfo, scores: Scores) -> Scores:
        if not len(scores):
            return scores
        lowest, highest = int(scores.min()), int(scores.max())
        span = highest - lowest
        if span == 0:
            return np.full(len(scores), MIN_NODE_SCORE, dtype=np.int64)
        values = [(s - lowest) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // span for s in scores.tolist()]
        return np.asarray(values, dtype=np.int64)  # Python integers: (s - lowest) * 100 may exceed int64


def new(args: object, handle: Handle) -> NodeResourcesAllocatable:
    decoded = decode_args(args, NodeResourcesAllocatableArgs)
    decoded.validate()
    return NodeResourcesAllocatable(decoded)


SPEC = PluginSpec(new, NodeResourcesAllocatableArgs, name=NAME)
__all__: Sequence[str] = ("NAME", "SPEC", "NodeResourcesAllocatable", "NodeResourcesAllocatableArgs")
