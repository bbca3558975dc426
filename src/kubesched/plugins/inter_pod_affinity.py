"""InterPodAffinity: required pod affinity and anti-affinity (Filter), preferred ones (Score).

Terms and domains. A term selects pods by namespace (its `namespaces`, else the owner pod's own
namespace unless a `namespaceSelector` is set; the selector adds the namespaces whose labels it
matches) and by label selector; its topology key groups nodes into domains, one per label value.

PreFilter counts, per domain: the existing pods whose required anti-affinity terms match the
incoming pod (matched with the incoming pod's namespace labels), the pods matching all of the
incoming pod's required affinity terms, and the pods matching each of its required anti-affinity
terms. Filter rejects a node that lacks a topology key of the affinity terms or whose domain holds
no matching pod (UnschedulableAndUnresolvable; unless no pod anywhere matches and the pod matches its
own terms, the first pod of a group), a node whose anti-affinity domain holds a matching pod, and a
node in a domain an existing pod's anti-affinity forbids (both Unschedulable). Skip when the pod has
no required terms and no existing pod's anti-affinity matches it. AddPod/RemovePod update the counts.

PreScore sums, per domain, the weights of the incoming pod's preferred terms matched by existing
pods (negative for anti-affinity), of existing pods' preferred terms the incoming pod matches, and
`hardPodAffinityWeight` per existing pod's required affinity term it matches. A node scores the sum
over its domains, normalized min-max to 0-100. Skip when nothing matched (or, with
`ignorePreferredTermsOfExistingPods`, when the pod has no preferred terms).

Large clusters are answered from NodeTable memo columns: per node, its domain id for a topology key,
the number of pods matching a term of the incoming pod, and an id of the multiset of (anti-)affinity
terms its pods carry; the per-domain sums are then bincounts. Small ones are walked pod by pod.

QueueingHints (v1.36.2): a bound or nominated pod added that matches all the pod's affinity terms;
updated to match them, or to stop matching all its anti-affinity terms; deleted while matching all
its anti-affinity terms, or whose own anti-affinity terms all match the pod; the pod's own labels
changed. A node added with an affinity topology key (any node if the pod has anti-affinity terms),
or relabelled so that an affinity key appears or changes value, or an anti-affinity key disappears
or changes value. The hints read the pod through its namespace, labels and required terms only.

Kept from v1.36.2: the incoming pod's namespaceSelector stays in its terms besides the namespaces it
resolved to, so a selector that matches empty labels (NotIn, DoesNotExist) matches pods of every
namespace (fixed upstream after 1.36.2, kubernetes#141526). Deviation: `matchLabelKeys` and
`mismatchLabelKeys` are merged into the label selector here; upstream the API server merges them
when the pod is created (a later label change is not reflected there).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
import numpy as np

from kubesched.api.errors import FieldError
from kubesched.api.selectors import IN, NOT_IN, LabelRequirement, LabelSelectorMatcher, compile_label_selector
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.status import SKIP, Status, StatusError
from kubesched.plugins.args import decode_args
from kubesched.plugins.batch import Bool, Int, filter_per_node, score_per_node
from kubesched.plugins.resource_scoring import aggregate_message, child

if TYPE_CHECKING:
    from kubesched.cache import NodeInfo, PodInfo
    from kubesched.cache.table import NodeTable
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interface import Handle, PreFilterResult

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MAX_HARD_POD_AFFINITY_WEIGHT = 100
# Up to this many pods in the cluster, the incoming pod's terms are matched pod by pod; up to this
# many nodes hosting pods with (anti-)affinity, their pods' terms are read pod by pod.
FEW_PODS = 256
FEW_NODES = 32
PARSED_CACHE_SIZE = 1 << 17  # pods whose parsed terms are kept
HINT_CACHE_SIZE = 1024  # queued pods' parsed terms, by hint key

_DOMAIN_MEMO = NAME + "/domain"
_MATCH_MEMO = NAME + "/match"
_SIGNATURE_MEMO = NAME + "/terms"
_REQUIRED_AFFINITY = "requiredAffinityTerms"
_REQUIRED_ANTI_AFFINITY = "requiredAntiAffinityTerms"
_PREFERRED_AFFINITY = "preferredAffinityTerms"
_PREFERRED_ANTI_AFFINITY = "preferredAntiAffinityTerms"
# Filter verdicts of the batch path, in the order Filter checks them.
_PASSES, _NO_AFFINITY, _ANTI_AFFINITY, _EXISTING_ANTI_AFFINITY = 0, 1, 2, 3
_NO_LABELS: Mapping[str, str] = {}


class InterPodAffinityArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """InterPodAffinityArgs (kubescheduler.config.k8s.io/v1)."""

    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore_preferred_terms_of_existing_pods: bool = False
    kind: str = ""
    api_version: str = ""

    def validate(self, path: str = "") -> None:
        """Raise a FieldError (a ValueError) when hardPodAffinityWeight is outside [0, 100]."""
        weight = self.hard_pod_affinity_weight
        if not 0 <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
            raise FieldError(
                child(path, "hardPodAffinityWeight"), weight, f"not in valid range [0, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
            )


ARGS = InterPodAffinityArgs


# -- terms ------------------------------------------------------------------------------------------


def _selector_key(selector: LabelSelectorMatcher) -> Hashable:
    return None if selector.matches_nothing else frozenset(selector.requirements)


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


def _matches_all(terms: Sequence[_Term], pod: Any) -> bool:
    return bool(terms) and all(t.matches(pod, None) for t in terms)


def _term(pod: Any, term: Any) -> _Term:
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


def _parse(pod: Any) -> _PodTerms:
    affinity = pod.spec.affinity
    positive = affinity.podAffinity if affinity is not None else None
    negative = affinity.podAntiAffinity if affinity is not None else None
    errors: dict[str, str] = {}

    def required(kind: str, group: Any) -> tuple[_Term, ...]:
        try:
            return tuple(_term(pod, t) for t in (group.requiredDuringSchedulingIgnoredDuringExecution or ()))
        except ValueError as err:
            errors[kind] = str(err)
            return ()

    def preferred(kind: str, group: Any) -> tuple[tuple[int, _Term], ...]:
        try:
            return tuple(
                (t.weight, _term(pod, t.podAffinityTerm))
                for t in (group.preferredDuringSchedulingIgnoredDuringExecution or ())
            )
        except ValueError as err:
            errors[kind] = str(err)
            return ()

    if positive is None and negative is None:
        return _PodTerms((), (), (), (), errors)
    return _PodTerms(
        required(_REQUIRED_AFFINITY, positive) if positive is not None else (),
        required(_REQUIRED_ANTI_AFFINITY, negative) if negative is not None else (),
        preferred(_PREFERRED_AFFINITY, positive) if positive is not None else (),
        preferred(_PREFERRED_ANTI_AFFINITY, negative) if negative is not None else (),
        errors,
    )


# -- per-domain numbers --------------------------------------------------------------------------------


class _Index:
    """Ids shared by one plugin's memo columns and states: per topology key its domains (label
    values), the existing pods' terms, and multisets of terms ("signatures", 0 for none)."""

    def __init__(self) -> None:
        self.token = object()  # names the memo columns holding these ids
        self.domains: dict[str, dict[str, int]] = {}
        self.term_ids: dict[Hashable, int] = {}
        self.terms: list[_Term] = []
        self.signature_ids: dict[Hashable, int] = {(): 0}
        self.signatures: list[tuple[Any, ...]] = [()]

    def domain_id(self, key: str, value: str) -> int:
        ids = self.domains.setdefault(key, {})
        return ids.setdefault(value, len(ids))

    def find(self, key: str, value: str) -> int | None:
        ids = self.domains.get(key)
        return ids.get(value) if ids is not None else None

    def size(self, key: str) -> int:
        ids = self.domains.get(key)
        return len(ids) if ids is not None else 0

    def term_id(self, term: _Term) -> int:
        found = self.term_ids.get(term.key)
        if found is None:
            found = self.term_ids[term.key] = len(self.terms)
            self.terms.append(term)
        return found

    def signature_id(self, entries: tuple[Any, ...]) -> int:
        found = self.signature_ids.get(entries)
        if found is None:
            found = self.signature_ids[entries] = len(self.signatures)
            self.signatures.append(entries)
        return found

    def total(self) -> int:
        return sum(len(ids) for ids in self.domains.values()) + len(self.terms) + len(self.signatures)


