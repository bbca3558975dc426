"""The scheduling framework's extension points: one small protocol each, with its contract.

A plugin is a class with a `name` that **declares** the points it implements by subclassing their
protocols (`class NodeName(FilterBatchPlugin, EnqueueExtensions)`), and implements their methods.
When a profile is built, `framework.conformance` checks every plugin against what it declares: each
declared method implemented (not inherited from the protocol), with the protocol's parameters, and
async exactly where the protocol is; a public method whose name is a near miss of a protocol method
(`pre_filer`) is refused. A plugin enabled at a point it does not declare is refused too; through
`multiPoint` it is enrolled at exactly the points it declares, so a helper that happens to be
called `score` never makes a plugin a Score plugin.

Methods return `None` (or a Success status) for Success and a `Status` otherwise. Plugins get the
pod as a `PodInfo` (the API object is `pod_info.pod`, requests and affinity parsed) and nodes as
`NodeInfo`. A plugin that raises fails the attempt with an Error status naming it (the pod backs
off), as if it had returned `Status.error(...)`; the scheduler goes on.

Order within one attempt: PreFilter → Filter (every node) → PostFilter (only when no node fits)
→ PreScore → Score → NormalizeScore → Reserve → Permit; then, in the binding cycle: PreBind →
Bind → PostBind. Unreserve runs, in reverse order, for every Reserve plugin after any failure
that follows Reserve. Status codes: Success, Error, Unschedulable, UnschedulableAndUnresolvable,
Wait, Skip, Pending; each protocol says what each means at its point (upstream's
`staging/src/k8s.io/kube-scheduler/framework/interface.go`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from kubesched.cache import NodeInfo, PodInfo
from kubesched.cache.table import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.framework.queued import QueuedPodInfo

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_PERMIT_TIMEOUT = 15 * 60.0  # seconds; longer Permit waits are clamped to this

Rows = npt.NDArray[np.int64]  # NodeTable row indices
Mask = npt.NDArray[np.bool_]  # per row: True where the node fails the plugin
Scores = npt.NDArray[np.int64]  # per row: a score


class ExtensionPoint(StrEnum):
    """The extension points, by their KubeSchedulerConfiguration names."""

    PRE_ENQUEUE = "preEnqueue"
    QUEUE_SORT = "queueSort"
    PRE_FILTER = "preFilter"
    FILTER = "filter"
    POST_FILTER = "postFilter"
    PRE_SCORE = "preScore"
    SCORE = "score"
    RESERVE = "reserve"
    PERMIT = "permit"
    PRE_BIND = "preBind"
    BIND = "bind"
    POST_BIND = "postBind"


MULTI_POINT = "multiPoint"
# Points whose plugins can reject a pod, and so are asked which events may requeue it.
REJECTING_POINTS = (
    ExtensionPoint.PRE_ENQUEUE,
    ExtensionPoint.PRE_FILTER,
    ExtensionPoint.FILTER,
    ExtensionPoint.RESERVE,
    ExtensionPoint.PERMIT,
)


class Plugin(Protocol):
    """Every plugin: a unique name, the one configurations use."""

    name: ClassVar[str]


@dataclass
class PreFilterResult:
    """Node names a PreFilter plugin says are the only candidates (None: all nodes)."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return PreFilterResult(None if self.all_nodes() else set(self.node_names or ()))
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult((self.node_names or set()) & (other.node_names or set()))


@dataclass
class PostFilterResult:
    """What a PostFilter plugin achieved: a node nominated for the pod, or nothing (`mode="noop"`)."""

    nominated_node_name: str = ""
    mode: str = "override"  # "override": set/clear the nomination; "noop": leave it as it is


@dataclass
class NodeToStatus:
    """The Filter verdict per node; nodes without an entry have `absent` (default: unresolvable, no reason)."""

    statuses: dict[str, Status] = field(default_factory=dict)
    absent: Status = field(default_factory=lambda: Status.unresolvable())

    def get(self, name: str) -> Status:
        return self.statuses.get(name, self.absent)

    def set(self, name: str, status: Status) -> None:
        self.statuses[name] = status

    def __len__(self) -> int:
        return len(self.statuses)


# -- the queue's points -------------------------------------------------------------------------


class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Whether the pod may enter activeQ at all. Success lets it in; any other code
        (Unschedulable, UnschedulableAndUnresolvable, Error alike) keeps it gated, with no event and
        no condition written, until an event this plugin registered lets it try again."""
        ...


class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether `a` should be popped before `b`. Exactly one per profile, the same in all."""
        ...


class QueueSortKey(QueueSortPlugin, Protocol):
    def sort_key(self, qpi: QueuedPodInfo) -> Any:  # Any: whatever the plugin's keys are, comparable among them
        """A key ordering pods exactly as `less` does; the queue then compares keys."""
        ...


class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable, each with an
        optional QueueingHint function `hint(pod, old, new)` (the queued Pod object; the changed
        object before and after, None on add or delete) returning Queue or QueueSkip. No function
        means always Queue; a function that raises counts as Queue. A rejecting plugin that does
        not declare this protocol is requeued by every event."""
        ...


class HintKeys(EnqueueExtensions, Protocol):
    def hint_key(self, pod: Any) -> Hashable:  # Any: the queued Pod object, as hint functions take it
        """A key such that every hint function of the plugin gives the same answer for two pods
        with the same key, for any event that is not about one of those two pods. The queue then
        asks once per key and event instead of once per pod."""
        ...


# -- the scheduling cycle ---------------------------------------------------------------------------


class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Per-pod state for Filter. Skip: this plugin's Filter (and its AddPod/RemovePod) does not
        run this cycle. UnschedulableAndUnresolvable: no node can fit; the attempt ends here.
        Unschedulable: remembered, and the other PreFilter plugins still run (preemption needs
        their state). Error, Wait or Pending: the attempt fails with an error. A PreFilterResult
        narrows the candidate nodes; results are intersected across plugins."""
        ...


