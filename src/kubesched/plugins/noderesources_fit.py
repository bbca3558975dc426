"""NodeResourcesFit: does the node have room for the pod's requests, and how full would it be.

Filter compares the pod's requests with what the node has left (allocatable minus the requests
of the pods already on it) for the pod count, cpu, memory, ephemeral storage and every scalar
resource the pod asks for. A node where some request exceeds even the node's total allocatable
is UnschedulableAndUnresolvable: evicting pods cannot help there.

Score rates the node with one strategy (LeastAllocated by default, MostAllocated, or
RequestedToCapacityRatio) over the configured resources, counting containers without cpu or
memory requests as 100m / 200Mi on both the pod and the node side. There is no NormalizeScore.

QueueingHints: a deleted bound (or nominated) pod, a scale-down of the pod itself or of a bound pod
in a resource the pod requests, a node that fits the pod and is new or grew in what the pod asks
for, and a DeviceClass that starts backing a requested extended resource.

Deviations: extended resources backed by a DRA DeviceClass (DRAExtendedResource) are not
modelled, so such a resource counts as missing on nodes that do not list it; scalar resources
are checked in name order (upstream walks a Go map, whose order is random); the scale-down hint
compares spec requests (status-reported resize resources are not modelled).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
import numpy as np
from lightkube.models import core_v1 as m
from lightkube.models import resource_v1

from kubesched.api.errors import FieldError
from kubesched.api.resources import pod_requests
from kubesched.plugin import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PodInfo,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    Status,
)
from kubesched.plugin.batch import (
    Bool,
    FailureSignatures,
    HintKeys,
    Int,
    ScoreBatchPlugin,
    filter_per_node,
    score_per_node,
    zeros,
)
from kubesched.plugin.resources import CPU, EPHEMERAL_STORAGE, MEMORY, Resource
from kubesched.plugins.resource_scoring import (
    LEAST_ALLOCATED,
    MAX_NODE_SCORE,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SCORING_STRATEGY_TYPES,
    ArrayScorer,
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
    least_allocated_array,
    most_allocated,
    most_allocated_array,
    node_amounts,
    offered,
    pod_request,
    raise_if_any,
    requested_to_capacity_ratio,
    requested_to_capacity_ratio_array,
    resource_weight_errors,
    safe_amounts,
    shape_errors,
    table_amounts,
)

if TYPE_CHECKING:
    from kubesched.plugin.batch import NodeTable

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
# NodeTable memo columns, by the pod's requests: whether a node lacks room; LeastAllocated scores.
LACKS_MEMO_KEY = NAME + "/lacks"
SCORE_MEMO_KEY = NAME + "/least-allocated"
HINT_CACHE_PODS = 100_000  # queued pods whose parsed requests the hints keep
PRE_SCORE_STATE_KEY = "PreScore" + NAME
DEVICE_CLASS = "resource.k8s.io/DeviceClass"
DEVICE_CLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"  # implicit extended resource of a class


# -- arguments ------------------------------------------------------------------------------------


class RequestedToCapacityRatioParam(msgspec.Struct, forbid_unknown_fields=True):
    shape: list[UtilizationShapePoint] = msgspec.field(default_factory=list)


class ScoringStrategy(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    type: str = ""
    resources: list[ResourceSpec] = msgspec.field(default_factory=list)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


class NodeResourcesFitArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """NodeResourcesFitArgs (kubescheduler.config.k8s.io/v1)."""

    ignored_resources: list[str] = msgspec.field(default_factory=list)
    ignored_resource_groups: list[str] = msgspec.field(default_factory=list)
    scoring_strategy: ScoringStrategy | None = None
    kind: str = ""
    api_version: str = ""

    def defaulted(self) -> NodeResourcesFitArgs:
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


Args = NodeResourcesFitArgs


def checked_scalars(
    requests: Resource, ignored_resources: frozenset[str] = frozenset(), ignored_groups: frozenset[str] = frozenset()
) -> tuple[tuple[str, int], ...]:
    """The scalar requests Filter compares with the node, by name: requested (not 0), tracked as
    scalar resources, and not ignored (ignoring applies to extended resources only)."""
    out: list[tuple[str, int]] = []
    for name in sorted(requests.scalar):
        want = requests.scalar[name]
        if want == 0 or not is_scalar_resource_name(name):
            continue
        if is_extended_resource_name(name) and (
            name in ignored_resources or (ignored_groups and name.split("/", 1)[0] in ignored_groups)
        ):
            continue
        out.append((name, want))
    return tuple(out)


def fits_request(
    requests: Resource,
    node: NodeInfo,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
    scalars: Sequence[tuple[str, int]] | None = None,
) -> list[InsufficientResource]:
    """Every resource `node` lacks for a pod with these requests, in upstream's order: pod count,
    cpu, memory, ephemeral-storage, then scalar resources (by name). `scalars`: the requests'
    `checked_scalars`, when already known."""
    out: list[InsufficientResource] = []
    allowed_pods = node.allocatable.pods
    if len(node.pods) + 1 > allowed_pods:
        out.append(InsufficientResource("pods", "Too many pods", 1, len(node.pods), allowed_pods))
    if scalars is None:
        scalars = checked_scalars(requests, ignored_resources, ignored_groups)
    alloc, used = node.allocatable, node.requested
    for name, want, have, taken in (
        ("cpu", requests.cpu, alloc.cpu, used.cpu),
        ("memory", requests.memory, alloc.memory, used.memory),
        ("ephemeral-storage", requests.ephemeral, alloc.ephemeral, used.ephemeral),
    ):
        if want > 0 and want > have - taken:
            out.append(InsufficientResource(name, f"Insufficient {name}", want, taken, have, want > have))
    for name, want in scalars:
        have, taken = alloc.scalar.get(name, 0), used.scalar.get(name, 0)
        if want > have - taken:
            out.append(InsufficientResource(name, f"Insufficient {name}", want, taken, have, want > have))
    return out


def lacks_request(requests: Resource, scalars: Sequence[tuple[str, int]], table: NodeTable, rows: Int) -> Bool | None:
    """For each row, whether `fits_request` finds the node short of something; None when the
    amounts are out of the range where int64 arithmetic is exact (see `safe_amounts`)."""
    exact = table.exact(requests.cpu, requests.memory, requests.ephemeral)
    if exact:
        return lacks_request_exact(requests, scalars, table, rows)
    lacks = table.pod_count[rows] + 1 > table.alloc_pods[rows]
    for want, have, taken in (
        (requests.cpu, table.alloc_cpu, table.req_cpu),
        (requests.memory, table.alloc_mem, table.req_mem),
        (requests.ephemeral, table.alloc_eph, table.req_eph),
    ):
        if want > 0:
            if not safe_amounts(have[rows], taken[rows]):
                return None
            lacks |= want > have[rows] - taken[rows]
    if not _lacks_scalars(lacks, scalars, table, rows, exact=False):
        return None
    return lacks


def lacks_request_exact(requests: Resource, scalars: Sequence[tuple[str, int]], table: NodeTable, rows: Int) -> Bool:
    """`lacks_request` when `table.exact` holds for the table and the pod's cpu, memory and
    ephemeral-storage: comparisons with the table's free amounts."""
    lacks = table.free_pods[rows] < 1
    for want, free in (
        (requests.cpu, table.free_cpu),
        (requests.memory, table.free_mem),
        (requests.ephemeral, table.free_eph),
    ):
        if want > 0:
            lacks |= free[rows] < want
    _lacks_scalars(lacks, scalars, table, rows, exact=True)
    return lacks


