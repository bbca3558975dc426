"""Parsed PodAffinityTerms: the namespaces a term selects (its list, its namespaceSelector, else the
owner pod's namespace), its label selector with matchLabelKeys/mismatchLabelKeys merged in, and a
pod's terms by kind (required/preferred, affinity/anti-affinity), with the errors of those that do
not parse."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lightkube.models import core_v1

from kubesched.api.selectors import IN, NOT_IN, LabelRequirement, LabelSelectorMatcher, compile_label_selector
from kubesched.plugins.resource_scoring import aggregate_message

if TYPE_CHECKING:
    from kubesched.plugin import NodeInfo

_REQUIRED_AFFINITY = "requiredAffinityTerms"
_REQUIRED_ANTI_AFFINITY = "requiredAntiAffinityTerms"
_PREFERRED_AFFINITY = "preferredAffinityTerms"
_PREFERRED_ANTI_AFFINITY = "preferredAntiAffinityTerms"
_NO_LABELS: Mapping[str, str] = {}


def _selector_key(selector: LabelSelectorMatcher) -> Hashable:
    return None if selector.matches_nothing else frozenset(selector.requirements)


# Any: a pod as served (metadata set), read without checks on the per-pod paths
def _namespace(pod: Any) -> str:
    return pod.metadata.namespace or "default"


def _labels(node: NodeInfo) -> Mapping[str, str]:
    return (node.node.metadata.labels if node.node is not None else None) or _NO_LABELS


class _Term:
    """A parsed PodAffinityTerm. `match_key` names the pods it selects, `key` the term itself."""

    __slots__ = ("key", "match_key", "namespace_selector", "namespaces", "selector", "topology_key")

    def __init__(
        self,
        namespaces: frozenset[str],
        namespace_selector: LabelSelectorMatcher,
        selector: LabelSelectorMatcher,
        topology_key: str,
    ) -> None:
        self.namespaces = namespaces
        self.namespace_selector = namespace_selector
        self.selector = selector
        self.topology_key = topology_key
        self.match_key = (namespaces, _selector_key(namespace_selector), _selector_key(selector))
        self.key = (*self.match_key, topology_key)

    # Any: a pod as served (metadata set), read without checks in the per-pod loops
    def matches(self, pod: Any, namespace_labels: Mapping[str, str] | None) -> bool:
        """Whether `pod` is selected; `namespace_labels` are those of the pod's namespace."""
        meta = pod.metadata
        if (meta.namespace or "default") in self.namespaces or self.namespace_selector.matches(namespace_labels):
            return self.selector.matches(meta.labels)
        return False

    def resolved(self, namespaces: Mapping[str, Mapping[str, str]]) -> _Term:
        """For the incoming pod: the namespaces its namespaceSelector selects added to the list
        (a selector selecting everything is kept as it is)."""
        selector = self.namespace_selector
        if not selector.matches_nothing and not selector.requirements:
            return self
        picked = frozenset(name for name, labels in namespaces.items() if selector.matches(labels))
        if picked <= self.namespaces:
            return self
        return _Term(self.namespaces | picked, selector, self.selector, self.topology_key)


def _matches_all(terms: Sequence[_Term], pod: object) -> bool:
    return bool(terms) and all(t.matches(pod, None) for t in terms)


# Any: a pod as served (metadata set), read without checks when its terms are parsed
def _term(pod: Any, term: core_v1.PodAffinityTerm) -> _Term:
    """Parse one PodAffinityTerm of `pod`; a selector that does not parse raises a ValueError."""
    selector = compile_label_selector(term.labelSelector, field="labelSelector")
    if term.labelSelector is not None and (term.matchLabelKeys or term.mismatchLabelKeys):
        labels = pod.metadata.labels or _NO_LABELS
        extra = [LabelRequirement(k, IN, frozenset((labels[k],))) for k in term.matchLabelKeys or () if k in labels]
        extra += [
            LabelRequirement(k, NOT_IN, frozenset((labels[k],))) for k in term.mismatchLabelKeys or () if k in labels
        ]
        if extra:
            selector = LabelSelectorMatcher((*selector.requirements, *extra))
    if term.namespaces or term.namespaceSelector is not None:
        namespaces = frozenset(term.namespaces or ())
    else:
        namespaces = frozenset((_namespace(pod),))
    namespace_selector = compile_label_selector(term.namespaceSelector, field="namespaceSelector")
    return _Term(namespaces, namespace_selector, selector, term.topologyKey)


@dataclass(frozen=True)
class _PodTerms:
    """A pod's parsed terms; a kind that does not parse is empty and its error is in `errors`."""

    required_affinity: tuple[_Term, ...]
    required_anti_affinity: tuple[_Term, ...]
    preferred_affinity: tuple[tuple[int, _Term], ...]
    preferred_anti_affinity: tuple[tuple[int, _Term], ...]
    errors: dict[str, str]

    @property
    def error(self) -> str:
        return aggregate_message([ValueError(f"{kind}: {e}") for kind, e in self.errors.items()])


NO_TERMS = _PodTerms((), (), (), (), {})  # a pod without inter-pod (anti-)affinity


# Any: a pod as served (spec set), read without checks when its terms are parsed
def _parse(pod: Any) -> _PodTerms:
    affinity = pod.spec.affinity
    positive = affinity.podAffinity if affinity is not None else None
    negative = affinity.podAntiAffinity if affinity is not None else None
    errors: dict[str, str] = {}

    def required(kind: str, group: core_v1.PodAffinity | core_v1.PodAntiAffinity) -> tuple[_Term, ...]:
        try:
            return tuple(_term(pod, t) for t in (group.requiredDuringSchedulingIgnoredDuringExecution or ()))
        except ValueError as err:
            errors[kind] = str(err)
            return ()

    def preferred(kind: str, group: core_v1.PodAffinity | core_v1.PodAntiAffinity) -> tuple[tuple[int, _Term], ...]:
        try:
            return tuple(
                (t.weight, _term(pod, t.podAffinityTerm))
                for t in (group.preferredDuringSchedulingIgnoredDuringExecution or ())
            )
        except ValueError as err:
            errors[kind] = str(err)
            return ()

    if positive is None and negative is None:
        return NO_TERMS
    return _PodTerms(
        required(_REQUIRED_AFFINITY, positive) if positive is not None else (),
        required(_REQUIRED_ANTI_AFFINITY, negative) if negative is not None else (),
        preferred(_PREFERRED_AFFINITY, positive) if positive is not None else (),
        preferred(_PREFERRED_ANTI_AFFINITY, negative) if negative is not None else (),
        errors,
    )
