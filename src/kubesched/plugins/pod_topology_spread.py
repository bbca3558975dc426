"""PodTopologySpread: keep a pod's matching pods evenly spread over topology domains (zones, nodes...).

A constraint (`topologySpreadConstraints`, or the plugin's default constraints for a pod that has
none) counts, per value of its `topologyKey`, the pods of the pod's namespace that its selector
matches (pods being deleted do not count). Only nodes carrying every constraint's key, and passing
the constraint's node inclusion policies (`nodeAffinityPolicy` Honor by default: the pod's
nodeSelector and required node affinity; `nodeTaintsPolicy` Ignore by default: Honor leaves out
nodes with a NoSchedule/NoExecute taint the pod does not tolerate), make up the domains.
`matchLabelKeys` adds `key In (the pod's value)` to the selector for each key the pod has. As
upstream, an empty `labelSelector` counts no pod, yet the pod matches it itself and AddPod counts
the pods it matches.

Filter (DoNotSchedule constraints): a node without a constraint's key is UnschedulableAndUnresolvable
(`... (missing required label)`); otherwise the node fails (Unschedulable) when the count of its
domain, plus one if the pod matches its own selector, minus the global minimum exceeds `maxSkew`.
The global minimum is the smallest domain count, or 0 when there are fewer domains than
`minDomains`. PreFilter returns Skip when the pod has no such constraint; AddPod/RemovePod move one
pod in or out of the counts (nominated pods, preemption).

Score (ScheduleAnyway constraints): a node's raw score sums, per constraint whose key it has,
`count * ln(domains + 2) + maxSkew - 1` (hostname constraints count the pods on the node itself, and
their `domains` is the number of scored nodes), rounded; NormalizeScore maps the fewest matching
pods to 100. Nodes missing a key are ignored (score 0) unless the constraints are the system
defaults. PreScore returns Skip when the pod has no such constraint.

Default constraints (`defaultingType: System`: hostname maxSkew 3 and zone maxSkew 5, both
ScheduleAnyway) take their selector from the Services, ReplicationControllers, ReplicaSets and
StatefulSets selecting the pod, read through the handle's optional `workloads` (see `Workloads`);
with none, or none selecting the pod, the selector is empty and the defaults are skipped, as
upstream skips them for a pod no such object selects. The scheduler has no such informers yet, so
default constraints currently never apply.

Batch methods read the NodeTable: each node's topology domain as an integer id (a memo column per
topology key), the matching-pod count of each node per (namespace, selector) (a memo column, so
counts follow pod changes incrementally across cycles), and the inclusion policies (memo columns
per node constraints / tolerations); domain counts are `np.bincount`s. PreFilter and PreScore use
the table whenever the nodes they are given are rows of it.

QueueingHints (v1.36.2, queueing hints on): an assigned pod of the namespace added, deleted or
relabelled so that it (no longer) matches a hard constraint's selector, the pod's own tolerations
changing while a hard constraint honours taints; a node added or deleted carrying every hard
constraint's key, or updated in those keys' presence, their values, or its taints.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import msgspec
import numpy as np
import numpy.typing as npt
from lightkube.models import core_v1, meta_v1

from kubesched.api.errors import FORBIDDEN, REQUIRED, FieldError
from kubesched.api.selectors import IN, LabelRequirement, LabelSelectorMatcher, compile_label_selector
from kubesched.cache.table import RowNodes
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.framework.interface import MAX_NODE_SCORE, PreFilterResult
from kubesched.framework.status import SKIP, Status, StatusError
from kubesched.plugins.args import decode_args
from kubesched.plugins.batch import Bool, Int, filter_per_node
from kubesched.plugins.resource_scoring import child, label_name_errors, raise_if_any
from kubesched.plugins.taint_toleration import has_untolerated_hard_taint

if TYPE_CHECKING:
    from kubesched.cache import NodeInfo, PodInfo
    from kubesched.cache.table import NodeTable
    from kubesched.framework.cycle_state import CycleState

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
MAX_INT32 = 2**31 - 1  # the global minimum while no domain exists, as upstream
MAX_INT64 = 2**63 - 1
_HINT_CACHE_SIZE = 1024
_NO_LABELS: Mapping[str, str] = {}
Float = npt.NDArray[np.float64]

# Failure codes of the batch filter, in the order the per-node Filter reports them.
_PASS, _MISSING_LABEL, _TOO_SKEWED = 0, 1, 2


# -- arguments --------------------------------------------------------------------------------------


class DefaultConstraint(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """A v1 TopologySpreadConstraint as given in `defaultConstraints` (its selector must stay unset)."""

    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: meta_v1.LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] | None = None


class PodTopologySpreadArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """PodTopologySpreadArgs (kubescheduler.config.k8s.io/v1). An empty `defaultingType` means System."""

    default_constraints: list[DefaultConstraint] = msgspec.field(default_factory=list)
    defaulting_type: str = ""
    kind: str = ""
    api_version: str = ""

    def validate(self, path: str = "") -> None:
        """Raise `ArgsError` (a ValueError) listing every invalid field, as upstream words them."""
        errors: list[FieldError] = []
        defaulting = self.defaulting_type or SYSTEM_DEFAULTING
        defaulting_path = child(path, "defaultingType")
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errors.append(FieldError.not_supported(defaulting_path, defaulting, (SYSTEM_DEFAULTING, LIST_DEFAULTING)))
        elif defaulting == SYSTEM_DEFAULTING and self.default_constraints:
            errors.append(FieldError(defaulting_path, defaulting, "when .defaultConstraints are not empty"))
        constraints_path = child(path, "defaultConstraints")
        for i, c in enumerate(self.default_constraints):
            p = f"{constraints_path}[{i}]"
            if c.max_skew <= 0:
                errors.append(FieldError(f"{p}.maxSkew", c.max_skew, "not in valid range (0, inf)"))
            if not c.topology_key:
                errors.append(FieldError(f"{p}.topologyKey", None, "can not be empty", kind=REQUIRED))
            else:
                errors += label_name_errors(c.topology_key, f"{p}.topologyKey")
            if not c.when_unsatisfiable:
                errors.append(FieldError(f"{p}.whenUnsatisfiable", None, "can not be empty", kind=REQUIRED))
            elif c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                errors.append(
                    FieldError.not_supported(
                        f"{p}.whenUnsatisfiable", c.when_unsatisfiable, (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
                    )
                )
            if c.label_selector is not None:
                detail = "constraint must not define a selector, as they deduced for each pod"
                errors.append(FieldError(f"{p}.labelSelector", None, detail, kind=FORBIDDEN))
            if any(
                (o.topology_key, o.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable)
                for o in self.default_constraints[:i]
            ):
                value = f"{{{c.topology_key}, {c.when_unsatisfiable}}}"
                errors.append(FieldError(p, value, "", kind="Duplicate value"))
        raise_if_any(errors)


ARGS = PodTopologySpreadArgs

SYSTEM_DEFAULT_CONSTRAINTS = (
    DefaultConstraint(max_skew=3, topology_key=HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    DefaultConstraint(max_skew=5, topology_key=ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)


# -- constraints ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Constraint:
    """One constraint of the pod, with its selector compiled (matchLabelKeys merged in) and its
    optional fields defaulted."""

    max_skew: int
    topology_key: str
    selector: LabelSelectorMatcher
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def selector_key(selector: LabelSelectorMatcher) -> Hashable:
    """A hashable form of a selector, equal for selectors that match the same way."""
    requirements = sorted((r.key, r.operator, tuple(sorted(r.values))) for r in selector.requirements)
    return selector.matches_nothing, tuple(requirements)


def is_empty(selector: LabelSelectorMatcher) -> bool:
    """Whether the selector has no requirement (and so counts no pod; `NOTHING` also counts none)."""
    return not selector.matches_nothing and not selector.requirements


def _with_match_label_keys(
    selector: LabelSelectorMatcher, keys: Sequence[str] | None, labels: Mapping[str, str]
) -> LabelSelectorMatcher:
    """The selector ANDed with `key In (value)` for each key the pod's labels have; a selector that
    matches nothing stays so."""
    added = [LabelRequirement(k, IN, frozenset({labels[k]})) for k in keys or () if k in labels]
    if not added or selector.matches_nothing:
        return selector
    return LabelSelectorMatcher([*added, *selector.requirements])


def parse_constraints(constraints: Iterable[Any], labels: Mapping[str, str] | None, action: str) -> list[Constraint]:
    """The constraints with `whenUnsatisfiable == action`, compiled; ValueError on a bad selector."""
    labels = labels or _NO_LABELS
    out: list[Constraint] = []
    for c in constraints:
        if c.whenUnsatisfiable != action:
            continue
        selector = compile_label_selector(c.labelSelector)
        out.append(
            Constraint(
                c.maxSkew,
                c.topologyKey,
                _with_match_label_keys(selector, c.matchLabelKeys, labels),
                1 if c.minDomains is None else c.minDomains,
                c.nodeAffinityPolicy or HONOR,
                c.nodeTaintsPolicy or IGNORE,
            )
        )
    return out


def count_matching(pods: Iterable[PodInfo], selector: LabelSelectorMatcher, namespace: str) -> int:
    """Pods of `namespace`, not being deleted, that the selector matches (none for an empty selector)."""
    if is_empty(selector) or selector.matches_nothing:
        return 0
    return sum(
        1
        for p in pods
        if p.namespace == namespace
        and p.pod.metadata.deletionTimestamp is None
        and selector.matches(p.pod.metadata.labels)
    )


def _labels(node: Any) -> Mapping[str, str]:
    """A Node's labels (none for a missing node)."""
    return (node.metadata.labels if node is not None else None) or _NO_LABELS


