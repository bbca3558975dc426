"""NodeAffinity: `spec.nodeSelector` and node affinity (required and preferred), plus the profile's
scheduler-enforced `addedAffinity`.

QueueingHint: a node added, or relabelled from not matching to matching, that satisfies both the
`addedAffinity` and the pod's required constraints. The hints depend on the pod only through its
nodeSelector and required node affinity (`hint_key`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
from lightkube.models import core_v1, meta_v1
from lightkube.models import core_v1 as m

from kubesched.api.errors import FieldError
from kubesched.api.selectors import (
    NodeSelectorMatcher,
    RequiredNodeAffinity,
    compile_node_selector,
    node_selector_map_matches,
)
from kubesched.plugin import (
    MAX_NODE_SCORE,
    NODE,
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    Status,
    StatusError,
    decode_args,
    default_normalize_score,
)
from kubesched.plugin.batch import (
    Bool,
    FilterBatchPlugin,
    HintKeys,
    Int,
    NormalizeScoreBatch,
    ScoreBatchPlugin,
    default_normalize_array,
    filter_memo,
    score_per_node,
)

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, Handle, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
PRE_SCORE_STATE_KEY = "PreScore" + NAME

_OBJECT_NAME_FIELD = "metadata.name"
_ADDED_REQUIRED = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
_ADDED_PREFERRED = "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"


class NodeAffinityArgs(msgspec.Struct, omit_defaults=True):
    """Arguments of NodeAffinity: `addedAffinity` applies to every pod of the profile, on top of
    the pod's own affinity (its required terms filter, its preferred terms score)."""

    addedAffinity: core_v1.NodeAffinity | None = None


# -- parsing ----------------------------------------------------------------------------------