def _lacks_scalars(
    lacks: Bool, scalars: Sequence[tuple[str, int]], table: NodeTable, rows: Int, *, exact: bool
) -> bool:
    """Mark in `lacks` the rows short of a scalar resource; False when amounts are not exact."""
    for name, want in scalars:
        if name in table.scalar_alloc:
            have, taken = table.scalar_alloc[name][rows], table.scalar_req[name][rows]
            if not exact and not safe_amounts(have, taken):
                return False
            lacks |= want > have - taken
        elif want > 0:  # no node lists the resource: none has any of it
            lacks[:] = True
    return True


# Any: pods as served (metadata and spec set), read without checks in the hint
def _scale_down_may_help(target: Any, old: m.Pod, new: Any) -> bool:
    """Whether a pod update may make room for `target`: it is `target` itself, or a bound pod whose
    requests dropped in a resource `target` requests (cpu, memory, ephemeral-storage, scalars)."""
    if (new.metadata.uid or "") == (target.metadata.uid or ""):
        return True
    if not new.spec.nodeName:
        return False
    before, after = pod_requests(old), pod_requests(new)
    for name, want in pod_requests(target).items():
        if want == 0 or not (name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource_name(name)):
            continue
        if max(before.get(name, 0), 0) > max(after.get(name, 0), 0):
            return True
    return False


