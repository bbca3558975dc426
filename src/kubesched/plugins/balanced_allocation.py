"""NodeResourcesBalancedAllocation: prefer nodes whose resource usage stays even across resources.

For each configured resource the node offers, the used fraction is `requested / allocatable`
(capped at 1), counting only actual requests (no 100m / 200Mi defaults). The balance of a set of
fractions is `int((1 - std) * 100)`; the score compares the node's balance with the pod on it and
without: `50 + (50 + with - without) / 2` (integer), so 75 means "no change", above 75 "the pod
evens the node out". Best-effort pods (no request for any configured resource) are not scored:
PreScore returns Skip, so they do not all pile onto the same node. There is no NormalizeScore.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import msgspec
import numpy as np
import numpy.typing as npt

from kubesched.api.errors import FieldError
from kubesched.plugin import SKIP, CycleState, Handle, NodeInfo, PodInfo, PreScorePlugin, Status
from kubesched.plugin.batch import Int, ScoreBatchPlugin, score_per_node, zeros
from kubesched.plugin.resources import CPU, MEMORY
from kubesched.plugins.resource_scoring import (
    MAX_NODE_SCORE,
    F,
    N,
    ResourceSpec,
    balance,
    balance_array,
    balance_of,
    child,
    defaulted_resources,
    go_div,
    go_div_array,
    node_amounts,
    offered,
    pod_request,
    raise_if_any,
    safe_amounts,
    std_of_two,
    table_amounts,
)

if TYPE_CHECKING:
    from kubesched.plugin.batch import NodeTable

FloatArray = npt.NDArray[np.float64]

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
MEMO_KEY = NAME + "/cpu-memory"  # NodeTable memo columns of scores by the pod's requests


class NodeResourcesBalancedAllocationArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """NodeResourcesBalancedAllocationArgs (kubescheduler.config.k8s.io/v1)."""

    resources: list[ResourceSpec] = msgspec.field(default_factory=list)
    kind: str = ""
    api_version: str = ""

    def defaulted(self) -> NodeResourcesBalancedAllocationArgs:
        """A copy with upstream's v1 defaults: cpu and memory when empty, weight 0 → 1."""
        return msgspec.structs.replace(self, resources=defaulted_resources(self.resources))

    def validate(self, path: str = "") -> None:
        """Raise `ArgsError` (a ValueError): names must be unique and every weight must be 1."""
        errors: list[FieldError] = []
        seen: set[str] = set()
        for i, r in enumerate(self.resources):
            field = f"{child(path, 'resources')}[{i}]"
            if r.name in seen:
                errors.append(FieldError(f"{field}.name", r.name, "", kind="Duplicate value"))
            seen.add(r.name)
            if r.weight != 1:
                errors.append(FieldError(f"{field}.weight", r.weight, "must be 1"))
        raise_if_any(errors)


@dataclass(frozen=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]  # in the order of the configured resources

    def clone(self) -> _PreScoreState:
        return self


Args = NodeResourcesBalancedAllocationArgs


def _fraction(used: F, allocatable: F) -> F:
    """The used share of a resource, capped at 1 (floats or float arrays)."""
    return np.minimum(1.0, used / allocatable) if isinstance(used, np.ndarray) else min(1.0, used / allocatable)


def _score(with_pod: N, without_pod: N, div: Callable[[N, int], N]) -> N:
    """75 for no change in balance, more when the pod evens the node out (ints or arrays)."""
    half = MAX_NODE_SCORE // 2
    return half + div(half + with_pod - without_pod, 2)