class _Counts:
    """Numbers per topology domain: for each topology key an int64 array by domain id. Clones share
    arrays until one of them writes (copy on write); `nonzero` counts the non-zero entries, the
    entries of upstream's map."""

    __slots__ = ("_owned", "arrays", "index", "nonzero")

    def __init__(self, index: _Index) -> None:
        self.index = index
        self.arrays: dict[str, Int] = {}
        self._owned: set[str] = set()
        self.nonzero = 0

    def get(self, key: str, value: str) -> int:
        array = self.arrays.get(key)
        if array is None:
            return 0
        i = self.index.find(key, value)
        return int(array[i]) if i is not None and i < len(array) else 0

    def add(self, key: str, value: str, delta: int) -> None:
        i = self.index.domain_id(key, value)
        array = self._writable(key, i + 1)
        before = int(array[i])
        array[i] = before + delta
        self.nonzero += (before + delta != 0) - (before != 0)

    def add_rows(self, key: str, domains: Int, amounts: Int) -> None:
        """Add each row's amount to the row's domain (rows without the key have domain -1)."""
        valid = (domains >= 0) & (amounts != 0)
        if not valid.any():
            return
        size = self.index.size(key)
        sums = np.bincount(domains[valid], weights=amounts[valid], minlength=size).astype(np.int64)
        array = self._writable(key, size)
        self.nonzero -= int(np.count_nonzero(array))
        array[: len(sums)] += sums
        self.nonzero += int(np.count_nonzero(array))

    def padded(self, key: str) -> Int:
        """The numbers by domain id for every id of the key, plus a 0 last (read by domain -1)."""
        size = self.index.size(key)
        out = np.zeros(size + 1, dtype=np.int64)
        array = self.arrays.get(key)
        if array is not None:
            n = min(size, len(array))
            out[:n] = array[:n]
        return out

    def _writable(self, key: str, size: int) -> Int:
        array = self.arrays.get(key)
        if array is None:
            array = np.zeros(max(size, self.index.size(key)), dtype=np.int64)
        elif len(array) < size:
            array = np.concatenate((array, np.zeros(max(size, 2 * len(array)) - len(array), dtype=np.int64)))
        elif key not in self._owned:
            array = array.copy()
        self.arrays[key] = array
        self._owned.add(key)
        return array

    def clone(self) -> _Counts:
        c = _Counts(self.index)
        c.arrays = dict(self.arrays)
        c.nonzero = self.nonzero
        return c