class PreFilterExtensions(PreFilterPlugin, Protocol):
    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        """Update the PreFilter state as if `pod_to_add` ran on `node` (nominated pods, preemption).
        Any non-success is an error."""
        ...

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        """Update the PreFilter state as if `pod_to_remove` were gone from `node`."""
        ...


class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """Whether the pod fits the node; the first plugin that does not pass decides the node.
        Unschedulable: preemption might help; UnschedulableAndUnresolvable: it cannot; Pending: a
        rejection whose requeue skips backoff. Error (or any other code) fails the whole attempt."""
        ...


class FilterBatchPlugin(FilterPlugin, Protocol):
    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> Mask | None:
        """`filter` for many nodes at once, over the NodeTable's columns: per row, True where the
        node fails (None: every row passes). It must agree with `filter` node for node; the
        framework uses it when every Filter plugin of the cycle has one, and asks `filter` for the
        status of each failing node."""
        ...


class FailureSignatures(FilterBatchPlugin, Protocol):
    def failure_signatures(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> Rows | None:
        """Per failing row, a number such that rows with equal numbers get equal Filter statuses;
        the framework then asks `filter` once per signature. None: ask per row."""
        ...


class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Called only when no node fits: make the pod schedulable later (preemption). Success
        ends PostFilter with its result; Unschedulable collects its reasons and tries the next
        plugin; UnschedulableAndUnresolvable stops; Error fails the attempt. Whatever it returns,
        this attempt ends unschedulable; a nominated node in the result is written to the pod."""
        ...


class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        """Prepare for Score over the feasible nodes. Skip: this plugin's Score does not run this
        cycle; any other non-success is an error."""
        ...


class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """A score for a feasible node (raise `StatusError` to fail the attempt with its status)."""
        ...


class ScoreBatchPlugin(ScorePlugin, Protocol):
    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> Scores:
        """`score` for many nodes at once; the same numbers, row for row."""
        ...


class ScoreExtensions(ScorePlugin, Protocol):
    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        """Rescale the scores of all scored nodes in place; afterwards every score must lie in
        [MIN_NODE_SCORE, MAX_NODE_SCORE] or the attempt fails. Non-success is an error."""
        ...


class NormalizeScoreBatch(ScoreExtensions, Protocol):
    def normalize_score_batch(self, state: CycleState, pod: PodInfo, scores: Scores) -> Scores:
        """`normalize_score` over an array, returning the rescaled array."""
        ...


class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Claim plugin-managed resources for the pod on the chosen node (already assumed in the
        cache). A rejection keeps its code (the attempt reads as a FitError over that one node);
        anything else is an error. Either way every Reserve plugin's Unreserve runs."""
        ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Release what Reserve claimed; idempotent, and called even if Reserve never ran."""
        ...


class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        """Success allows binding; a rejection fails the attempt (Unreserve runs); Wait holds the
        pod, assumed, until every waiting plugin allows it through the handle's waiting pods or
        the returned timeout (seconds, at most 15 minutes) rejects it. Other codes are errors."""
        ...


# -- the binding cycle ------------------------------------------------------------------------------


class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Work that must finish before binding (provisioning). Skip: nothing to do. A rejection or
        an error fails the binding: Unreserve runs and the pod is requeued."""
        ...


class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Bind the pod. Skip: not this plugin's pod, the next binder tries (all skipping is a
        failure). Success: done. Anything else fails the binding."""
        ...


class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Informational: the pod was bound."""
        ...


# Each point's protocol: what a plugin declares to be enrolled there.
POINT_PROTOCOLS: dict[ExtensionPoint, type[object]] = {
    ExtensionPoint.PRE_ENQUEUE: PreEnqueuePlugin,
    ExtensionPoint.QUEUE_SORT: QueueSortPlugin,
    ExtensionPoint.PRE_FILTER: PreFilterPlugin,
    ExtensionPoint.FILTER: FilterPlugin,
    ExtensionPoint.POST_FILTER: PostFilterPlugin,
    ExtensionPoint.PRE_SCORE: PreScorePlugin,
    ExtensionPoint.SCORE: ScorePlugin,
    ExtensionPoint.RESERVE: ReservePlugin,
    ExtensionPoint.PERMIT: PermitPlugin,
    ExtensionPoint.PRE_BIND: PreBindPlugin,
    ExtensionPoint.BIND: BindPlugin,
    ExtensionPoint.POST_BIND: PostBindPlugin,
}
# The protocols that add methods to a point (batch methods, extensions, queue hooks).
HOOK_PROTOCOLS: tuple[type[object], ...] = (
    QueueSortKey,
    EnqueueExtensions,
    HintKeys,
    PreFilterExtensions,
    FilterBatchPlugin,
    FailureSignatures,
    ScoreBatchPlugin,
    ScoreExtensions,
    NormalizeScoreBatch,
)
