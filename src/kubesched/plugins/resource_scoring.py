"""What NodeResourcesFit and NodeResourcesBalancedAllocation share: resource names, the per-node
amounts a score looks at, the scoring strategies, and the argument types and checks.

Scores follow upstream's integer arithmetic (Go division truncates toward zero); the fraction
based formulas use IEEE doubles as Go's float64 does.

Each strategy also has an array form over a `NodeTable`'s rows (for the plugins' `score_batch`),
built from the same per-resource formulas; it is only used while every amount lies in
[0, 2**56), where int64 arithmetic cannot overflow and so agrees with Python's integers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import msgspec
import numpy as np
import numpy.typing as npt

from kubesched.api.errors import FieldError
from kubesched.plugin import NodeInfo, PodInfo
from kubesched.plugin.batch import Bool, Int
from kubesched.plugin.resources import CPU, EPHEMERAL_STORAGE, MEMORY

if TYPE_CHECKING:
    from kubesched.plugin.batch import NodeTable

N = TypeVar("N", int, Int)  # an amount or score: one int, or one per row
F = TypeVar("F", float, npt.NDArray[np.float64])  # a fraction: one float, or one per row

MAX_NODE_SCORE = 100
MAX_CUSTOM_PRIORITY_SCORE = 10  # shape scores are given in [0, 10] and scaled to [0, 100]
MAX_UTILIZATION = 100

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)  # sorted, as listed in errors

HUGEPAGES_PREFIX = "hugepages-"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_REQUESTS_PREFIX = "requests."
_NATIVE_NAMESPACE = "kubernetes.io/"


# -- resource names ---------------------------------------------------------------------------


def is_extended_resource_name(name: str) -> bool:
    """A resource outside the `kubernetes.io` namespace with a domain prefix (`example.com/gpu`)."""
    if "/" not in name or _NATIVE_NAMESPACE in name or name.startswith(_REQUESTS_PREFIX):
        return False
    return not qualified_name_problems(_REQUESTS_PREFIX + name)


def is_scalar_resource_name(name: str) -> bool:
    """Whether the scheduler tracks `name` as a scalar: extended resources, hugepages, prefixed
    native resources (`*kubernetes.io/*`) and attachable volumes."""
    return (
        is_extended_resource_name(name)
        or name.startswith(HUGEPAGES_PREFIX)
        or _NATIVE_NAMESPACE in name
        or name.startswith(ATTACHABLE_VOLUMES_PREFIX)
    )


# -- what one resource looks like on one node -------------------------------------------------


def pod_request(pod: PodInfo, name: str, *, non_zero: bool) -> int:
    """The pod's request for one resource; with `non_zero`, cpu and memory count a container
    without a request as 100m / 200Mi (what NodeResourcesFit scores with)."""
    if non_zero and name == CPU:
        return pod.non_zero_cpu
    if non_zero and name == MEMORY:
        return pod.non_zero_memory
    return pod.requests.get(name)


def node_amounts(node: NodeInfo, name: str, request: int, *, non_zero: bool) -> tuple[int, int] | None:
    """(allocatable, already requested) of one resource on `node`, or None when the resource does
    not take part in scoring: a scalar the pod does not request, a resource the node does not
    offer (allocatable 0 or absent), or a name the scheduler does not track. With `non_zero`,
    the node side of cpu and memory is the non-zero sum of its pods."""
    if name == CPU:
        amounts = (node.allocatable.cpu, node.non_zero_cpu if non_zero else node.requested.cpu)
    elif name == MEMORY:
        amounts = (node.allocatable.memory, node.non_zero_memory if non_zero else node.requested.memory)
    elif name == EPHEMERAL_STORAGE:
        amounts = (node.allocatable.ephemeral, node.requested.ephemeral)
    elif scored_scalar(name, request) and name in node.allocatable.scalar:
        amounts = (node.allocatable.scalar[name], node.requested.scalar.get(name, 0))
    else:
        return None
    return amounts if amounts[0] != 0 else None


def scored_scalar(name: str, request: int) -> bool:
    """Whether a resource other than cpu, memory and ephemeral storage can take part in scoring:
    a scalar resource the pod requests."""
    return request != 0 and is_scalar_resource_name(name)


def table_amounts(table: NodeTable, rows: Int, name: str, request: int, *, non_zero: bool) -> tuple[Int, Int] | None:
    """`node_amounts` over a table's rows: the (allocatable, requested) columns, None when no row
    takes the resource into account. Rows whose allocatable is 0 do not take part either (see
    `offered`); a scalar column holds 0 where the node does not list the resource."""
    if name == CPU:
        return table.alloc_cpu[rows], (table.nz_cpu if non_zero else table.req_cpu)[rows]
    if name == MEMORY:
        return table.alloc_mem[rows], (table.nz_mem if non_zero else table.req_mem)[rows]
    if name == EPHEMERAL_STORAGE:
        return table.alloc_eph[rows], table.req_eph[rows]
    if scored_scalar(name, request) and name in table.scalar_alloc:
        return table.scalar_alloc[name][rows], table.scalar_req[name][rows]
    return None


def offered(allocatable: Int) -> Bool:
    """The rows where a resource takes part in scoring (`node_amounts`: allocatable not 0)."""
    mask: Bool = allocatable != 0
    return mask


SAFE_AMOUNT = 1 << 56


def safe_amounts(*values: Int | int) -> bool:
    """Whether every amount lies in [0, 2**56): the array formulas cannot overflow int64 then
    (products with 100 and the scores' weights stay below 2**63)."""
    # The bitwise or of values in that range stays in it; a negative value sets the sign bit.
    combined = 0
    for v in values:
        combined |= v if isinstance(v, int) else int(np.bitwise_or.reduce(v))
    return 0 <= combined < SAFE_AMOUNT


# -- integer helpers ----------------------------------------------------------------------------


def go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's `/` on integers."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_round(x: float) -> int:
    """Round half away from zero, as Go's `math.Round`."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def go_div_array(a: Int, b: int) -> Int:
    """`go_div` of each element of `a` by `b`."""
    q = np.abs(a) // abs(b)
    return np.where((a >= 0) == (b > 0), q, -q)


def go_round_array(x: npt.NDArray[np.float64]) -> Int:
    """`go_round` of each element."""
    return np.copysign(np.floor(np.abs(x) + 0.5), x).astype(np.int64)


# -- scoring strategies ---------------------------------------------------------------------------

Scorer = Callable[[Sequence[int], Sequence[int], Sequence[int]], int]  # (requested, allocatable, weights)
# The array form: (requested, allocatable, included, weights), one array per resource over the
# rows; a resource counts on a row only where `included` (allocatable elsewhere may be 0).
ArrayScorer = Callable[[Sequence[Int], Sequence[Int], Sequence[Bool], Sequence[int]], Int]


def _free_share(requested: N, allocatable: N) -> N:
    """The free share of a resource in [0, 100] (ints or arrays, allocatable above requested)."""
    return (allocatable - requested) * MAX_NODE_SCORE // allocatable


def _used_share(requested: N, allocatable: N) -> N:
    """The used share of a resource in [0, 100] (ints or arrays, requested capped at allocatable)."""
    return requested * MAX_NODE_SCORE // allocatable


def _divisor(allocatable: Int, included: Bool) -> Int:
    """Allocatable where the resource counts, 1 elsewhere (so no row divides by 0)."""
    return np.where(included, allocatable, 1)


def _weighted_average(scores: Sequence[int], weights: Sequence[int]) -> int:
    total = sum(weights)
    return sum(s * w for s, w in zip(scores, weights, strict=True)) // total if total else 0


def _weighted_average_array(scores: Sequence[Int], included: Sequence[Bool], weights: Sequence[int]) -> Int:
    total = sum(np.where(inc, w, 0) for inc, w in zip(included, weights, strict=True))
    weighted = sum(np.where(inc, s * w, 0) for s, inc, w in zip(scores, included, weights, strict=True))
    return np.where(total != 0, weighted // np.where(total != 0, total, 1), 0)


def least_allocated(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
    """Weighted average of the free share of each resource, in [0, 100]; over-committed counts 0."""
    scores = [_free_share(r, a) if r <= a else 0 for r, a in zip(requested, allocatable, strict=True)]
    return _weighted_average(scores, weights)


def least_allocated_array(
    requested: Sequence[Int], allocatable: Sequence[Int], included: Sequence[Bool], weights: Sequence[int]
) -> Int:
    scores = [
        np.where(r <= a, _free_share(r, _divisor(a, inc)), 0)
        for r, a, inc in zip(requested, allocatable, included, strict=True)
    ]
    return _weighted_average_array(scores, included, weights)


def most_allocated(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
    """Weighted average of the used share of each resource, in [0, 100]; capped at full."""
    scores = [_used_share(min(r, a), a) for r, a in zip(requested, allocatable, strict=True)]
    return _weighted_average(scores, weights)


def most_allocated_array(
    requested: Sequence[Int], allocatable: Sequence[Int], included: Sequence[Bool], weights: Sequence[int]
) -> Int:
    scores = [
        _used_share(np.minimum(r, a), _divisor(a, inc))
        for r, a, inc in zip(requested, allocatable, included, strict=True)
    ]
    return _weighted_average_array(scores, included, weights)


def _interpolate(p: N, x0: int, y0: int, x: int, y: int, div: Callable[[N, int], N]) -> N:
    """The score at utilization `p` on the segment (x0, y0)-(x, y), with truncating division."""
    return y0 + div((y - y0) * (p - x0), x - x0)


def broken_linear(points: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The piecewise-linear function through (utilization, score) points, flat before the first
    and after the last point; interpolation uses Go's truncating integer division."""

    def f(p: int) -> int:
        for i, (x, y) in enumerate(points):
            if p <= x:
                if i == 0:
                    return y
                x0, y0 = points[i - 1]
                return int(_interpolate(p, x0, y0, x, y, go_div))
        return points[-1][1]

    return f


def broken_linear_array(points: Sequence[tuple[int, int]]) -> Callable[[Int], Int]:
    """`broken_linear` applied to each element."""

    def f(p: Int) -> Int:
        out = np.full(len(p), points[-1][1], dtype=np.int64)
        for i in reversed(range(len(points))):  # the first point at or above p wins
            x, y = points[i]
            value = y if i == 0 else _interpolate(p, *points[i - 1], x, y, go_div_array)
            out = np.where(p <= x, value, out)
        return out

    return f


def _shape_points(shape: Sequence[UtilizationShapePoint]) -> list[tuple[int, int]]:
    """The shape's points with scores scaled from [0, 10] to [0, 100]."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return [(p.utilization, p.score * scale) for p in shape]


def _utilization(requested: N, capacity: N) -> N:
    return requested * MAX_UTILIZATION // capacity


def requested_to_capacity_ratio(shape: Sequence[UtilizationShapePoint]) -> Scorer:
    """The RequestedToCapacityRatio scorer for a shape (scores scaled from [0, 10] to [0, 100]).
    Only resources scoring above zero enter the weighted average, which is rounded."""
    curve = broken_linear(_shape_points(shape))

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return curve(MAX_UTILIZATION)
        return curve(_utilization(requested, capacity))

    def scorer(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
        total = weight_sum = 0
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            s = resource_score(r, a)
            if s > 0:
                total += s * w
                weight_sum += w
        return go_round(total / weight_sum) if weight_sum else 0

    return scorer


def requested_to_capacity_ratio_array(shape: Sequence[UtilizationShapePoint]) -> ArrayScorer:
    """The array form of `requested_to_capacity_ratio`."""
    curve = broken_linear_array(_shape_points(shape))

    def scorer(
        requested: Sequence[Int], allocatable: Sequence[Int], included: Sequence[Bool], weights: Sequence[int]
    ) -> Int:
        total = weight_sum = np.zeros(len(requested[0]), dtype=np.int64)
        for r, a, inc, w in zip(requested, allocatable, included, weights, strict=True):
            s = curve(np.where(r > a, MAX_UTILIZATION, _utilization(r, _divisor(a, inc))))
            counts = inc & (s > 0)
            total = total + np.where(counts, s * w, 0)
            weight_sum = weight_sum + np.where(counts, w, 0)
        ratio = total.astype(np.float64) / np.where(weight_sum != 0, weight_sum, 1).astype(np.float64)
        return np.where(weight_sum != 0, go_round_array(ratio), 0)

    return scorer


def std_of_two(a: F, b: F) -> F:
    return abs((a - b) / 2)


def balance_of(std: F) -> F:
    """`(1 - std) * 100`, before truncation (floats or arrays)."""
    return (1 - std) * MAX_NODE_SCORE


def balance(fractions: Sequence[float]) -> int:
    """`int((1 - std) * 100)` of the fractions: half the difference for two, the population
    standard deviation for more, 0 for fewer."""
    std = 0.0
    if len(fractions) == 2:
        std = std_of_two(fractions[0], fractions[1])
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int(balance_of(std))


def balance_array(first: npt.NDArray[np.float64], second: npt.NDArray[np.float64], count: Int) -> Int:
    """`balance` of each row's fractions, given its first two and how many it has; only for
    rows with at most two (the others' results are meaningless)."""
    std = np.where(count == 2, std_of_two(first, second), 0.0)
    out: Int = balance_of(std).astype(np.int64)  # truncates toward zero, as int()
    return out


# -- arguments ------------------------------------------------------------------------------------


class ResourceSpec(msgspec.Struct, forbid_unknown_fields=True):
    """A resource a score looks at, and its weight (0 means "default", i.e. 1)."""

    name: str
    weight: int = 0


class UtilizationShapePoint(msgspec.Struct, forbid_unknown_fields=True):
    utilization: int
    score: int


def default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1)]