def has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


# Go's math.Log (the FreeBSD algorithm; Go's amd64 assembly computes the same), which differs from
# the C library's log in the last bit for some arguments (e.g. 3): scores are rounded, so the
# weights must be bit-identical.
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_L1, _L2, _L3, _L4 = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
)
_L5, _L6, _L7 = 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01


def go_log(x: float) -> float:
    """Natural logarithm of a positive finite `x`, bit for bit as Go computes it."""
    fraction, exponent = math.frexp(x)
    if fraction < math.sqrt(2) / 2:
        fraction, exponent = fraction * 2, exponent - 1
    f, k = fraction - 1, float(exponent)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    r = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7))) + s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def topology_normalizing_weight(size: int) -> float:
    return go_log(float(size + 2))


def go_round(x: float) -> int:
    """Round half away from zero (Go's math.Round) a non-negative `x`."""
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def _go_round_array(x: Float) -> Int:
    whole = np.floor(x)
    out: Int = whole.astype(np.int64) + (x - whole >= 0.5)
    return out


# -- default constraints' selector ----------------------------------------------------------------------


class Workloads(Protocol):
    """What system defaulting reads of the cluster, offered (optionally) as `handle.workloads`."""

    def services(self, namespace: str) -> Iterable[Any]:
        """The Services of a namespace."""
        ...

    def controller(self, kind: str, namespace: str, name: str) -> Any | None:
        """The ReplicationController, ReplicaSet or StatefulSet (by `kind`) of that name, if any."""
        ...


