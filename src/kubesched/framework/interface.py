"""The scheduling framework's extension points, one small protocol each.

A plugin is an object with a `name` and the methods of the extension points it implements; the
framework finds those methods by name, as Go finds interfaces by type assertion. Methods return
`None` for Success and a `Status` otherwise. Plugins receive the pod as a `PodInfo` (the API object
is `pod_info.pod`, with requests and affinity already parsed) and nodes as `NodeInfo`.

Order within one attempt: PreFilter → Filter (every node) → PostFilter (only when no node fits)
→ PreScore → Score → NormalizeScore → Reserve → Permit; then, in the binding cycle: PreBind →
Bind → PostBind. Unreserve runs, in reverse order, for every Reserve plugin after any failure
that follows Reserve.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.framework.queued import QueuedPodInfo

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_PERMIT_TIMEOUT = 15 * 60.0  # seconds; longer Permit waits are clamped to this


@runtime_checkable
class Plugin(Protocol):
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


class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether `a` should be popped before `b`. A plugin may also define
        `sort_key(qpi)`, a key ordering pods exactly as `less` does; the queue then compares keys."""
        ...


class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Whether the pod may enter activeQ at all; any non-success keeps it gated."""
        ...


class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable, each with an
        optional QueueingHint function `hint(pod, old, new)` (the queued Pod object; the changed
        object before and after, None on add or delete) returning Queue or QueueSkip. No function
        means always Queue; a function that raises counts as Queue.

        A plugin may also define `hint_key(pod) -> Hashable`: a key such that every hint function
        of the plugin gives the same answer for two pods with the same key, for any event that is
        not about one of those two pods. The queue then asks once per key and event instead of
        once per pod (and per pod for an event about one of them)."""
        ...


class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Compute per-pod state for Filter. Skip: this plugin's Filter does not run this cycle.
        UnschedulableAndUnresolvable: no node can fit. A PreFilterResult narrows the candidate nodes."""
        ...


class PreFilterExtensions(Protocol):
    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        """Update the PreFilter state as if `pod_to_add` ran on `node` (nominated pods, preemption)."""
        ...

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        """Update the PreFilter state as if `pod_to_remove` were gone from `node`."""
        ...


class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """Whether the pod fits the node. Unschedulable: preemption might help;
        UnschedulableAndUnresolvable: it cannot."""
        ...


class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Called only when no node fits: try to make the pod schedulable later (preemption)."""
        ...


class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        """Prepare for Score over the feasible nodes. Skip: this plugin's Score does not run."""
        ...


class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """A score for the node (raise `StatusError` on failure); NormalizeScore may rescale it."""
        ...


class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        """Rescale the scores of all scored nodes in place to [0, 100]."""
        ...


class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Claim plugin-managed resources for the pod on the chosen node."""
        ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Release what Reserve claimed; idempotent, and called even if Reserve never ran."""
        ...


class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        """Allow, reject, or Wait (with a timeout in seconds) before the pod may be bound."""
        ...


class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Work that must finish before binding (e.g. provisioning); runs in the binding cycle."""
        ...


class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Bind the pod. Skip: not this plugin's pod, the next binder tries."""
        ...


class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Informational: the pod was bound."""
        ...


class Handle(Protocol):
    """What a plugin may use from its scheduler: the current snapshot, the cluster, the clock."""

    @property
    def snapshot(self) -> Any: ...

    @property
    def cluster(self) -> Any: ...

    @property
    def clock(self) -> Any: ...

    @property
    def namespaces(self) -> Mapping[str, Mapping[str, str]]:
        """The labels of each namespace the scheduler has seen (for namespaceSelector)."""
        ...