def _bump(counts: _Counts, labels: Mapping[str, str], key: str, delta: int) -> bool:
    """Add `delta` to the node's domain for `key`; False when the node has no such label."""
    value = labels.get(key)
    if value is None:
        return False
    counts.add(key, value, delta)
    return True


@dataclass
class _PreFilterState:
    index: _Index
    pod: Any
    namespace_labels: Mapping[str, str] | None
    affinity_terms: tuple[_Term, ...]  # the pod's required terms, namespaceSelector resolved
    anti_affinity_terms: tuple[_Term, ...]
    matches_own_affinity: bool
    existing: _Counts  # existing pods' required anti-affinity terms matching the pod
    affinity: _Counts  # pods matching every required affinity term of the pod (once per term)
    anti_affinity: _Counts  # pods matching each required anti-affinity term of the pod

    def clone(self) -> _PreFilterState:
        return dataclasses.replace(
            self,
            existing=self.existing.clone(),
            affinity=self.affinity.clone(),
            anti_affinity=self.anti_affinity.clone(),
        )

    def satisfies_affinity(self, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for t in self.affinity_terms:
            value = labels.get(t.topology_key)
            if value is None:
                return False
            if self.affinity.get(t.topology_key, value) <= 0:
                pods_exist = False
        # The first pod of a group with affinity to itself may go anywhere its keys exist.
        return pods_exist or (not self.affinity.nonzero and self.matches_own_affinity)

    def satisfies_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        if not self.anti_affinity.nonzero:
            return True
        for t in self.anti_affinity_terms:
            value = labels.get(t.topology_key)
            if value is not None and self.anti_affinity.get(t.topology_key, value) > 0:
                return False
        return True

    def satisfies_existing(self, labels: Mapping[str, str]) -> bool:
        if not self.existing.nonzero:
            return True
        for key in self.existing.arrays:
            value = labels.get(key)
            if value is not None and self.existing.get(key, value) > 0:
                return False
        return True


@dataclass(frozen=True)
class _PreScoreState:
    index: _Index
    scores: _Counts  # per domain, what a node in it scores

    def clone(self) -> _PreScoreState:
        return self


def _not_found(template: str, key: str) -> str:
    return template.format(f'"{key}"') + " from cycleState: not found"


def _placed(pod: Any) -> bool:
    return bool(pod.spec.nodeName) or bool(pod.status is not None and pod.status.nominatedNodeName)


# -- the plugin -----------------------------------------------------------------------------------------


class InterPodAffinity:
    name: ClassVar[str] = NAME

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self._index = _Index()
        self._parsed: dict[int, tuple[Any, _PodTerms]] = {}
        self._hint_terms: dict[Hashable, _PodTerms] = {}

    def _terms(self, pod: Any) -> _PodTerms:
        """The pod object's parsed terms (kept while the object lives in the cluster's cache)."""
        found = self._parsed.get(id(pod))
        if found is not None and found[0] is pod:
            return found[1]
        if len(self._parsed) >= PARSED_CACHE_SIZE:
            self._parsed.clear()
        terms = _parse(pod)
        self._parsed[id(pod)] = (pod, terms)
        return terms

    def _namespaces(self) -> Mapping[str, Mapping[str, str]]:
        return getattr(self.handle, "namespaces", None) or {}

    # -- memo columns ---------------------------------------------------------------------------

    @staticmethod
    def _column(table: NodeTable, key: Hashable, one: Callable[[NodeInfo], int]) -> Int:
        nodes = table.nodes
        return table.memo(
            key, lambda rows: np.fromiter((one(nodes[r]) for r in rows.tolist()), np.int64, count=len(rows)), one
        )

    def _domain_column(self, table: NodeTable, index: _Index, key: str) -> Int:
        """Per row, the id of the node's value for label `key`, -1 without it."""

        def one(node: NodeInfo) -> int:
            value = _labels(node).get(key)
            return -1 if value is None else index.domain_id(key, value)

        return self._column(table, (_DOMAIN_MEMO, index.token, key), one)

    def _match_column(self, table: NodeTable, terms: tuple[_Term, ...]) -> Int:
        """Per row, the node's pods matching every term (terms of an incoming pod: namespaces resolved)."""

        def one(node: NodeInfo) -> int:
            return sum(1 for p in node.pods if all(t.matches(p.pod, None) for t in terms))

        return self._column(table, (_MATCH_MEMO, tuple(t.match_key for t in terms)), one)

    def _signature_column(self, table: NodeTable, index: _Index, scoring: bool) -> Int:
        """Per row, the signature id of the terms the node's pods carry: their required anti-affinity
        terms, or (`scoring`) their affinity terms as (kind, weight, term id)."""

        def anti(node: NodeInfo) -> int:
            if not node.pods_with_required_anti_affinity:
                return 0
            found = Counter(
                index.term_id(t)
                for p in node.pods_with_required_anti_affinity
                for t in self._terms(p.pod).required_anti_affinity
            )
            return index.signature_id(tuple(sorted(found.items())))

        def scored(node: NodeInfo) -> int:
            if not node.pods_with_affinity:
                return 0
            found: Counter[tuple[int, int, int]] = Counter()
            for p in node.pods_with_affinity:
                terms = self._terms(p.pod)
                found.update((0, 0, index.term_id(t)) for t in terms.required_affinity)
                found.update((1, w, index.term_id(t)) for w, t in terms.preferred_affinity)
                found.update((2, -w, index.term_id(t)) for w, t in terms.preferred_anti_affinity)
            return index.signature_id(tuple(sorted(found.items())))

        return self._column(table, (_SIGNATURE_MEMO, index.token, scoring), scored if scoring else anti)

    # -- PreFilter --------------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        terms = self._terms(pod.pod)
        if terms.errors:
            return None, Status.unresolvable(f"parsing pod: {terms.error}")
        snapshot = self.handle.snapshot
        table = snapshot.table
        required = terms.required_affinity or terms.required_anti_affinity
        if not required and not snapshot.have_pods_with_required_anti_affinity:
            return None, SKIP
        if self._index.total() > 8 * (len(table) + 1024):
            self._index = _Index()
        index = self._index
        namespaces = self._namespaces()
        namespace_labels = namespaces.get(pod.namespace)
        affinity = tuple(t.resolved(namespaces) for t in terms.required_affinity)
        anti_affinity = tuple(t.resolved(namespaces) for t in terms.required_anti_affinity)
        existing = self._existing_anti_affinity(pod.pod, namespace_labels, index)
        affinity_counts, anti_affinity_counts = _Counts(index), _Counts(index)
        if affinity or anti_affinity:
            aligned = nodes is snapshot.node_info_list and len(table) == len(nodes)
            if aligned and int(table.pod_count.sum()) > FEW_PODS:
                self._incoming_by_table(affinity, anti_affinity, table, affinity_counts, anti_affinity_counts)
            else:
                _incoming_by_pods(affinity, anti_affinity, nodes, affinity_counts, anti_affinity_counts)
        elif not existing.nonzero:
            return None, SKIP
        state.write(
            PRE_FILTER_STATE_KEY,
            _PreFilterState(
                index,
                pod.pod,
                namespace_labels,
                affinity,
                anti_affinity,
                _matches_all(affinity, pod.pod),
                existing,
                affinity_counts,
                anti_affinity_counts,
            ),
        )
        return None, None

    def _existing_anti_affinity(self, pod: Any, namespace_labels: Mapping[str, str] | None, index: _Index) -> _Counts:
        """Per domain, the existing pods' required anti-affinity terms that match the incoming pod."""
        snapshot = self.handle.snapshot
        nodes = snapshot.have_pods_with_required_anti_affinity
        counts = _Counts(index)
        if len(nodes) > FEW_NODES and len(snapshot.table) == len(snapshot.node_info_list):
            table = snapshot.table
            column = self._signature_column(table, index, scoring=False)
            by_key: dict[str, Int] = {}
            matched: dict[int, bool] = {}
            for signature in np.unique(column).tolist():
                for term_id, n in index.signatures[signature]:
                    term = index.terms[term_id]
                    hit = matched.get(term_id)
                    if hit is None:
                        hit = matched[term_id] = term.matches(pod, namespace_labels)
                    if hit:
                        if term.topology_key not in by_key:
                            by_key[term.topology_key] = np.zeros(len(index.signatures), dtype=np.int64)
                        by_key[term.topology_key][signature] += n
            for key, by_signature in by_key.items():
                counts.add_rows(key, self._domain_column(table, index, key), by_signature[column])
            return counts
        for node in nodes:
            labels = _labels(node)
            for p in node.pods_with_required_anti_affinity:
                for t in self._terms(p.pod).required_anti_affinity:
                    if t.matches(pod, namespace_labels):
                        _bump(counts, labels, t.topology_key, 1)
        return counts

    def _incoming_by_table(
        self,
        affinity: tuple[_Term, ...],
        anti_affinity: tuple[_Term, ...],
        table: NodeTable,
        affinity_counts: _Counts,
        anti_affinity_counts: _Counts,
    ) -> None:
        index = affinity_counts.index
        if affinity:
            matching = self._match_column(table, affinity)
            for t in affinity:
                affinity_counts.add_rows(t.topology_key, self._domain_column(table, index, t.topology_key), matching)
        for t in anti_affinity:
            domains = self._domain_column(table, index, t.topology_key)
            anti_affinity_counts.add_rows(t.topology_key, domains, self._match_column(table, (t,)))

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        return self._update(state, pod_to_add, node, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        return self._update(state, pod_to_remove, node, -1)

    def _update(self, state: CycleState, other: PodInfo, node: NodeInfo, delta: int) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status.error(_not_found("error reading {}", PRE_FILTER_STATE_KEY))
        labels = _labels(node)
        for t in self._terms(other.pod).required_anti_affinity:
            if t.matches(s.pod, s.namespace_labels):
                _bump(s.existing, labels, t.topology_key, delta)
        if _matches_all(s.affinity_terms, other.pod):
            for t in s.affinity_terms:
                _bump(s.affinity, labels, t.topology_key, delta)
        for t in s.anti_affinity_terms:
            if t.matches(other.pod, None):
                _bump(s.anti_affinity, labels, t.topology_key, delta)
        return None

    # -- Filter -------------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status.error(_not_found("error reading {}", PRE_FILTER_STATE_KEY))
        if node.node is None:
            return Status.error("node not found")
        labels = _labels(node)
        if not s.satisfies_affinity(labels):
            return Status.unresolvable(ERR_REASON_AFFINITY)
        if not s.satisfies_anti_affinity(labels):
            return Status.unschedulable(ERR_REASON_ANTI_AFFINITY)
        if not s.satisfies_existing(labels):
            return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return filter_per_node(self.filter, state, pod, table, rows)  # the same error on every node
        failed = self._verdicts(s, table, rows) != _PASSES
        return failed if failed.any() else None

    def failure_signatures(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int | None:
        """For rejected rows: which of Filter's three checks rejects each (it decides the status)."""
        s = state.get(PRE_FILTER_STATE_KEY)
        return self._verdicts(s, table, rows) if isinstance(s, _PreFilterState) else None

    def _verdicts(self, s: _PreFilterState, table: NodeTable, rows: Int) -> Int:
        """Per row, the first of Filter's checks the node fails (`_PASSES` when none)."""
        out = np.zeros(len(rows), dtype=np.int64)
        if s.affinity_terms:
            missing = np.zeros(len(rows), dtype=np.bool_)
            short = np.zeros(len(rows), dtype=np.bool_)
            for t in s.affinity_terms:
                domains = self._domain_column(table, s.index, t.topology_key)[rows]
                missing |= domains < 0
                short |= s.affinity.padded(t.topology_key)[domains] <= 0
            first_of_group = not s.affinity.nonzero and s.matches_own_affinity
            out[missing if first_of_group else missing | short] = _NO_AFFINITY
        for counts, keys, verdict in (
            (s.anti_affinity, [t.topology_key for t in s.anti_affinity_terms], _ANTI_AFFINITY),
            (s.existing, list(s.existing.arrays), _EXISTING_ANTI_AFFINITY),
        ):
            if not counts.nonzero:
                continue
            hit = np.zeros(len(rows), dtype=np.bool_)
            for key in keys:
                domains = self._domain_column(table, s.index, key)[rows]
                hit |= counts.padded(key)[domains] > 0
            out[hit & (out == _PASSES)] = verdict
        return out

    # -- PreScore / Score ---------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity = pod.pod.spec.affinity
        positive = affinity.podAffinity if affinity is not None else None
        negative = affinity.podAntiAffinity if affinity is not None else None
        has_preferred = bool(positive is not None and positive.preferredDuringSchedulingIgnoredDuringExecution) or bool(
            negative is not None and negative.preferredDuringSchedulingIgnoredDuringExecution
        )
        if self.args.ignore_preferred_terms_of_existing_pods and not has_preferred:
            return SKIP
        terms = self._terms(pod.pod)
        if terms.errors:
            return Status.error(f"failed to parse pod: {terms.error}")
        snapshot = self.handle.snapshot
        table = snapshot.table
        index = self._index
        namespaces = self._namespaces()
        preferred = [(w, t.resolved(namespaces)) for w, t in terms.preferred_affinity]
        preferred += [(-w, t.resolved(namespaces)) for w, t in terms.preferred_anti_affinity]
        aligned = len(table) == len(snapshot.node_info_list)
        scores = _Counts(index)
        touched = False  # some term matched a pod on a node with its topology key
        if preferred:
            if aligned and int(table.pod_count.sum()) > FEW_PODS:
                touched = self._preferred_by_table(preferred, table, scores)
            else:
                touched = _preferred_by_pods(preferred, snapshot.node_info_list, scores)
        with_affinity = snapshot.have_pods_with_affinity
        if with_affinity:
            namespace_labels = namespaces.get(pod.namespace)
            if aligned and len(with_affinity) > FEW_NODES:
                touched |= self._existing_by_table(pod.pod, namespace_labels, table, scores)
            else:
                touched |= self._existing_by_pods(pod.pod, namespace_labels, with_affinity, scores)
        if not touched:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(index, scores))
        return None

    def _preferred_by_table(self, preferred: list[tuple[int, _Term]], table: NodeTable, scores: _Counts) -> bool:
        """Add the incoming pod's preferred terms matched by existing pods; whether any matched."""
        touched = False
        for weight, t in preferred:
            matching = self._match_column(table, (t,))
            domains = self._domain_column(table, scores.index, t.topology_key)
            if ((matching > 0) & (domains >= 0)).any():
                touched = True
                scores.add_rows(t.topology_key, domains, matching * weight)
        return touched

    def _existing_by_table(
        self, pod: Any, namespace_labels: Mapping[str, str] | None, table: NodeTable, scores: _Counts
    ) -> bool:
        """Add existing pods' affinity terms the incoming pod matches; whether any matched."""
        index = scores.index
        column = self._signature_column(table, index, scoring=True)
        by_key: dict[str, tuple[Int, Bool]] = {}
        matched: dict[int, bool] = {}
        hard = self.args.hard_pod_affinity_weight
        for signature in np.unique(column).tolist():
            for (kind, weight, term_id), n in index.signatures[signature]:
                if kind == 0:
                    if hard <= 0:
                        continue
                    weight = hard
                term = index.terms[term_id]
                hit = matched.get(term_id)
                if hit is None:
                    hit = matched[term_id] = term.matches(pod, namespace_labels)
                if hit:
                    if term.topology_key not in by_key:
                        size = len(index.signatures)
                        by_key[term.topology_key] = (np.zeros(size, np.int64), np.zeros(size, np.bool_))
                    amounts, seen = by_key[term.topology_key]
                    amounts[signature] += weight * n
                    seen[signature] = True
        touched = False
        for key, (amounts, seen) in by_key.items():
            domains = self._domain_column(table, index, key)
            if (seen[column] & (domains >= 0)).any():
                touched = True
                scores.add_rows(key, domains, amounts[column])
        return touched

    def _existing_by_pods(
        self, pod: Any, namespace_labels: Mapping[str, str] | None, nodes: Sequence[NodeInfo], scores: _Counts
    ) -> bool:
        hard = self.args.hard_pod_affinity_weight
        touched = False
        for node in nodes:
            labels = _labels(node)
            if not labels:
                continue
            for p in node.pods_with_affinity:
                terms = self._terms(p.pod)
                weighted = [*terms.preferred_affinity, *((-w, t) for w, t in terms.preferred_anti_affinity)]
                if hard > 0:
                    weighted += [(hard, t) for t in terms.required_affinity]
                for weight, t in weighted:
                    if t.matches(pod, namespace_labels) and _bump(scores, labels, t.topology_key, weight):
                        touched = True
        return touched

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            raise StatusError(Status.error(_not_found("failed to read {}", PRE_SCORE_STATE_KEY)))
        labels = _labels(node)
        return sum(s.scores.get(key, labels[key]) for key in s.scores.arrays if key in labels)

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return score_per_node(self.score, state, pod, table, rows)  # raises the per-node error
        out = np.zeros(len(rows), dtype=np.int64)
        for key in s.scores.arrays:
            domains = self._domain_column(table, s.index, key)[rows]
            out += s.scores.padded(key)[domains]
        return out

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        if not isinstance(state.get(PRE_SCORE_STATE_KEY), _PreScoreState):
            return Status.error(_not_found("failed to read {}", PRE_SCORE_STATE_KEY))
        if not scores:
            return None
        low = min(scores)
        spread = max(scores) - low
        for i, value in enumerate(scores):
            scores[i] = int(MAX_NODE_SCORE * (float(value - low) / float(spread))) if spread > 0 else 0
        return None

    def normalize_score_batch(self, state: CycleState, pod: PodInfo, scores: Int) -> Int:
        if not len(scores):
            return scores
        low = int(scores.min())
        spread = int(scores.max()) - low
        if spread <= 0:
            return np.zeros(len(scores), dtype=np.int64)
        out: Int = (MAX_NODE_SCORE * ((scores - low).astype(np.float64) / float(spread))).astype(np.int64)
        return out

    # -- QueueingHints ------------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                hint=self._after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), hint=self._after_node_change
            ),
        ]

    def hint_key(self, pod: Any) -> Hashable:
        """The pod's namespace, labels and required terms: all the hints read of the pod."""
        affinity = pod.spec.affinity
        positive = affinity.podAffinity if affinity is not None else None
        negative = affinity.podAntiAffinity if affinity is not None else None
        return (
            _namespace(pod),
            tuple(sorted((pod.metadata.labels or _NO_LABELS).items())),
            msgspec.json.encode(positive.requiredDuringSchedulingIgnoredDuringExecution) if positive else None,
            msgspec.json.encode(negative.requiredDuringSchedulingIgnoredDuringExecution) if negative else None,
        )

    def _queued_terms(self, pod: Any) -> _PodTerms:
        """The queued pod's terms as the hints read them; a ValueError (Queue) if some do not parse."""
        key = self.hint_key(pod)
        terms = self._hint_terms.get(key)
        if terms is None:
            if len(self._hint_terms) >= HINT_CACHE_SIZE:
                self._hint_terms.clear()
            terms = self._hint_terms[key] = _parse(pod)
        if _REQUIRED_AFFINITY in terms.errors or _REQUIRED_ANTI_AFFINITY in terms.errors:
            raise ValueError(terms.error)
        return terms

    def _after_pod_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        if (
            old is not None
            and new is not None
            and new.metadata.uid == pod.metadata.uid
            and (old.metadata.labels or _NO_LABELS) != (new.metadata.labels or _NO_LABELS)
        ):
            return QueueingHint.QUEUE  # the pod's own labels decide its self-affinity and others' anti-affinity
        old = old if old is not None and _placed(old) else None
        new = new if new is not None and _placed(new) else None
        if old is None and new is None:
            return QueueingHint.QUEUE_SKIP
        terms = self._queued_terms(pod)
        affinity, anti_affinity = terms.required_affinity, terms.required_anti_affinity
        if old is not None and new is not None:
            if not _matches_all(affinity, old) and _matches_all(affinity, new):
                return QueueingHint.QUEUE
            if _matches_all(anti_affinity, old) and not _matches_all(anti_affinity, new):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new is not None:
            return QueueingHint.QUEUE if _matches_all(affinity, new) else QueueingHint.QUEUE_SKIP
        if _matches_all(anti_affinity, old):
            return QueueingHint.QUEUE
        deleted = self._terms(old)
        if _REQUIRED_ANTI_AFFINITY in deleted.errors:
            raise ValueError(deleted.errors[_REQUIRED_ANTI_AFFINITY])
        return QueueingHint.QUEUE if _matches_all(deleted.required_anti_affinity, pod) else QueueingHint.QUEUE_SKIP

    def _after_node_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        terms = self._queued_terms(pod)
        new_labels = new.metadata.labels or _NO_LABELS
        old_labels = (old.metadata.labels or _NO_LABELS) if old is not None else None
        for t in terms.required_affinity:
            value = new_labels.get(t.topology_key)
            if value is None:
                continue
            if old_labels is None or old_labels.get(t.topology_key) != value:
                return QueueingHint.QUEUE  # a new node in some domain, or a node moved into another one
        for t in terms.required_anti_affinity:
            if old_labels is None:
                return QueueingHint.QUEUE  # a node without the key always passes; one with it might
            before = old_labels.get(t.topology_key)
            if before is not None and new_labels.get(t.topology_key) != before:
                return QueueingHint.QUEUE  # the node left its domain
        return QueueingHint.QUEUE_SKIP