_CONTROLLER_KINDS = {
    ("v1", "ReplicationController"): "ReplicationController",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
}


def default_selector(pod: Any, workloads: Workloads) -> LabelSelectorMatcher:
    """The selectors of the Services selecting the pod merged, ANDed with that of its controlling
    ReplicationController (merged into the same label set), ReplicaSet or StatefulSet."""
    namespace = pod.metadata.namespace or "default"
    labels = pod.metadata.labels or _NO_LABELS
    label_set: dict[str, str] = {}
    for service in workloads.services(namespace):
        selected = service.spec.selector if service.spec is not None else None
        if selected is not None and all(labels.get(k) == v for k, v in selected.items()):
            label_set.update(selected)
    owner = next((r for r in pod.metadata.ownerReferences or () if r.controller), None)
    kind = _CONTROLLER_KINDS.get((owner.apiVersion, owner.kind)) if owner is not None else None
    extra: tuple[LabelRequirement, ...] = ()
    obj = workloads.controller(kind, namespace, owner.name) if kind is not None and owner is not None else None
    if obj is not None and obj.spec is not None and kind == "ReplicationController":
        label_set.update(obj.spec.selector or {})
    elif obj is not None and obj.spec is not None:
        try:
            extra = compile_label_selector(obj.spec.selector).requirements
        except ValueError:
            extra = ()
    return LabelSelectorMatcher([*(LabelRequirement(k, IN, frozenset({v})) for k, v in label_set.items()), *extra])


# -- cycle state ----------------------------------------------------------------------------------------