def defaulted_resources(resources: Sequence[ResourceSpec]) -> list[ResourceSpec]:
    """Upstream's defaulting: no resources → cpu and memory with weight 1; weight 0 → 1."""
    if not resources:
        return default_resources()
    return [ResourceSpec(r.name, r.weight or 1) for r in resources]


class ArgsError(ValueError):
    """Invalid plugin arguments: one or more field errors, rendered as upstream aggregates them."""

    def __init__(self, errors: Sequence[FieldError]) -> None:
        self.errors = list(errors)
        super().__init__(aggregate_message(self.errors))

    def __str__(self) -> str:
        return aggregate_message(self.errors)


def aggregate_message(errors: Sequence[Exception]) -> str:
    """Messages joined with ", " (duplicates dropped), bracketed when there is more than one."""
    seen: list[str] = []
    for e in errors:
        if (msg := str(e)) not in seen:
            seen.append(msg)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


def raise_if_any(errors: Sequence[FieldError]) -> None:
    if errors:
        raise ArgsError(errors)


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def resource_weight_errors(resources: Sequence[ResourceSpec], path: str) -> list[FieldError]:
    """Weights must be in (0, 100]."""
    return [
        FieldError(f"{path}[{i}].weight", r.weight, f"resource weight of {r.name} not in valid range (0, 100]")
        for i, r in enumerate(resources)
        if r.weight <= 0 or r.weight > 100
    ]


