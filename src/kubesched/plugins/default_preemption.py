"""DefaultPreemption: when no node fits a pod, find a node where evicting lower-priority pods makes
room (PostFilter), and keep the pod out of the queue while its victims are being removed (PreEnqueue).

The plugin is the policy; `kubesched.plugin.preemption.Evaluator` (upstream's preemption
Evaluator) runs the dry run, picks the node and removes the victims with the plugin's handle:

- Eligibility: `preemptionPolicy: Never`, or a lower-priority pod on the pod's nominated node still
  terminating because of an earlier preemption (unless that node is now unresolvable), ends it.
- How many candidates: a share of the potential nodes (`minCandidateNodesPercentage`, 10), at
  least `minCandidateNodesAbsolute` (100); the dry run starts at a random offset drawn from the
  handle's seeded random source (below 100 potential nodes every one is dry-run, so the offset only
  orders ties that the five criteria leave).
- Victims on a node: remove every lower-priority pod (PreFilter RemovePod extensions), check that
  the pod fits (Filter with nominated pods), then add the pods back from the most important down,
  the ones whose eviction would break a PodDisruptionBudget first, keeping each one the pod still
  fits with.

Failure returns Unschedulable with `preemption: <reason>`, which the framework joins to the other
PostFilter texts (`no new claims to deallocate, preemption: 0/3 nodes are available: 3 No
preemption victims found for incoming pod.`).

PreEnqueue gates a preempting pod with `waiting for the preemption for this pod to be finished`
until its last victim is gone or being deleted. It registers AssignedPod/Delete with a hint that
requeues a pod it gated once that pod's preemption is over.

Deviations: nodes are dry-run one at a time (upstream runs them in parallel and may try a few more
before it stops); remaining ties go to the first candidate in dry-run order (upstream: Go map
order); victims of equal priority and start time keep the node's pod order; the preemptor is not
re-read from the informer; extenders are not modelled, so `no candidate node for preemption` never
occurs. With SchedulerAsyncPreemption off (`handle.features`) the Evaluator's synchronous mode
holds the scheduler until the victims are removed; the nomination is recorded before that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import msgspec
from lightkube.models import core_v1 as m

from kubesched.api.errors import FieldError
from kubesched.api.objects import meta_of
from kubesched.api.priority import PREEMPT_NEVER, preemption_policy
from kubesched.plugin import (
    ASSIGNED_POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EnqueueExtensions,
    Handle,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    PostFilterPlugin,
    PostFilterResult,
    PreEnqueuePlugin,
    QueueingHint,
    Status,
    decode_args,
)
from kubesched.plugin.preemption import (
    Budget,
    Evaluator,
    importance,
    split_by_pdb,
    terminating_by_preemption,
)
from kubesched.plugins.resource_scoring import child, raise_if_any

NAME = "DefaultPreemption"
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = "No preemption victims found for incoming pod"
WAITING = "waiting for the preemption for this pod to be finished"


class DefaultPreemptionArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """DefaultPreemptionArgs (kubescheduler.config.k8s.io/v1), with upstream's defaults 10 and 100."""

    min_candidate_nodes_percentage: int | None = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int | None = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE
    kind: str = ""
    api_version: str = ""

    @property
    def percentage(self) -> int:
        value = self.min_candidate_nodes_percentage
        return DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE if value is None else value

    @property
    def absolute(self) -> int:
        value = self.min_candidate_nodes_absolute
        return DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE if value is None else value

    def validate(self, path: str = "") -> None:
        """Raise `ArgsError` (a ValueError) listing every invalid field, as upstream words them."""
        percentage_path = child(path, "minCandidateNodesPercentage")
        absolute_path = child(path, "minCandidateNodesAbsolute")
        errors: list[FieldError] = []
        if not 0 <= self.percentage <= 100:
            errors.append(FieldError(percentage_path, self.percentage, "not in valid range [0, 100]"))
        if self.absolute < 0:
            errors.append(FieldError(absolute_path, self.absolute, "not in valid range [0, inf)"))
        if self.percentage == 0 and self.absolute == 0:
            both = "cannot be zero at the same time as "
            errors.append(FieldError(percentage_path, 0, both + "minCandidateNodesAbsolute"))
            errors.append(FieldError(absolute_path, 0, both + "minCandidateNodesPercentage"))
        raise_if_any(errors)


