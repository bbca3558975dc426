"""A pod's topology spread constraints: parsed and defaulted (matchLabelKeys merged into the
selector), the selector helpers and pod counting, and the selector of the default constraints
(from the Services and controllers selecting the pod)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lightkube.models import core_v1

from kubesched.api.selectors import IN, LabelRequirement, LabelSelectorMatcher, compile_label_selector
from kubesched.plugin.handle import Workloads
from kubesched.plugins.pod_topology_spread.args import HONOR, IGNORE

if TYPE_CHECKING:
    from kubesched.plugin import PodInfo

_NO_LABELS: Mapping[str, str] = {}


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


def parse_constraints(
    constraints: Iterable[core_v1.TopologySpreadConstraint], labels: Mapping[str, str] | None, action: str
) -> list[Constraint]:
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


# Any: a Node as served (metadata set), read without checks in the per-node loops
def _labels(node: Any) -> Mapping[str, str]:
    """A Node's labels (none for a missing node)."""
    return (node.metadata.labels if node is not None else None) or _NO_LABELS


def has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


# -- default constraints' selector ----------------------------------------------------------------------


_CONTROLLER_KINDS = {
    ("v1", "ReplicationController"): "ReplicationController",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
}


# Any: a pod as served (metadata set), read without checks on the per-pod path
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