def shape_errors(shape: Sequence[UtilizationShapePoint], path: str) -> list[FieldError]:
    """At least one point, utilizations strictly increasing within [0, 100], scores in [0, 10]."""
    if not shape:
        return [FieldError(path, None, "at least one point must be specified", kind="Required value")]
    errors: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errors.append(
                FieldError(
                    f"{path}[{i}].utilization", shape[i].utilization, "values must be sorted in increasing order"
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= MAX_UTILIZATION:
            errors.append(
                FieldError(f"{path}[{i}].utilization", point.utilization, f"not in valid range [0, {MAX_UTILIZATION}]")
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errors.append(
                FieldError(f"{path}[{i}].score", point.score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")
            )
    return errors


_QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME)
_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN)
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    f"character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{_QUALIFIED_NAME}')"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    f"start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '{_SUBDOMAIN}')"
)


def qualified_name_problems(value: str) -> list[str]:
    """Why `value` is not a qualified name (`[prefix/]name`, as label keys are), or nothing."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            f"a qualified name {_QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    problems: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        elif len(prefix) > 253:
            problems.append("prefix part must be no more than 253 characters")
        elif not _SUBDOMAIN_RE.fullmatch(prefix):
            problems.append(f"prefix part {_SUBDOMAIN_MSG}")
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > 63:
        problems.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        problems.append(f"name part {_QUALIFIED_NAME_MSG}")
    return problems


def label_name_errors(value: str, path: str) -> list[FieldError]:
    return [FieldError(path, value, problem) for problem in qualified_name_problems(value)]
