"""What NodeResourcesFit and NodeResourcesBalancedAllocation share: resource names, the per-node
amounts a score looks at, the scoring strategies, and the argument types and checks.

Scores follow upstream's integer arithmetic (Go division truncates toward zero); the fraction
based formulas use IEEE doubles as Go's float64 does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import msgspec

from kubesched.api.errors import FieldError
from kubesched.cache import NodeInfo, PodInfo
from kubesched.cache.resource import CPU, EPHEMERAL_STORAGE, MEMORY

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
    if request == 0 and is_scalar_resource_name(name):
        return None
    if name == CPU:
        amounts = (node.allocatable.cpu, node.non_zero_cpu if non_zero else node.requested.cpu)
    elif name == MEMORY:
        amounts = (node.allocatable.memory, node.non_zero_memory if non_zero else node.requested.memory)
    elif name == EPHEMERAL_STORAGE:
        amounts = (node.allocatable.ephemeral, node.requested.ephemeral)
    elif name in node.allocatable.scalar and is_scalar_resource_name(name):
        amounts = (node.allocatable.scalar[name], node.requested.scalar.get(name, 0))
    else:
        return None
    return amounts if amounts[0] != 0 else None


# -- integer helpers ----------------------------------------------------------------------------


def go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's `/` on integers."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_round(x: float) -> int:
    """Round half away from zero, as Go's `math.Round`."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


# -- scoring strategies ---------------------------------------------------------------------------

Scorer = Callable[[Sequence[int], Sequence[int], Sequence[int]], int]  # (requested, allocatable, weights)


def _weighted_average(scores: Sequence[int], weights: Sequence[int]) -> int:
    total = sum(weights)
    return sum(s * w for s, w in zip(scores, weights, strict=True)) // total if total else 0


def least_allocated(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
    """Weighted average of the free share of each resource, in [0, 100]; over-committed counts 0."""
    scores = [(a - r) * MAX_NODE_SCORE // a if r <= a else 0 for r, a in zip(requested, allocatable, strict=True)]
    return _weighted_average(scores, weights)


def most_allocated(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
    """Weighted average of the used share of each resource, in [0, 100]; capped at full."""
    scores = [min(r, a) * MAX_NODE_SCORE // a for r, a in zip(requested, allocatable, strict=True)]
    return _weighted_average(scores, weights)


def broken_linear(points: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The piecewise-linear function through (utilization, score) points, flat before the first
    and after the last point; interpolation uses Go's truncating integer division."""

    def f(p: int) -> int:
        for i, (x, y) in enumerate(points):
            if p <= x:
                if i == 0:
                    return y
                x0, y0 = points[i - 1]
                return y0 + go_div((y - y0) * (p - x0), x - x0)
        return points[-1][1]

    return f


def requested_to_capacity_ratio(shape: Sequence[UtilizationShapePoint]) -> Scorer:
    """The RequestedToCapacityRatio scorer for a shape (scores scaled from [0, 10] to [0, 100]).
    Only resources scoring above zero enter the weighted average, which is rounded."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    curve = broken_linear([(p.utilization, p.score * scale) for p in shape])

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return curve(MAX_UTILIZATION)
        return curve(requested * MAX_UTILIZATION // capacity)

    def scorer(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
        total = weight_sum = 0
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            s = resource_score(r, a)
            if s > 0:
                total += s * w
                weight_sum += w
        return go_round(total / weight_sum) if weight_sum else 0

    return scorer


def balance(fractions: Sequence[float]) -> int:
    """`int((1 - std) * 100)` of the fractions: half the difference for two, the population
    standard deviation for more, 0 for fewer."""
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


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