class Domains:
    """Matching-pod counts of one constraint's topology domains, by domain id (`ids`: value → id,
    shared by the plugin for the topology key). `present` marks the domains that exist."""

    __slots__ = ("counts", "ids", "minimum", "present", "size")

    def __init__(self, ids: dict[str, int], counts: Int, present: Bool) -> None:
        self.ids = ids
        self.counts = counts
        self.present = present
        self.size = int(np.count_nonzero(present))
        self.minimum = int(counts[present].min()) if self.size else MAX_INT32

    def count(self, value: str) -> int:
        d = self.ids.get(value)
        return int(self.counts[d]) if d is not None and d < len(self.counts) else 0

    def global_minimum(self, min_domains: int) -> int:
        return 0 if self.size < min_domains else self.minimum

    def as_dict(self) -> dict[str, int]:
        """The counts by domain value (for tests and debugging)."""
        return {v: int(self.counts[d]) for v, d in self.ids.items() if d < len(self.present) and self.present[d]}

    def column(self, ids: Int) -> Int:
        """The counts of the domains `ids` (all >= 0); domains unknown to this state count 0."""
        if len(ids) and int(ids.max()) >= len(self.counts):
            self._grow(int(ids.max()) + 1)
        out: Int = self.counts[ids]
        return out

    def _grow(self, size: int) -> None:
        extra = size - len(self.counts)
        self.counts = np.concatenate((self.counts, np.zeros(extra, dtype=np.int64)))
        self.present = np.concatenate((self.present, np.zeros(extra, dtype=np.bool_)))

    def update(self, value: str, delta: int) -> None:
        """Add `delta` to the count of the domain `value` (which then exists), keeping the minimum exact."""
        d = self.ids.setdefault(value, len(self.ids))
        if d >= len(self.counts):
            self._grow(d + 1)
        old = int(self.counts[d])
        self.counts[d] = old + delta
        if not self.present[d]:
            self.present[d] = True
            self.size += 1
            self.minimum = min(self.minimum, old + delta)
        elif old + delta < self.minimum:
            self.minimum = old + delta
        elif old == self.minimum and delta > 0:
            self.minimum = int(self.counts[self.present].min())

    def clone(self) -> Domains:
        c = Domains.__new__(Domains)
        c.ids, c.counts, c.present = self.ids, self.counts.copy(), self.present.copy()
        c.size, c.minimum = self.size, self.minimum
        return c


class _PreFilterState:
    __slots__ = ("constraints", "domains")

    def __init__(self, constraints: Sequence[Constraint], domains: list[Domains]) -> None:
        self.constraints = tuple(constraints)
        self.domains = domains

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.constraints, [d.clone() for d in self.domains])


@dataclass(frozen=True)
class _PreScoreState:
    """Soft constraints; per constraint its weight and, unless it spreads by hostname, the counts of
    its domains; which of the scored nodes (by position) are ignored."""

    constraints: tuple[Constraint, ...]
    require_all: bool
    weights: tuple[float, ...]
    domains: tuple[Domains | None, ...]
    ignored: Bool
    namespace: str

    def clone(self) -> _PreScoreState:
        return self  # not modified after PreScore

    def is_ignored(self, labels: Mapping[str, str]) -> bool:
        return self.require_all and not has_all_keys(labels, self.constraints)


# -- the plugin -----------------------------------------------------------------------------------------