def _aggregate(errors: list[FieldError]) -> ValueError:
    """One error as itself; several as one ValueError listing them in brackets (duplicates once)."""
    if len(errors) == 1:
        return errors[0]
    unique = list(dict.fromkeys(str(e) for e in errors))
    return ValueError(unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")


def _compile_term(term: core_v1.NodeSelectorTerm, path: str) -> NodeSelectorMatcher:
    """Compile one node selector term; a parse error is reported under `path` (the term's own path)."""
    try:
        return compile_node_selector(core_v1.NodeSelector(nodeSelectorTerms=[term]))
    except FieldError as err:
        rest = err.field.removeprefix("nodeSelectorTerms[0]")
        raise FieldError(path + rest, err.value, err.detail, kind=err.kind) from None


def _is_empty(term: core_v1.NodeSelectorTerm | None) -> bool:
    return term is None or (not term.matchExpressions and not term.matchFields)


def _preferred_errors(terms: Sequence[core_v1.PreferredSchedulingTerm], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, term in enumerate(terms):
        if not term.weight or _is_empty(term.preference):
            continue
        try:
            _compile_term(term.preference, f"{path}[{i}]")
        except FieldError as err:
            errors.append(err)
    return errors


def _required_errors(ns: core_v1.NodeSelector, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, term in enumerate(ns.nodeSelectorTerms or ()):
        if _is_empty(term):
            continue
        try:
            _compile_term(term, f"{path}.nodeSelectorTerms[{i}]")
        except FieldError as err:
            errors.append(err)
    return errors


class PreferredTerms:
    """Compiled preferred scheduling terms: a node's score is the sum of the weights of the terms
    it matches. Terms with weight 0 or no requirements are dropped, as upstream does."""

    __slots__ = ("_terms",)

    def __init__(self, terms: Sequence[tuple[int, NodeSelectorMatcher]]) -> None:
        self._terms = tuple(terms)

    @classmethod
    def compile(cls, terms: Sequence[core_v1.PreferredSchedulingTerm], *, path: str = "") -> PreferredTerms:
        """Compile the terms; a ValueError lists every term's parse error, named `path[i]...`."""
        errors = _preferred_errors(terms, path)
        if errors:
            raise _aggregate(errors)
        return cls(
            [
                (term.weight, compile_node_selector(core_v1.NodeSelector(nodeSelectorTerms=[term.preference])))
                for term in terms
                if term.weight and not _is_empty(term.preference)
            ]
        )

    def score(self, meta: meta_v1.ObjectMeta) -> int:
        """The summed weights of the terms a node with this metadata matches."""
        name = meta.name or ""
        labels = meta.labels
        return sum(weight for weight, matcher in self._terms if matcher.matches(name, labels))


def validate_args(args: NodeAffinityArgs) -> None:
    """Raise a ValueError naming the offending field(s) when `addedAffinity` does not parse."""
    affinity = args.addedAffinity
    if affinity is None:
        return
    errors: list[FieldError] = []
    if affinity.requiredDuringSchedulingIgnoredDuringExecution is not None:
        errors += _required_errors(affinity.requiredDuringSchedulingIgnoredDuringExecution, _ADDED_REQUIRED)
    if affinity.preferredDuringSchedulingIgnoredDuringExecution:
        errors += _preferred_errors(affinity.preferredDuringSchedulingIgnoredDuringExecution, _ADDED_PREFERRED)
    if errors:
        raise _aggregate(errors)


def _pod_preferred(spec: core_v1.PodSpec) -> PreferredTerms | None:
    """The pod's preferred terms, None when it has none; a parse error becomes an Error status."""
    affinity = spec.affinity
    node_affinity = affinity.nodeAffinity if affinity is not None else None
    terms = node_affinity.preferredDuringSchedulingIgnoredDuringExecution if node_affinity is not None else None
    if terms is None:
        return None
    try:
        return PreferredTerms.compile(terms)
    except ValueError as err:
        raise StatusError(Status.error(str(err))) from None


def _required_terms(spec: core_v1.PodSpec) -> core_v1.NodeSelector | None:
    """The pod's required node affinity, None when it has none."""
    affinity = spec.affinity
    node_affinity = affinity.nodeAffinity if affinity is not None else None
    return node_affinity.requiredDuringSchedulingIgnoredDuringExecution if node_affinity is not None else None


def _node_names_from_fields(required: core_v1.NodeSelector) -> set[str] | None:
    """The only node names the required terms can match through `metadata.name In` fields, or
    None when some term does not pin node names (the terms are ORed, so then any node may match)."""
    names: set[str] | None = None
    for term in required.nodeSelectorTerms or ():
        term_names: set[str] | None = None
        for req in term.matchFields or ():
            if req.key == _OBJECT_NAME_FIELD and req.operator == "In":
                values = set(req.values or ())
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names = term_names if names is None else names | term_names
    return names


class _HintConstraints:
    """A pod's required node constraints as the queueing hint checks them. `malformed`: some
    required affinity term does not parse; upstream then reports an error (Queue) instead of a
    mismatch whenever the nodeSelector matches but no term does."""

    __slots__ = ("affinity", "malformed", "node_selector")

    # Any: the queued pod as served (spec set), read without checks on the hints' path
    def __init__(self, pod: Any) -> None:
        self.affinity = RequiredNodeAffinity(pod)
        self.node_selector = pod.spec.nodeSelector
        required = _required_terms(pod.spec)
        try:
            compile_node_selector(required)
            self.malformed = False
        except FieldError:
            self.malformed = True

    # Any: the event's Node as served (metadata set), read without checks in the hint
    def matches(self, node: Any) -> bool:
        """Whether the node satisfies the constraints; raises ValueError where upstream errs."""
        name, labels = node.metadata.name or "", node.metadata.labels
        if self.affinity.matches(name, labels):
            return True
        if self.malformed and node_selector_map_matches(self.node_selector, labels):
            raise ValueError("the pod's required node affinity has terms that do not parse")
        return False


_HINT_CACHE_SIZE = 1024


@dataclass(frozen=True)
class _PreScoreState:
    preferred: PreferredTerms | None

    def clone(self) -> _PreScoreState:
        return self


# -- the plugin ---------------------------------------------------------------------------------


class NodeAffinity(PreFilterPlugin, FilterBatchPlugin, PreScorePlugin, ScoreBatchPlugin, NormalizeScoreBatch, HintKeys):
    name: ClassVar[str] = NAME

    def __init__(self, args: NodeAffinityArgs | None = None) -> None:
        args = args or NodeAffinityArgs()
        validate_args(args)
        added = args.addedAffinity
        required = added.requiredDuringSchedulingIgnoredDuringExecution if added is not None else None
        preferred = added.preferredDuringSchedulingIgnoredDuringExecution if added is not None else None
        self.added_required: NodeSelectorMatcher | None = (
            compile_node_selector(required) if required is not None else None
        )
        self.added_preferred: PreferredTerms | None = PreferredTerms.compile(preferred) if preferred else None
        self._hint_constraints: dict[Hashable, _HintConstraints] = {}

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        spec = pod.pod.spec
        required = _required_terms(spec)
        if required is None and self.added_required is None and spec.nodeSelector is None:
            return None, SKIP
        if required is None or not required.nodeSelectorTerms:
            return None, None
        names = _node_names_from_fields(required)
        if names is None:
            return None, None
        if not names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(names), None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.node is None:
            return Status.error("node not found")
        name = node.node.metadata.name or ""
        labels = node.node.metadata.labels
        if self.added_required is not None and not self.added_required.matches(name, labels):
            return Status.unresolvable(ERR_REASON_ENFORCED)
        if not pod.required_affinity.matches(name, labels):
            return Status.unresolvable(ERR_REASON_POD)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        # Every node passes when neither the profile nor the pod constrains nodes (an empty
        # nodeSelector matches any labels); otherwise the labels are matched node by node.
        if self.added_required is None and not pod.pod.spec.nodeSelector and _required_terms(pod.pod.spec) is None:
            return None
        # The verdict depends on the node's name and labels and on what `hint_key` names of the
        # pod: a memo column per distinct constraint, kept across cycles (pods of one template
        # share it), refreshed only for the nodes updated since.
        return filter_memo(self.filter, state, pod, table, rows, (NAME + "/filter", id(self), self.hint_key(pod.pod)))

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            preferred = _pod_preferred(pod.pod.spec)
        except StatusError as err:
            return err.status
        if preferred is None and self.added_preferred is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        if node.node is None:
            raise StatusError(Status.error("node not found"))
        meta = node.node.metadata
        total = self.added_preferred.score(meta) if self.added_preferred is not None else 0
        data = state.get(PRE_SCORE_STATE_KEY)
        preferred = data.preferred if isinstance(data, _PreScoreState) else _pod_preferred(pod.pod.spec)
        if preferred is not None:
            total += preferred.score(meta)
        return total

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        return score_per_node(self.score, state, pod, table, rows)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_score_batch(self, state: CycleState, pod: PodInfo, scores: Int) -> Int:
        return default_normalize_array(MAX_NODE_SCORE, False, scores)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # A new node, or new labels on a node, may match the pod's affinity.
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                hint=self._is_schedulable_after_node_change,
            )
        ]

    # Any: the queued pod as served (spec set), read without checks on the queue's per-pod path
    def hint_key(self, pod: Any) -> Hashable:
        """The pod's nodeSelector and required node affinity: all the hint reads of the pod."""
        required = _required_terms(pod.spec)
        return (
            tuple(sorted((pod.spec.nodeSelector or {}).items())),
            msgspec.json.encode(required) if required is not None else None,
        )

    def _constraints(self, pod: object) -> _HintConstraints:
        key = self.hint_key(pod)
        found = self._hint_constraints.get(key)
        if found is None:
            if len(self._hint_constraints) >= _HINT_CACHE_SIZE:
                self._hint_constraints.clear()
            found = self._hint_constraints[key] = _HintConstraints(pod)
        return found

    # Any: the event's Node as served (metadata set), read without checks in this hint
    def _is_schedulable_after_node_change(self, pod: m.Pod, old: m.Node | None, new: Any) -> QueueingHint:
        """Queue when the node satisfies `addedAffinity` and the pod's required constraints, and is
        new or did not satisfy the pod's constraints before."""
        if self.added_required is not None and not self.added_required.matches(
            new.metadata.name or "", new.metadata.labels
        ):
            return QueueingHint.QUEUE_SKIP
        constraints = self._constraints(pod)
        if not constraints.matches(new):
            return QueueingHint.QUEUE_SKIP
        if old is None or not constraints.matches(old):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def new(args: object, handle: Handle) -> NodeAffinity:
    """Build NodeAffinity; raises ValueError (naming the field) when `addedAffinity` does not parse."""
    return NodeAffinity(decode_args(args, NodeAffinityArgs))