def _incoming_by_pods(
    affinity: tuple[_Term, ...],
    anti_affinity: tuple[_Term, ...],
    nodes: Sequence[NodeInfo],
    affinity_counts: _Counts,
    anti_affinity_counts: _Counts,
) -> None:
    for node in nodes:
        labels = _labels(node)
        for p in node.pods:
            if _matches_all(affinity, p.pod):
                for t in affinity:
                    _bump(affinity_counts, labels, t.topology_key, 1)
            for t in anti_affinity:
                if t.matches(p.pod, None):
                    _bump(anti_affinity_counts, labels, t.topology_key, 1)


def _preferred_by_pods(preferred: list[tuple[int, _Term]], nodes: Sequence[NodeInfo], scores: _Counts) -> bool:
    touched = False
    for node in nodes:
        labels = _labels(node)
        if not labels:
            continue
        for p in node.pods:
            for weight, t in preferred:
                if t.matches(p.pod, None) and _bump(scores, labels, t.topology_key, weight):
                    touched = True
    return touched


def new(args: Any, handle: Handle) -> InterPodAffinity:
    """Build the plugin from its (possibly absent) arguments, defaulted and validated."""
    decoded = decode_args(args, InterPodAffinityArgs)
    decoded.validate()
    return InterPodAffinity(decoded, handle)