class PodTopologySpread:
    name: ClassVar[str] = NAME

    def __init__(self, args: PodTopologySpreadArgs, handle: Any) -> None:
        self.handle = handle
        self.system_defaulted = (args.defaulting_type or SYSTEM_DEFAULTING) == SYSTEM_DEFAULTING
        self.default_constraints = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else tuple(args.default_constraints)
        )
        self._domain_ids: dict[str, dict[str, int]] = {}  # topology key -> value -> domain id
        self._token = object()  # names this plugin's domain ids in NodeTable memo keys
        self._hint_constraints: dict[Hashable, list[Constraint] | ValueError] = {}

    # -- constraints ------------------------------------------------------------------------------------

    @property
    def _workloads(self) -> Workloads | None:
        return getattr(self.handle, "workloads", None)

    def constraints(self, pod: Any, action: str) -> list[Constraint]:
        """The pod's constraints for `action`, or the default ones when it has none; ValueError
        (with upstream's wording) when a selector does not parse."""
        own = pod.spec.topologySpreadConstraints
        kind = "hard" if action == DO_NOT_SCHEDULE else "soft"
        if own:
            try:
                return parse_constraints(own, pod.metadata.labels, action)
            except ValueError as err:
                raise ValueError(f"obtaining pod's {kind} topology spread constraints: {err}") from None
        defaults = [c for c in self.default_constraints if c.when_unsatisfiable == action]
        workloads = self._workloads
        if not defaults or workloads is None:
            return []
        selector = default_selector(pod, workloads)
        if is_empty(selector):
            return []
        return [
            Constraint(
                c.max_skew,
                c.topology_key,
                selector,
                1 if c.min_domains is None else c.min_domains,
                c.node_affinity_policy or HONOR,
                c.node_taints_policy or IGNORE,
            )
            for c in defaults
        ]

    def _ids(self, key: str) -> dict[str, int]:
        ids = self._domain_ids.get(key)
        if ids is None:
            ids = self._domain_ids[key] = {}
        return ids

    # -- NodeTable columns ---------------------------------------------------------------------------

    def _rows(self, nodes: Sequence[NodeInfo]) -> tuple[NodeTable, Int] | None:
        """The snapshot's table and the rows of `nodes` in it, when every one of `nodes` is a row
        of it (table rows, the snapshot's node list, or the very NodeInfo objects of some rows);
        else None, and the caller walks `nodes` one by one."""
        snapshot = getattr(self.handle, "snapshot", None)
        table: NodeTable | None = getattr(snapshot, "table", None)
        if table is None or not len(table):
            return None
        if isinstance(nodes, RowNodes):
            rows = nodes.rows
            return (table, rows) if not len(rows) or table.nodes[int(rows[0])] is nodes[0] else None
        in_step = len(nodes) == len(table) and table.nodes[0] is nodes[0] and table.nodes[-1] is nodes[-1]
        if nodes is getattr(snapshot, "node_info_list", None) and in_step:
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

    # -- PreFilter and its extensions ------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        try:
            constraints = self.constraints(pod.pod, DO_NOT_SCHEDULE)
        except ValueError as err:
            return None, Status.error(f"get constraints from pod: {err}")
        if not constraints:
            return None, SKIP
        found = self._rows(nodes)
        if found is not None:
            domains = self._domains_from_table(pod, constraints, *found)
        else:
            domains = self._domains_per_node(pod, constraints, nodes)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(constraints, domains))
        return None, None

    def _domains_per_node(
        self, pod: PodInfo, constraints: Sequence[Constraint], nodes: Iterable[NodeInfo]
    ) -> list[Domains]:
        sums: list[dict[int, int]] = [{} for _ in constraints]
        ids = [self._ids(c.topology_key) for c in constraints]
        for node in nodes:
            if node.node is None:
                continue
            labels = _labels(node.node)
            if not has_all_keys(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if self._included(c, pod, node):
                    d = ids[i].setdefault(labels[c.topology_key], len(ids[i]))
                    sums[i][d] = sums[i].get(d, 0) + count_matching(node.pods, c.selector, pod.namespace)
        return [_domains_of(i, s) for i, s in zip(ids, sums, strict=True)]

    def _domains_from_table(
        self, pod: PodInfo, constraints: Sequence[Constraint], table: NodeTable, rows: Int
    ) -> list[Domains]:
        columns = [self._domain_column(table, c.topology_key)[rows] for c in constraints]
        has_all: Bool = np.logical_and.reduce([column >= 0 for column in columns])
        out: list[Domains] = []
        for c, column in zip(constraints, columns, strict=True):
            included = self._included_column(table, pod, c)
            eligible = has_all if included is None else has_all & included[rows]
            ids = self._ids(c.topology_key)
            present = np.bincount(column[eligible], minlength=len(ids)) > 0
            counts = self._count_column(table, pod.namespace, c.selector)
            out.append(Domains(ids, _sums(column, eligible, counts, rows, len(present)), present))
        return out

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod, pod_to_add, node, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod, pod_to_remove, node, -1)

    def _update_with_pod(
        self, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int
    ) -> Status | None:
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if other.namespace != pod.namespace or node.node is None:
            return None
        labels = _labels(node.node)
        if not has_all_keys(labels, pre.constraints):
            return None
        other_labels = other.pod.metadata.labels
        for c, domains in zip(pre.constraints, pre.domains, strict=True):
            if c.selector.matches(other_labels) and self._included(c, pod, node):
                domains.update(labels[c.topology_key], delta)
        return None

    # -- Filter -----------------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if node.node is None:
            return Status.error("node not found")
        labels = _labels(node.node)
        pod_labels = pod.pod.metadata.labels
        for c, domains in zip(pre.constraints, pre.domains, strict=True):
            value = labels.get(c.topology_key)
            if value is None:
                return Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            self_match = 1 if c.selector.matches(pod_labels) else 0
            if domains.count(value) + self_match - domains.global_minimum(c.min_domains) > c.max_skew:
                return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def _failure_codes(self, pre: _PreFilterState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        """Per row, why the per-node Filter rejects it (`_MISSING_LABEL`, `_TOO_SKEWED`) or `_PASS`."""
        codes = np.zeros(len(rows), dtype=np.int64)
        pod_labels = pod.pod.metadata.labels
        for c, domains in zip(pre.constraints, pre.domains, strict=True):
            ids = self._domain_column(table, c.topology_key)[rows]
            missing = ids < 0
            self_match = 1 if c.selector.matches(pod_labels) else 0
            limit = c.max_skew - self_match + domains.global_minimum(c.min_domains)
            skewed = domains.column(np.where(missing, 0, ids)) > limit
            codes = np.where(codes == _PASS, np.where(missing, _MISSING_LABEL, skewed * _TOO_SKEWED), codes)
        return codes

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return filter_per_node(self.filter, state, pod, table, rows)  # the same error on every node
        if not pre.constraints or not len(rows):
            return None
        failing: Bool = self._failure_codes(pre, pod, table, rows) != _PASS
        return failing if failing.any() else None

    def failure_signatures(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int | None:
        """For rows this plugin rejects: which of its two statuses `filter` gives there."""
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return None
        return self._failure_codes(pre, pod, table, rows)

    # -- Score ------------------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        snapshot = getattr(self.handle, "snapshot", None)
        all_nodes: Sequence[NodeInfo] = getattr(snapshot, "node_info_list", None) or ()
        if not all_nodes:
            return SKIP
        try:
            constraints = self.constraints(pod.pod, SCHEDULE_ANYWAY)
        except ValueError as err:
            return Status.error(f"calculating preScoreState: {err}")
        if not constraints:
            return SKIP
        # Nodes must have every key unless the constraints are the system defaults (so that nodes
        # without a zone still spread by hostname).
        require_all = bool(pod.pod.spec.topologySpreadConstraints) or not self.system_defaulted
        found = self._rows(nodes)
        whole = self._rows(all_nodes) if found is not None else None
        if found is not None and whole is not None:
            pre = self._pre_score_from_table(pod, constraints, require_all, found[0], found[1], whole[1])
        else:
            pre = self._pre_score_per_node(pod, constraints, require_all, nodes, all_nodes)
        state.write(PRE_SCORE_STATE_KEY, pre)
        return None

    def _pre_score_per_node(
        self,
        pod: PodInfo,
        constraints: Sequence[Constraint],
        require_all: bool,
        nodes: Sequence[NodeInfo],
        all_nodes: Sequence[NodeInfo],
    ) -> _PreScoreState:
        ignored = np.array(
            [require_all and not has_all_keys(_labels(n.node), constraints) for n in nodes], dtype=np.bool_
        )
        scored = [n for n, skip in zip(nodes, ignored.tolist(), strict=True) if not skip]
        weights: list[float] = []
        domains: list[Domains | None] = []
        for c in constraints:
            if c.topology_key == HOSTNAME:
                weights.append(topology_normalizing_weight(len(scored)))
                domains.append(None)
                continue
            ids = self._ids(c.topology_key)
            wanted = {ids.setdefault(_labels(n.node).get(c.topology_key, ""), len(ids)) for n in scored}
            weights.append(topology_normalizing_weight(len(wanted)))
            sums = dict.fromkeys(wanted, 0)
            for node in all_nodes:
                labels = _labels(node.node)
                if require_all and not has_all_keys(labels, constraints):
                    continue
                d = ids.get(labels.get(c.topology_key, ""))
                if d in sums and self._included(c, pod, node):
                    sums[d] += count_matching(node.pods, c.selector, pod.namespace)
            domains.append(_domains_of(ids, sums))
        return _PreScoreState(tuple(constraints), require_all, tuple(weights), tuple(domains), ignored, pod.namespace)

    def _pre_score_from_table(
        self,
        pod: PodInfo,
        constraints: Sequence[Constraint],
        require_all: bool,
        table: NodeTable,
        rows: Int,
        all_rows: Int,
    ) -> _PreScoreState:
        """The state over table rows: `rows` are the nodes to score, `all_rows` every node."""
        columns = [self._domain_column(table, c.topology_key) for c in constraints]
        has_all: Bool = np.logical_and.reduce([column >= 0 for column in columns])
        ignored = ~has_all[rows] if require_all else np.zeros(len(rows), dtype=np.bool_)
        scored = rows[~ignored]
        weights: list[float] = []
        domains: list[Domains | None] = []
        for c, column in zip(constraints, columns, strict=True):
            if c.topology_key == HOSTNAME:
                weights.append(topology_normalizing_weight(len(scored)))
                domains.append(None)
                continue
            ids = self._ids(c.topology_key)
            if not require_all:  # a node without the key belongs to the domain ""
                column = np.where(column < 0, ids.setdefault("", len(ids)), column)
            present = np.bincount(column[scored], minlength=len(ids)) > 0
            weights.append(topology_normalizing_weight(int(np.count_nonzero(present))))
            included = self._included_column(table, pod, c)
            eligible = has_all[all_rows] if require_all else np.ones(len(all_rows), dtype=np.bool_)
            if included is not None:
                eligible &= included[all_rows]
            counts = self._count_column(table, pod.namespace, c.selector)
            sums = _sums(column[all_rows], eligible, counts, all_rows, len(present))
            domains.append(Domains(ids, np.where(present, sums, 0), present))
        return _PreScoreState(tuple(constraints), require_all, tuple(weights), tuple(domains), ignored, pod.namespace)

    @staticmethod
    def _pre_score_state(state: CycleState) -> _PreScoreState:
        pre = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(pre, _PreScoreState):
            raise StatusError(Status.error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found'))
        return pre

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        pre = self._pre_score_state(state)
        if node.node is None:
            raise StatusError(Status.error("node not found"))
        labels = _labels(node.node)
        if pre.is_ignored(labels):
            return 0
        total = 0.0
        for c, weight, domains in zip(pre.constraints, pre.weights, pre.domains, strict=True):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            count = count_matching(node.pods, c.selector, pre.namespace) if domains is None else domains.count(value)
            total += count * weight + float(c.max_skew - 1)
        return go_round(total)

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        pre = self._pre_score_state(state)
        total = np.zeros(len(rows), dtype=np.float64)
        has_all = np.ones(len(rows), dtype=np.bool_)
        for c, weight, domains in zip(pre.constraints, pre.weights, pre.domains, strict=True):
            ids = self._domain_column(table, c.topology_key)[rows]
            has = ids >= 0
            has_all &= has
            if domains is None:
                column = self._count_column(table, pre.namespace, c.selector)
                counts = np.zeros(len(rows), dtype=np.int64) if column is None else column[rows]
            else:
                counts = domains.column(np.where(has, ids, 0))
            total = np.where(has, total + (counts.astype(np.float64) * weight + float(c.max_skew - 1)), total)
        scores = _go_round_array(total)
        if pre.require_all:
            scores = np.where(has_all, scores, 0)
        return scores

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        try:
            pre = self._pre_score_state(state)
        except StatusError as err:
            return err.status
        scores[:] = _normalize(pre, np.asarray(scores, dtype=np.int64)).tolist()
        return None

    def normalize_score_batch(self, state: CycleState, pod: PodInfo, scores: Int) -> Int:
        return _normalize(self._pre_score_state(state), scores)

    # -- queueing hints ---------------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pods coming, going or relabelled (and the pod's own new tolerations); nodes coming,
        going, relabelled or retainted."""
        add_delete = ActionType.ADD | ActionType.DELETE
        pod_actions = add_delete | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION
        node_actions = add_delete | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
        return [
            ClusterEventWithHint(ClusterEvent(POD, pod_actions), self._is_schedulable_after_pod),
            ClusterEventWithHint(ClusterEvent(NODE, node_actions), self._is_schedulable_after_node),
        ]

    def hint_key(self, pod: Any) -> Hashable:
        """What the hints read of the pod besides its own identity: its namespace and what its hard
        constraints are made of (its constraints and the labels matchLabelKeys names, or, for
        default constraints, its labels and owners)."""
        namespace = pod.metadata.namespace or "default"
        labels = pod.metadata.labels or _NO_LABELS
        own = pod.spec.topologySpreadConstraints
        if own:
            keys = sorted({k for c in own for k in c.matchLabelKeys or ()})
            return namespace, msgspec.json.encode(own), tuple((k, labels.get(k)) for k in keys)
        if self._workloads is None or not self.default_constraints:
            return (namespace,)
        owners = msgspec.json.encode(pod.metadata.ownerReferences or [])
        return namespace, tuple(sorted(labels.items())), owners

    def _hard_constraints(self, pod: Any) -> list[Constraint]:
        """The pod's hard constraints for a hint, cached by `hint_key`; ValueError as `constraints`."""
        key = self.hint_key(pod)
        found = self._hint_constraints.get(key)
        if found is None:
            if len(self._hint_constraints) >= _HINT_CACHE_SIZE:
                self._hint_constraints.clear()
            try:
                found = self.constraints(pod, DO_NOT_SCHEDULE)
            except ValueError as err:
                found = err
            self._hint_constraints[key] = found
        if isinstance(found, ValueError):
            raise found
        return found

    def _is_schedulable_after_pod(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue for an assigned pod of the namespace that starts or stops matching a hard
        constraint's selector (added, deleted or relabelled), or for the pod itself gaining
        tolerations while a constraint honours taints."""
        for changed in (old, new):
            if changed is not None and not _involved(changed, pod):
                return QueueingHint.QUEUE_SKIP
        constraints = self._hard_constraints(pod)
        if old is not None and new is not None:
            if (
                (new.metadata.uid or "") == (pod.metadata.uid or "")
                and old.spec.tolerations != new.spec.tolerations
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE
            before, after = old.metadata.labels or _NO_LABELS, new.metadata.labels or _NO_LABELS
            if before == after:
                return QueueingHint.QUEUE_SKIP
            changes = any(c.selector.matches(before) != c.selector.matches(after) for c in constraints)
            return QueueingHint.QUEUE if changes else QueueingHint.QUEUE_SKIP
        labels = (new if new is not None else old).metadata.labels
        matches = any(c.selector.matches(labels) for c in constraints)
        return QueueingHint.QUEUE if matches else QueueingHint.QUEUE_SKIP

    def _is_schedulable_after_node(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue for a node added or deleted that has every hard constraint's key, or updated so that
        it gains or loses one, changes a key's value, or changes its taints while having them all."""
        constraints = self._hard_constraints(pod)
        old_matches = old is not None and has_all_keys(_labels(old), constraints)
        new_matches = new is not None and has_all_keys(_labels(new), constraints)
        if old is not None and new is not None:
            if old_matches != new_matches:
                return QueueingHint.QUEUE
            before, after = _labels(old), _labels(new)
            relabelled = any(before.get(c.topology_key, "") != after.get(c.topology_key, "") for c in constraints)
            if new_matches and (relabelled or _taints(old) != _taints(new)):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if (new_matches if new is not None else old_matches) else QueueingHint.QUEUE_SKIP


def _involved(changed: Any, pod: Any) -> bool:
    """Whether a changed pod bears on `pod`'s spreading: it is `pod`, or assigned in its namespace."""
    if (changed.metadata.uid or "") == (pod.metadata.uid or ""):
        return True
    return bool(changed.spec.nodeName) and (changed.metadata.namespace or "default") == (
        pod.metadata.namespace or "default"
    )


def _taints(node: Any) -> list[core_v1.Taint] | None:
    return node.spec.taints if node.spec is not None else None


def _normalize(pre: _PreScoreState, scores: Int) -> Int:
    """Ignored nodes get 0; the others `100 * (max + min - score) / max`, or 100 when max is 0."""
    ignored = pre.ignored if len(pre.ignored) == len(scores) else np.zeros(len(scores), dtype=np.bool_)
    kept = scores[~ignored]
    highest = max(int(kept.max()), 0) if len(kept) else 0
    lowest = int(kept.min()) if len(kept) else MAX_INT64
    if highest == 0:
        normalized = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
    else:
        normalized = MAX_NODE_SCORE * (highest + lowest - scores) // highest
    out: Int = np.where(ignored, 0, normalized)
    return out


def _sums(domains: Int, eligible: Bool, counts: Int | None, rows: Int, size: int) -> Int:
    """Per domain id (`size` of them), the sum of `counts` at the eligible `rows` of each domain
    (`domains` and `eligible` are by position in `rows`)."""
    if counts is None:
        return np.zeros(size, dtype=np.int64)
    sums: Int = np.bincount(domains[eligible], weights=counts[rows][eligible], minlength=size).astype(np.int64)
    return sums


def _domains_of(ids: dict[str, int], sums: Mapping[int, int]) -> Domains:
    """`Domains` from the counts of the domains that exist, by id."""
    counts = np.zeros(len(ids), dtype=np.int64)
    present = np.zeros(len(ids), dtype=np.bool_)
    for d, count in sums.items():
        counts[d], present[d] = count, True
    return Domains(ids, counts, present)


def new(args: Any, handle: Any) -> PodTopologySpread:
    """Build the plugin from its (possibly absent) arguments, validated."""
    decoded = decode_args(args, PodTopologySpreadArgs)
    decoded.validate()
    return PodTopologySpread(decoded, handle)