def _requested_resources_grew(requests: Resource, before: Resource, after: Resource) -> bool:
    """Whether allocatable grew from `before` to `after` in the pod count or in a resource these
    requests ask for."""
    if after.pods > before.pods:
        return True
    for want, had, has in (
        (requests.cpu, before.cpu, after.cpu),
        (requests.memory, before.memory, after.memory),
        (requests.ephemeral, before.ephemeral, after.ephemeral),
    ):
        if want > 0 and has > had:
            return True
    return any(after.scalar.get(name, 0) > before.scalar.get(name, 0) for name, _ in checked_scalars(requests))


@dataclass(frozen=True)
class _PreFilterState:
    requests: Resource
    scalars: tuple[tuple[str, int], ...]  # checked_scalars(requests, ...)

    def clone(self) -> _PreFilterState:
        return self  # never modified after PreFilter


@dataclass(frozen=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]  # in the order of the strategy's resources

    def clone(self) -> _PreScoreState:
        return self


# -- the plugin -------------------------------------------------------------------------------------


class NodeResourcesFit(PreFilterPlugin, FailureSignatures, PreScorePlugin, ScoreBatchPlugin, HintKeys):
    name: ClassVar[str] = NAME

    def __init__(self, args: NodeResourcesFitArgs, handle: Handle) -> None:
        self.handle = handle
        self._hint_nodes: dict[int, tuple[object, NodeInfo]] = {}
        self._hint_pods: dict[int, tuple[object, Resource]] = {}
        self.ignored_resources = frozenset(args.ignored_resources)
        self.ignored_groups = frozenset(args.ignored_resource_groups)
        strategy = args.scoring_strategy or ScoringStrategy(type=LEAST_ALLOCATED, resources=default_resources())
        self.strategy = strategy.type
        self.resources = [r.name for r in strategy.resources]
        self.weights = [r.weight for r in strategy.resources]
        self.scorer: Scorer
        self.array_scorer: ArrayScorer
        if strategy.type == MOST_ALLOCATED:
            self.scorer, self.array_scorer = most_allocated, most_allocated_array
        elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            shape = strategy.requested_to_capacity_ratio.shape if strategy.requested_to_capacity_ratio else []
            self.scorer = requested_to_capacity_ratio(shape)
            self.array_scorer = requested_to_capacity_ratio_array(shape)
        else:
            self.scorer, self.array_scorer = least_allocated, least_allocated_array
        self._cpu_memory_least_allocated = (
            strategy.type == LEAST_ALLOCATED and self.resources == [CPU, MEMORY] and (sum(self.weights) > 0)
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A deleted or scaled-down pod may free room; a new node or more allocatable may offer it;
        a DeviceClass may start backing an extended resource (DRAExtendedResource, beta, on).

        No `hint_key`: the scale-down hint queues the pod on its own update (a UID comparison)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
                hint=self._is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                hint=self._is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
                hint=self._is_schedulable_after_device_class_event,
            ),
        ]

    # Any: the queued pod as served (metadata set), read without checks on the queue's per-pod path
    def hint_key(self, pod: Any) -> Hashable:
        """The hints read the pod's requests (and, for its own updates, its identity)."""
        try:
            return tuple(sorted(pod_requests(pod).items()))
        except ValueError:  # a request that does not parse: the pod is judged on its own
            return ("pod", pod.metadata.uid)

    # Any: the event's pod as served (spec set), read without checks in this hint
    def _is_schedulable_after_pod_event(self, pod: m.Pod, old: Any, new: m.Pod | None) -> QueueingHint:
        """Deleted: Queue unless the pod was neither bound nor nominated. Scaled down: Queue for the
        pod itself, or a bound pod whose requests shrank in a resource this pod requests."""
        if new is None:
            if not old.spec.nodeName and not (old.status is not None and old.status.nominatedNodeName):
                return QueueingHint.QUEUE_SKIP
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE if _scale_down_may_help(pod, old, new) else QueueingHint.QUEUE_SKIP

    def _is_schedulable_after_node_change(self, pod: m.Pod, old: m.Node | None, new: m.Node | None) -> QueueingHint:
        """Queue when the pod fits the node on its own (ignored resources not applied, as upstream)
        and the node is new or grew in the pod count or a resource the pod requests."""
        if new is None:
            return QueueingHint.QUEUE_SKIP
        requests = self._hint_requests(pod)
        modified = self._hint_node(new)
        if fits_request(requests, modified):
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        if _requested_resources_grew(requests, self._hint_node(old).allocatable, modified.allocatable):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _hint_requests(self, pod: m.Pod) -> Resource:
        """A queued pod's requests, parsed once while the pod object lives in the queue."""
        cached = self._hint_pods.get(id(pod))
        if cached is None or cached[0] is not pod:
            if len(self._hint_pods) >= HINT_CACHE_PODS:
                self._hint_pods.clear()
            cached = self._hint_pods[id(pod)] = (pod, Resource.from_amounts(pod_requests(pod)))
        return cached[1]

    def _hint_node(self, node: object) -> NodeInfo:
        """The NodeInfo of an event's node, parsed once per event rather than once per pod asked."""
        cached = self._hint_nodes.get(id(node))
        if cached is None or cached[0] is not node:
            if len(self._hint_nodes) >= 4:
                self._hint_nodes.clear()
            cached = self._hint_nodes[id(node)] = (node, NodeInfo(node))
        return cached[1]

    # Any: the event's DeviceClass as served (metadata set), read without checks in this hint
    def _is_schedulable_after_device_class_event(
        self, pod: m.Pod, old: resource_v1.DeviceClass | None, new: Any
    ) -> QueueingHint:
        """Queue when the class now backs an extended resource the pod requests: by its implicit
        `deviceclass.resource.kubernetes.io/<name>` (on add) or a new `extendedResourceName`."""
        requested = pod_requests(pod)
        extended = new.spec.extendedResourceName if new.spec is not None else None
        if old is not None:
            before = old.spec.extendedResourceName if old.spec is not None else None
            if (before or "") == (extended or ""):
                return QueueingHint.QUEUE_SKIP
        elif DEVICE_CLASS_RESOURCE_PREFIX + (new.metadata.name or "") in requested:
            return QueueingHint.QUEUE
        if extended is not None and extended in requested:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        scalars = checked_scalars(pod.requests, self.ignored_resources, self.ignored_groups)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pod.requests, scalars))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        missing = fits_request(pre.requests, node, scalars=pre.scalars)
        if not missing:
            return None
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if any(r.unresolvable for r in missing) else Code.UNSCHEDULABLE
        return Status(code, *(r.reason for r in missing))

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return filter_per_node(self.filter, state, pod, table, rows)  # the same error on every node
        requests, scalars = pre.requests, pre.scalars
        if table.exact(requests.cpu, requests.memory, requests.ephemeral):
            # Whether each node lacks room for these requests, kept across cycles in the table.
            column = table.memo(
                (LACKS_MEMO_KEY, requests.cpu, requests.memory, requests.ephemeral, scalars),
                lambda every: lacks_request_exact(requests, scalars, table, every).astype(np.int64),
                lambda node: int(bool(fits_request(requests, node, scalars=scalars))),
            )
            short = column[rows] != 0
            return short if short.any() else None
        lacks = lacks_request(requests, scalars, table, rows)
        if lacks is None:
            return filter_per_node(self.filter, state, pod, table, rows)
        return lacks if lacks.any() else None

    def failure_signatures(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int | None:
        """For rows this plugin rejects: a number per row that determines `filter`'s status there
        (which resources are short, and which exceed allocatable); None when not computable."""
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState) or len(pre.scalars) > 28:
            return None
        requests = pre.requests
        if not table.exact(requests.cpu, requests.memory, requests.ephemeral):
            return None
        signature: Int = (table.free_pods[rows] < 1).astype(np.int64)
        compared = [
            (requests.cpu, table.free_cpu, table.alloc_cpu),
            (requests.memory, table.free_mem, table.alloc_mem),
            (requests.ephemeral, table.free_eph, table.alloc_eph),
        ]
        for name, want in pre.scalars:
            if name in table.scalar_alloc:
                have = table.scalar_alloc[name]
                compared.append((want, have - table.scalar_req[name], have))
        bit = 2
        for want, free, allocatable in compared:
            if want > 0:
                signature |= (free[rows] < want) * bit | (allocatable[rows] < want) * (bit << 1)
            bit <<= 2
        return signature

    def _pod_requests(self, pod: PodInfo) -> tuple[int, ...]:
        return tuple(pod_request(pod, name, non_zero=True) for name in self.resources)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(self._pod_requests(pod)))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        pre = state.get(PRE_SCORE_STATE_KEY)
        requests = pre.pod_requests if isinstance(pre, _PreScoreState) else self._pod_requests(pod)
        return self._node_score(requests, node)

    def _node_score(self, requests: tuple[int, ...], node: NodeInfo) -> int:
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

    def _least_allocated_cpu_memory(self, table: NodeTable, rows: Int, requests: tuple[int, ...]) -> Int:
        """The default strategy over cpu and memory where every row offers both and amounts are
        exact: the general array form without its per-row bookkeeping."""
        alloc_cpu, alloc_mem = table.alloc_cpu[rows], table.alloc_mem[rows]
        req_cpu, req_mem = table.nz_cpu[rows] + requests[0], table.nz_mem[rows] + requests[1]
        cpu = np.where(req_cpu <= alloc_cpu, (alloc_cpu - req_cpu) * MAX_NODE_SCORE // alloc_cpu, 0)
        mem = np.where(req_mem <= alloc_mem, (alloc_mem - req_mem) * MAX_NODE_SCORE // alloc_mem, 0)
        w_cpu, w_mem = self.weights
        out: Int = (cpu * w_cpu + mem * w_mem) // (w_cpu + w_mem)
        return out

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        pre = state.get(PRE_SCORE_STATE_KEY)
        requests = pre.pod_requests if isinstance(pre, _PreScoreState) else self._pod_requests(pod)
        if self._cpu_memory_least_allocated and not table.rows_without_cpu_memory and table.exact(*requests):
            # The node's score for these requests, kept across cycles in the table.
            column = table.memo(
                (SCORE_MEMO_KEY, tuple(self.weights), requests),
                lambda every: self._least_allocated_cpu_memory(table, every, requests),
                lambda node: self._node_score(requests, node),
            )
            return column[rows]
        requested: list[Int] = []
        allocatable: list[Int] = []
        included: list[Bool] = []
        weights: list[int] = []
        for name, want, weight in zip(self.resources, requests, self.weights, strict=True):
            amounts = table_amounts(table, rows, name, want, non_zero=True)
            if amounts is None:
                continue
            if not table.exact(want) and not safe_amounts(*amounts, want):
                return score_per_node(self.score, state, pod, table, rows)
            allocatable.append(amounts[0])
            requested.append(amounts[1] + want)
            included.append(offered(amounts[0]))
            weights.append(weight)
        if not requested:
            return zeros(rows) + self.scorer([], [], [])
        return self.array_scorer(requested, allocatable, included, weights)


def new(args: NodeResourcesFitArgs | None, handle: Handle) -> NodeResourcesFit:
    """Build the plugin from its (possibly absent) arguments, defaulted and validated."""
    full = (args or NodeResourcesFitArgs()).defaulted()
    full.validate()
    return NodeResourcesFit(full, handle)
