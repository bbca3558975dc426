"""NodeResourcesFit: does the node have room for the pod's requests, and how full would it be.

Filter compares the pod's requests with what the node has left (allocatable minus the requests
of the pods already on it) for the pod count, cpu, memory, ephemeral storage and every scalar
resource the pod asks for. A node where some request exceeds even the node's total allocatable
is UnschedulableAndUnresolvable: evicting pods cannot help there.

Score rates the node with one strategy (LeastAllocated by default, MostAllocated, or
RequestedToCapacityRatio) over the configured resources, counting containers without cpu or
memory requests as 100m / 200Mi on both the pod and the node side. There is no NormalizeScore.

Deviations: extended resources backed by a DRA DeviceClass (DRAExtendedResource) are not
modelled, so such a resource counts as missing on nodes that do not list it; scalar resources
are checked in name order (upstream walks a Go map, whose order is random).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import msgspec

from kubesched.api.errors import FieldError
from kubesched.cache import NodeInfo, PodInfo
from kubesched.cache.resource import Resource
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.status import Code, Status
from kubesched.plugins.resource_scoring import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SCORING_STRATEGY_TYPES,
    ResourceSpec,
    Scorer,
    UtilizationShapePoint,
    child,
    default_resources,
    defaulted_resources,
    is_extended_resource_name,
    is_scalar_resource_name,
    label_name_errors,
    least_allocated,
    most_allocated,
    node_amounts,
    pod_request,
    raise_if_any,
    requested_to_capacity_ratio,
    resource_weight_errors,
    shape_errors,
)

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
DEVICE_CLASS = "resource.k8s.io/DeviceClass"


# -- arguments ------------------------------------------------------------------------------------


class RequestedToCapacityRatioParam(msgspec.Struct, forbid_unknown_fields=True):
    shape: list[UtilizationShapePoint] = msgspec.field(default_factory=list)


class ScoringStrategy(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    type: str = ""
    resources: list[ResourceSpec] = msgspec.field(default_factory=list)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


class Args(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """NodeResourcesFitArgs (kubescheduler.config.k8s.io/v1)."""

    ignored_resources: list[str] = msgspec.field(default_factory=list)
    ignored_resource_groups: list[str] = msgspec.field(default_factory=list)
    scoring_strategy: ScoringStrategy | None = None
    kind: str = ""
    api_version: str = ""

    def defaulted(self) -> Args:
        """A copy with upstream's v1 defaults: LeastAllocated over cpu and memory when no strategy
        is given, cpu and memory when the strategy lists no resources, weight 0 → 1."""
        strategy = self.scoring_strategy
        if strategy is None:
            strategy = ScoringStrategy(type=LEAST_ALLOCATED, resources=default_resources())
        else:
            strategy = msgspec.structs.replace(strategy, resources=defaulted_resources(strategy.resources))
        return msgspec.structs.replace(self, scoring_strategy=strategy)

    def validate(self, path: str = "") -> None:
        """Raise `ArgsError` (a ValueError) listing every invalid field, as upstream words them."""
        errors: list[FieldError] = []
        for i, name in enumerate(self.ignored_resources):
            errors += label_name_errors(name, f"{child(path, 'ignoredResources')}[{i}]")
        for i, group in enumerate(self.ignored_resource_groups):
            field = f"{child(path, 'ignoredResourceGroups')}[{i}]"
            if "/" in group:
                errors.append(FieldError(field, group, "resource group name can't contain '/'"))
            errors += label_name_errors(group, field)
        strategy = self.scoring_strategy
        if strategy is not None:
            strategy_path = child(path, "scoringStrategy")
            if strategy.type not in SCORING_STRATEGY_TYPES:
                errors.append(
                    FieldError.not_supported(child(strategy_path, "type"), strategy.type, SCORING_STRATEGY_TYPES)
                )
            errors += resource_weight_errors(strategy.resources, child(strategy_path, "resources"))
            if strategy.requested_to_capacity_ratio is not None:
                errors += shape_errors(strategy.requested_to_capacity_ratio.shape, child(strategy_path, "shape"))
            elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
                # Upstream dereferences the missing parameters (a panic); report them as required instead.
                errors += shape_errors([], child(strategy_path, "shape"))
        raise_if_any(errors)


# -- filtering --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InsufficientResource:
    """One resource the node lacks for the pod. `unresolvable`: the request exceeds the node's
    total allocatable, so no eviction can make room."""

    resource: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def fits_request(
    requests: Resource,
    node: NodeInfo,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """Every resource `node` lacks for a pod with these requests, in upstream's order: pod count,
    cpu, memory, ephemeral-storage, then scalar resources (by name)."""
    out: list[InsufficientResource] = []
    allowed_pods = node.allocatable.pods
    if len(node.pods) + 1 > allowed_pods:
        out.append(InsufficientResource("pods", "Too many pods", 1, len(node.pods), allowed_pods))
    scalars = {n: v for n, v in requests.scalar.items() if is_scalar_resource_name(n)}
    if requests.cpu == 0 and requests.memory == 0 and requests.ephemeral == 0 and not scalars:
        return out
    alloc, used = node.allocatable, node.requested
    for name, want, have, taken in (
        ("cpu", requests.cpu, alloc.cpu, used.cpu),
        ("memory", requests.memory, alloc.memory, used.memory),
        ("ephemeral-storage", requests.ephemeral, alloc.ephemeral, used.ephemeral),
    ):
        if want > 0 and want > have - taken:
            out.append(InsufficientResource(name, f"Insufficient {name}", want, taken, have, want > have))
    for name in sorted(scalars):
        want = scalars[name]
        if want == 0:
            continue
        if is_extended_resource_name(name) and (
            name in ignored_resources or (ignored_groups and name.split("/", 1)[0] in ignored_groups)
        ):
            continue
        have, taken = alloc.scalar.get(name, 0), used.scalar.get(name, 0)
        if want > have - taken:
            out.append(InsufficientResource(name, f"Insufficient {name}", want, taken, have, want > have))
    return out


@dataclass(frozen=True)
class _PreFilterState:
    requests: Resource

    def clone(self) -> _PreFilterState:
        return self  # never modified after PreFilter


@dataclass(frozen=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]  # in the order of the strategy's resources

    def clone(self) -> _PreScoreState:
        return self


# -- the plugin -------------------------------------------------------------------------------------


class NodeResourcesFit:
    name: ClassVar[str] = NAME

    def __init__(self, args: Args, handle: Any) -> None:
        self.handle = handle
        self.ignored_resources = frozenset(args.ignored_resources)
        self.ignored_groups = frozenset(args.ignored_resource_groups)
        strategy = args.scoring_strategy or ScoringStrategy(type=LEAST_ALLOCATED, resources=default_resources())
        self.strategy = strategy.type
        self.resources = [r.name for r in strategy.resources]
        self.weights = [r.weight for r in strategy.resources]
        self.scorer: Scorer
        if strategy.type == MOST_ALLOCATED:
            self.scorer = most_allocated
        elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            shape = strategy.requested_to_capacity_ratio.shape if strategy.requested_to_capacity_ratio else []
            self.scorer = requested_to_capacity_ratio(shape)
        else:
            self.scorer = least_allocated

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A deleted or scaled-down pod may free room; a new node or more allocatable may offer it;
        a DeviceClass may start backing an extended resource (DRAExtendedResource, beta, on)."""
        return [
            ClusterEventWithHint(ClusterEvent(POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN)),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
        ]

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pod.requests))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        missing = fits_request(pre.requests, node, self.ignored_resources, self.ignored_groups)
        if not missing:
            return None
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if any(r.unresolvable for r in missing) else Code.UNSCHEDULABLE
        return Status(code, *(r.reason for r in missing))

    def _pod_requests(self, pod: PodInfo) -> tuple[int, ...]:
        return tuple(pod_request(pod, name, non_zero=True) for name in self.resources)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(self._pod_requests(pod)))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        pre = state.get(PRE_SCORE_STATE_KEY)
        requests = pre.pod_requests if isinstance(pre, _PreScoreState) else self._pod_requests(pod)
        requested: list[int] = []
        allocatable: list[int] = []
        weights: list[int] = []
        for name, want, weight in zip(self.resources, requests, self.weights, strict=True):
            amounts = node_amounts(node, name, want, non_zero=True)
            if amounts is None:
                continue
            allocatable.append(amounts[0])
            requested.append(amounts[1] + want)
            weights.append(weight)
        return self.scorer(requested, allocatable, weights)


def new(args: Args | None, handle: Any) -> NodeResourcesFit:
    """Build the plugin from its (possibly absent) arguments, defaulted and validated."""
    full = (args or Args()).defaulted()
    full.validate()
    return NodeResourcesFit(full, handle)