def _first_two(fractions: FloatArray, included: npt.NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
    """Per column of `fractions` (resources by rows), the first and second included values."""
    order = np.cumsum(included, axis=0)
    first = np.argmax(included & (order == 1), axis=0)[None]
    second = np.argmax(included & (order == 2), axis=0)[None]
    return np.take_along_axis(fractions, first, axis=0)[0], np.take_along_axis(fractions, second, axis=0)[0]


class NodeResourcesBalancedAllocation(PreScorePlugin, ScoreBatchPlugin):
    name: ClassVar[str] = NAME

    def __init__(self, args: NodeResourcesBalancedAllocationArgs, handle: Handle) -> None:
        self.handle = handle
        self.resources = [r.name for r in (args.resources or defaulted_resources([]))]

    def _pod_requests(self, pod: PodInfo) -> tuple[int, ...]:
        return tuple(pod_request(pod, name, non_zero=False) for name in self.resources)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self._pod_requests(pod)
        if not any(requests):
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        pre = state.get(PRE_SCORE_STATE_KEY)
        requests = pre.pod_requests if isinstance(pre, _PreScoreState) else self._pod_requests(pod)
        return self._node_score(requests, node)

    def _node_score(self, requests: tuple[int, ...], node: NodeInfo) -> int:
        if not any(requests):
            return 0
        with_pod: list[float] = []
        without_pod: list[float] = []
        for name, want in zip(self.resources, requests, strict=True):
            amounts = node_amounts(node, name, want, non_zero=False)
            if amounts is None:
                continue
            allocatable, used = amounts
            with_pod.append(_fraction(float(used + want), float(allocatable)))
            without_pod.append(_fraction(float(used), float(allocatable)))
        return int(_score(balance(with_pod), balance(without_pod), go_div))

    @staticmethod
    def _cpu_memory(table: NodeTable, rows: Int, requests: tuple[int, ...]) -> Int:
        """The default resources where every row offers both and amounts are exact: the general
        array form without its per-row bookkeeping, same float operations."""
        alloc_cpu, alloc_mem = table.alloc_cpu[rows], table.alloc_mem[rows]
        used_cpu, used_mem = table.req_cpu[rows], table.req_mem[rows]

        def balanced(cpu: Int, memory: Int) -> Int:
            # int64 / int64 divides as float64, like the per-node float(used) / float(allocatable).
            std = std_of_two(np.minimum(1.0, cpu / alloc_cpu), np.minimum(1.0, memory / alloc_mem))
            out: Int = balance_of(std).astype(np.int64)
            return out

        out: Int = _score(
            balanced(used_cpu + requests[0], used_mem + requests[1]), balanced(used_cpu, used_mem), go_div_array
        )
        return out

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        pre = state.get(PRE_SCORE_STATE_KEY)
        requests = pre.pod_requests if isinstance(pre, _PreScoreState) else self._pod_requests(pod)
        if not any(requests):
            return zeros(rows)
        if self.resources == [CPU, MEMORY] and not table.rows_without_cpu_memory and table.exact(*requests):
            # The node's score for these requests, kept across cycles in the table.
            column = table.memo(
                (MEMO_KEY, requests),
                lambda every: self._cpu_memory(table, every, requests),
                lambda node: self._node_score(requests, node),
            )
            return column[rows]
        with_pod: list[FloatArray] = []
        without_pod: list[FloatArray] = []
        included: list[npt.NDArray[np.bool_]] = []
        for name, want in zip(self.resources, requests, strict=True):
            amounts = table_amounts(table, rows, name, want, non_zero=False)
            if amounts is None:
                continue
            allocatable, used = amounts
            if not table.exact(want) and not safe_amounts(allocatable, used, want):
                return score_per_node(self.score, state, pod, table, rows)
            inc = offered(allocatable)
            divisor = np.where(inc, allocatable, 1).astype(np.float64)
            with_pod.append(_fraction((used + want).astype(np.float64), divisor))
            without_pod.append(_fraction(used.astype(np.float64), divisor))
            included.append(inc)
        if not included:
            return zeros(rows) + int(_score(balance([]), balance([]), go_div))
        count = np.sum(included, axis=0) if len(included) > 1 else included[0].astype(np.int64)
        balances = []
        for fractions in (with_pod, without_pod):
            if len(fractions) <= 2:  # a row counting two resources counts exactly these
                first, second = fractions[0], fractions[-1]
            else:  # each row's first and second counted resource
                first, second = _first_two(np.stack(fractions), np.stack(included))
            balances.append(balance_array(first, second, count))
        out: Int = _score(balances[0], balances[1], go_div_array)
        many = count > 2  # the standard deviation of three or more: node by node
        if many.any():
            out[many] = score_per_node(self.score, state, pod, table, rows[many])
        return out


def new(args: NodeResourcesBalancedAllocationArgs | None, handle: Handle) -> NodeResourcesBalancedAllocation:
    """Build the plugin from its (possibly absent) arguments, defaulted and validated."""
    full = (args or NodeResourcesBalancedAllocationArgs()).defaulted()
    full.validate()
    return NodeResourcesBalancedAllocation(full, handle)