Args = DefaultPreemptionArgs


class DefaultPreemption(PreEnqueuePlugin, PostFilterPlugin, EnqueueExtensions):
    name: ClassVar[str] = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.evaluator = Evaluator(NAME, handle, self)

    # -- PostFilter -------------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        result, status = self.evaluator.preempt(state, pod, statuses)
        if status is not None and status.message:
            status = Status(status.code, f"preemption: {status.message}")
        return result, status

    # -- the policy the evaluator asks ------------------------------------------------------------

    def ineligible(self, state: CycleState, pod: PodInfo, statuses: NodeToStatus) -> str:
        """Why the pod may not preempt now ("" when it may)."""
        if preemption_policy(pod.pod) == PREEMPT_NEVER:
            return NOT_ELIGIBLE_NEVER
        nominated = (pod.pod.status.nominatedNodeName if pod.pod.status else None) or ""
        if not nominated or statuses.get(nominated).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return ""
        node = self.handle.snapshot.get(nominated)
        if node is not None and any(p.priority < pod.priority and terminating_by_preemption(p.pod) for p in node.pods):
            return NOT_ELIGIBLE_TERMINATING
        return ""

    def num_candidates(self, num_nodes: int) -> int:
        """How many candidates the dry run looks for: a share of the nodes, at least the absolute minimum."""
        wanted = max(num_nodes * self.args.percentage // 100, self.args.absolute)
        return min(wanted, num_nodes)

    def offset_and_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.handle.rng.randrange(num_nodes), self.num_candidates(num_nodes)

    def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[Budget]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The fewest lower-priority pods to evict from `node` (mutated) for the pod to fit, most
        important first, and how many of them break a PDB; or why the node cannot be a candidate."""
        handle = self.handle
        potential = [p for p in node.pods if p.priority < pod.priority]
        for victim in potential:
            if (status := self._remove(state, pod, victim, node)) is not None:
                return [], 0, status
        if not potential:
            return [], 0, Status.unresolvable(NO_VICTIMS)
        if (status := handle.run_filter_plugins_with_nominated_pods(state, pod, node)) is not None:
            return [], 0, status
        key = importance(handle.clock.now())
        potential.sort(key=key)
        violating, others = split_by_pdb(potential, pdbs)
        victims: list[PodInfo] = []
        violations = 0
        for group in (violating, others):
            for victim in group:
                node.add_pod(victim)
                if (status := handle.run_pre_filter_extension_add_pod(state, pod, victim, node)) is not None:
                    return [], 0, status
                if handle.run_filter_plugins_with_nominated_pods(state, pod, node) is None:
                    continue  # reprieved
                if (status := self._remove(state, pod, victim, node)) is not None:
                    return [], 0, status
                victims.append(victim)
                violations += group is violating
        if violating and others:
            victims.sort(key=key)
        return victims, violations, None

    def _remove(self, state: CycleState, pod: PodInfo, victim: PodInfo, node: NodeInfo) -> Status | None:
        node.remove_pod(victim.uid)
        return self.handle.run_pre_filter_extension_remove_pod(state, pod, victim, node)

    # -- the PreEnqueue gate ----------------------------------------------------------------------

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if self.evaluator.any_preempting and self.evaluator.is_preempting(pod.uid):
            self.evaluator.hold(pod.uid)
            return Status.unresolvable(WAITING)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), hint=self._after_victim_deletion)]

    def _after_victim_deletion(self, pod: m.Pod, old: object, new: object) -> QueueingHint:
        """A pod held by this plugin's gate goes back once its preemption is over (its last victim
        gone or going); while victims remain, deletions leave it where it is."""
        return QueueingHint.QUEUE_SKIP if self.evaluator.is_preempting(meta_of(pod).uid or "") else QueueingHint.QUEUE


def new(args: object, handle: Handle) -> DefaultPreemption:
    """Build the plugin from its (possibly absent) arguments, validated."""
    decoded = decode_args(args, DefaultPreemptionArgs)
    decoded.validate()
    return DefaultPreemption(decoded, handle)
