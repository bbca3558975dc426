"""DefaultPreemption: when no node fits a pod, find a node where evicting lower-priority pods makes
room (PostFilter), and keep the pod out of the queue while its victims are being removed (PreEnqueue).

PostFilter decides and records; it changes nothing in the cluster:

1. Eligibility: `preemptionPolicy: Never`, or a lower-priority pod on the pod's nominated node still
   terminating because of an earlier preemption (unless that node is now unresolvable), ends it.
2. Candidates: the nodes whose Filter status is exactly Unschedulable (a node without a status
   carries the absent status, unresolvable by default).
3. Dry run, node by node from a random offset, each on a clone of the node and of the cycle state:
   remove every lower-priority pod (PreFilter RemovePod extensions), check that the pod fits
   (Filter with nominated pods), then add the pods back from the most important down, the ones
   whose eviction would break a PodDisruptionBudget first, keeping each one the pod still fits
   with. It stops once it has `num_candidates` candidates, one of them without PDB violations.
4. `pick_one_node`: fewest PDB violations, lowest most-important victim, lowest sum of victim
   priorities, fewest victims, latest start among the most important victims, first in dry-run order.

Success returns `PostFilterResult(node)` and writes the `Decision` (preemptor, node, victims) to the
cycle state: `decision(state)`. Failure returns Unschedulable with `preemption: <reason>`, which the
framework joins to the other PostFilter texts (`no new claims to deallocate, preemption: 0/3 nodes
are available: 3 No preemption victims found for incoming pod.`).

What the scheduler must provide (the plugin is built with only its args and the handle):

- `attach(framework, run_filter)`, once per profile: the plugin's own framework (for Filter and the
  AddPod/RemovePod extensions) and the Filter-with-nominated-pods function (`filter_with_nominated`
  over the scheduler's nominator). Until it is attached, PostFilter returns Unschedulable without a
  reason: no preemption, and messages read as without the plugin.
- `handle.pdbs`: the policy/v1 PodDisruptionBudgets, as an informer keeps them (absent: none).
- `rng`: the random source of the dry run's start offset (seed 0 by default). Below 100 candidate
  nodes (the default `minCandidateNodesAbsolute`) every candidate node is dry-run, so the offset
  only orders ties that the five criteria leave.

Acting on a decision (upstream's asynchronous mode, KEP-4832) is `start(decision, actions)`, called
by the scheduler after PostFilter succeeded. Synchronously, it skips victims already being deleted
and, if any remain, marks the preemptor as preempting; it returns the coroutine to run as a task:
clear the nominations of lower-priority pods nominated to the node, preempt every victim but the
last concurrently, then the last one (unless one failed), then unmark the preemptor; on an API error
the preemptor is activated. `PreemptionActions` is the API side: per victim, preempt it in memory if
it waits at Permit (it fails with an Error), else patch `DisruptionTarget=True` (reason
`PreemptionByScheduler`) and delete it; then record the `Preempted` event (`preempted_message`).
The scheduler also applies the nomination (`PostFilterResult`) in its failure handler.

PreEnqueue gates a preempting pod with `waiting for the preemption for this pod to be finished`
until its last victim is gone or being deleted. It registers AssignedPod/Delete with a hint that
requeues a pod it gated once that pod's preemption is over.

Deviations: nodes are dry-run one at a time (upstream runs them in parallel and may try a few more
before it stops); remaining ties go to the first candidate in dry-run order (upstream: Go map
order); victims of equal priority and start time keep the node's pod order; the preemptor is not
re-read from the informer; extenders are not modelled, so `no candidate node for preemption` never
occurs; only the asynchronous mode exists (SchedulerAsyncPreemption is on by default).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from random import Random
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import msgspec

from kubesched.api.errors import FieldError
from kubesched.api.priority import PREEMPT_NEVER, preemption_policy
from kubesched.api.selectors import LabelSelectorMatcher, compile_label_selector
from kubesched.cluster.errors import ApiError
from kubesched.framework.events import ASSIGNED_POD, ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.framework.interface import NodeToStatus, PostFilterResult
from kubesched.framework.status import Code, Status
from kubesched.plugins.args import decode_args
from kubesched.plugins.resource_scoring import child, raise_if_any

if TYPE_CHECKING:
    from kubesched.cache import NodeInfo, PodInfo
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interface import Handle
    from kubesched.framework.runtime import Framework

NAME = "DefaultPreemption"
DECISION_KEY = NAME + "/decision"
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
WAITING = "waiting for the preemption for this pod to be finished"
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PRIORITY_SHIFT = 2**31  # MaxInt32 + 1: makes every priority non-negative in the sum criterion

FilterFn = Callable[["Framework", "CycleState", "PodInfo", "NodeInfo"], Status | None]


class Args(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """DefaultPreemptionArgs (kubescheduler.config.k8s.io/v1); unset fields take the defaults 10 and 100."""

    min_candidate_nodes_percentage: int | None = None
    min_candidate_nodes_absolute: int | None = None
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


@dataclass(frozen=True)
class Candidate:
    """A node where the pod fits once `victims` (most important first) are gone."""

    node: str
    victims: tuple[PodInfo, ...]
    num_pdb_violations: int = 0


@dataclass(frozen=True)
class Decision:
    """What a successful PostFilter chose, kept in the cycle state under DECISION_KEY."""

    preemptor: PodInfo
    candidate: Candidate
    considered: tuple[Candidate, ...] = ()  # every candidate the dry run found
    reason: str = ""  # the criterion that chose `candidate` among them

    def clone(self) -> Decision:
        return self


def decision(state: CycleState) -> Decision | None:
    """The preemption PostFilter decided in this cycle, if it succeeded."""
    found = state.get(DECISION_KEY)
    return found if isinstance(found, Decision) else None


def preempted_message(preemptor: PodInfo, node: str) -> str:
    """The note of the `Preempted` event recorded on each victim."""
    return f"Preempted by pod {preemptor.uid} on node {node}"


class PreemptionActions(Protocol):
    """The API side of acting on a decision, implemented by the scheduler. Methods raise ApiError."""

    def nominated_pods(self, node: str) -> Sequence[PodInfo]:
        """The pods nominated to `node` (the nominator's view)."""
        ...

    async def clear_nomination(self, pod: PodInfo) -> None:
        """Clear the pod's `status.nominatedNodeName`."""
        ...

    async def preempt(self, preemptor: PodInfo, victim: PodInfo, node: str) -> None:
        """Preempt a victim waiting at Permit in memory; otherwise patch its DisruptionTarget
        condition and delete it (NotFound meaning done). Then record the `Preempted` event."""
        ...

    def activate(self, pod: PodInfo) -> None:
        """Move the pod to activeQ (after a failed preemption, so that it does not wait for an event)."""
        ...

    def get_pod(self, namespace: str, name: str) -> Any | None:
        """The pod as the informer has it, None when it is gone."""
        ...


def _start_time(pod: PodInfo, now: float) -> float:
    """`status.startTime` in seconds; a pod that has not started counts as starting now."""
    status = pod.pod.status
    start = status.startTime if status is not None else None
    return now if start is None else start.timestamp()


def importance(now: float) -> Callable[[PodInfo], tuple[int, float]]:
    """A sort key putting the more important pod first: higher priority, then earlier start."""
    return lambda p: (-p.priority, _start_time(p, now))


def terminating_by_preemption(pod: Any) -> bool:
    """Being deleted, with the DisruptionTarget condition a scheduler preemption sets."""
    if pod.metadata.deletionTimestamp is None:
        return False
    for condition in (pod.status.conditions if pod.status else None) or ():
        if condition.type == DISRUPTION_TARGET:
            return bool(condition.status == "True" and condition.reason == PREEMPTION_BY_SCHEDULER)
    return False


@dataclass
class Budget:
    """One PodDisruptionBudget as preemption reads it."""

    namespace: str
    selector: LabelSelectorMatcher
    disruptions_allowed: int
    disrupted_pods: frozenset[str]


def budgets(pdbs: Sequence[Any]) -> list[Budget]:
    """The budgets that can match a pod: an invalid, missing or empty selector matches none."""
    out = []
    for pdb in pdbs:
        try:
            selector = compile_label_selector(pdb.spec.selector if pdb.spec else None)
        except FieldError:
            continue
        if selector.matches_nothing or not selector.requirements:
            continue
        status = pdb.status
        out.append(
            Budget(
                pdb.metadata.namespace or "default",
                selector,
                status.disruptionsAllowed if status else 0,
                frozenset((status.disruptedPods or {}) if status else ()),
            )
        )
    return out


def split_by_pdb(pods: Sequence[PodInfo], pdbs: Sequence[Budget]) -> tuple[list[PodInfo], list[PodInfo]]:
    """The pods whose eviction would exceed a budget's allowed disruptions (counted in the given
    order) and the others, both in the given order."""
    allowed = [b.disruptions_allowed for b in pdbs]
    violating: list[PodInfo] = []
    others: list[PodInfo] = []
    for pod in pods:
        labels = pod.pod.metadata.labels
        breaks = False
        for i, budget in enumerate(pdbs if labels else ()):
            if budget.namespace != pod.namespace or not budget.selector.matches(labels):
                continue
            if pod.name in budget.disrupted_pods:
                continue
            allowed[i] -= 1
            breaks = breaks or allowed[i] < 0
        (violating if breaks else others).append(pod)
    return violating, others


CRITERIA = (
    "fewest PodDisruptionBudget violations",
    "lowest most-important victim priority",
    "lowest sum of victim priorities",
    "fewest victims",
    "latest start of the most important victims",
)
FIRST_CANDIDATE = "first candidate in dry-run order"


def pick_one_node(candidates: Sequence[Candidate], now: float) -> Candidate:
    """The best candidate by upstream's criteria, each applied to the ties the previous one left."""
    return pick_with_reason(candidates, now)[0]


def pick_with_reason(candidates: Sequence[Candidate], now: float) -> tuple[Candidate, str]:
    """`pick_one_node`, and the criterion (of `CRITERIA`) that left it alone, or `FIRST_CANDIDATE`."""

    def earliest_top_start(c: Candidate) -> float:
        top = max(v.priority for v in c.victims)
        return min(_start_time(v, now) for v in c.victims if v.priority == top)

    scores: tuple[Callable[[Candidate], float], ...] = (
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + PRIORITY_SHIFT for v in c.victims),
        lambda c: -len(c.victims),
        earliest_top_start,
    )
    remaining = list(candidates)
    if len(remaining) == 1:
        return remaining[0], "the only candidate"
    for name, score in zip(CRITERIA, scores, strict=True):
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
        if len(remaining) == 1:
            return remaining[0], name
    return remaining[0], FIRST_CANDIDATE


def fit_error_message(num_nodes: int, statuses: dict[str, Status], absent: str) -> str:
    """`0/N nodes are available: <histogram>.` over the dry-run statuses, other nodes counting as `absent`."""
    counts: dict[str, int] = {}
    for status in statuses.values():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    if num_nodes > len(statuses):
        counts[absent] = counts.get(absent, 0) + num_nodes - len(statuses)
    parts = sorted(f"{n} {r}" for r, n in counts.items())
    return f"0/{num_nodes} nodes are available:" + (f" {', '.join(parts)}." if parts else "")


def _plain_filter(fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
    return fwk.run_filter(state, pod, node)


class DefaultPreemption:
    name: ClassVar[str] = NAME

    def __init__(self, args: Args, handle: Handle, rng: Random | None = None) -> None:
        self.args = args
        self.handle = handle
        self.rng = rng or Random(0)
        self.framework: Framework | None = None
        self._run_filter: FilterFn = _plain_filter
        self.attempts = 0  # PostFilter calls (scheduler_preemption_attempts_total)
        # Preemptors whose victims are being removed -> whether their last victim is still there
        # (None until the last victim's turn).
        self._preempting: dict[str, Callable[[], bool] | None] = {}

    def attach(self, framework: Framework, run_filter: FilterFn | None = None) -> None:
        """Give the plugin its profile's framework and the Filter-with-nominated-pods function."""
        self.framework = framework
        self._run_filter = run_filter or _plain_filter

    # -- PostFilter -------------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        self.attempts += 1
        if self.framework is None:
            return None, Status.unschedulable()
        result, status = self._preempt(self.framework, state, pod, statuses)
        if status is not None and status.message:
            status = Status(status.code, f"preemption: {status.message}")
        return result, status

    def _preempt(
        self, fwk: Framework, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        reason = self.ineligible(pod, statuses)
        if reason:
            return None, Status.unschedulable(reason)
        nodes = self.handle.snapshot.node_info_list
        if not nodes:
            return None, Status.error("no nodes available")
        potential = [n for n in nodes if statuses.get(n.name).code == Code.UNSCHEDULABLE]
        candidates: list[Candidate] = []
        node_statuses: dict[str, Status] = {}
        if potential:
            pdbs = budgets(getattr(self.handle, "pdbs", None) or ())
            offset = self.rng.randrange(len(potential))
            candidates, node_statuses, errors = self.dry_run(
                fwk, state, pod, potential, pdbs, offset, self.num_candidates(len(potential))
            )
            if errors and not candidates:
                return None, Status.error(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
        if not candidates:
            return PostFilterResult(""), Status.unschedulable(fit_error_message(len(nodes), node_statuses, NOT_HELPFUL))
        best, reason = pick_with_reason(candidates, self.handle.clock.now())
        state.write(DECISION_KEY, Decision(pod, best, tuple(candidates), reason))
        return PostFilterResult(best.node), None

    def ineligible(self, pod: PodInfo, statuses: NodeToStatus) -> str:
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

    def dry_run(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        pdbs: Sequence[Budget],
        offset: int,
        wanted: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Candidates (without PDB violations first), the status of each node that is not one, and errors."""
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        for i in range(len(nodes)):
            node = nodes[(offset + i) % len(nodes)]
            victims, violations, status = self.select_victims_on_node(fwk, state.clone(), pod, node.clone(), pdbs)
            if status is None and victims:
                group = violating if violations else clean
                if len(group) < wanted:
                    group.append(Candidate(node.name, tuple(victims), violations))
                if clean and len(clean) + len(violating) >= wanted:
                    break
                continue
            if status is None:
                status = Status.error(f'expected at least one victim pod on node "{node.name}"')
            if status.code == Code.ERROR:
                errors.append(status.message)
            statuses[node.name] = status
        return clean + violating, statuses, errors

    def select_victims_on_node(
        self, fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[Budget]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The fewest lower-priority pods to evict from `node` (mutated) for the pod to fit, most
        important first, and how many of them break a PDB; or why the node cannot be a candidate."""
        potential = [p for p in node.pods if p.priority < pod.priority]
        for victim in potential:
            if (status := self._remove(fwk, state, pod, victim, node)) is not None:
                return [], 0, status
        if not potential:
            return [], 0, Status.unresolvable(NO_VICTIMS)
        if (status := self._run_filter(fwk, state, pod, node)) is not None:
            return [], 0, status
        key = importance(self.handle.clock.now())
        potential.sort(key=key)
        violating, others = split_by_pdb(potential, pdbs)
        victims: list[PodInfo] = []
        violations = 0
        for group in (violating, others):
            for victim in group:
                node.add_pod(victim)
                if (status := fwk.run_add_pod(state, pod, victim, node)) is not None:
                    return [], 0, status
                if self._run_filter(fwk, state, pod, node) is None:
                    continue  # reprieved
                if (status := self._remove(fwk, state, pod, victim, node)) is not None:
                    return [], 0, status
                victims.append(victim)
                violations += group is violating
        if violating and others:
            victims.sort(key=key)
        return victims, violations, None

    @staticmethod
    def _remove(fwk: Framework, state: CycleState, pod: PodInfo, victim: PodInfo, node: NodeInfo) -> Status | None:
        node.remove_pod(victim.uid)
        return fwk.run_remove_pod(state, pod, victim, node)

    # -- acting and the PreEnqueue gate -----------------------------------------------------------

    def start(self, decision: Decision, actions: PreemptionActions) -> Coroutine[Any, Any, None] | None:
        """Mark the preemptor as preempting and return the coroutine that removes its victims
        (None when every victim is already being deleted)."""
        victims = [v for v in decision.candidate.victims if v.pod.metadata.deletionTimestamp is None]
        if not victims:
            return None
        self._preempting[decision.preemptor.uid] = None
        return self._preempt_victims(decision, victims, actions)

    async def _preempt_victims(self, decision: Decision, victims: list[PodInfo], actions: PreemptionActions) -> None:
        preemptor, node = decision.preemptor, decision.candidate.node
        failed = False
        try:
            for nominated in actions.nominated_pods(node):
                if nominated.priority < preemptor.priority:
                    try:
                        await actions.clear_nomination(nominated)
                    except ApiError:
                        failed = True
            *first, last = victims
            calls = (actions.preempt(preemptor, v, node) for v in first)
            results = await asyncio.gather(*calls, return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, ApiError):
                    raise result
            if any(isinstance(r, ApiError) for r in results):
                failed = True
            else:
                self._preempting[preemptor.uid] = lambda: _still_running(actions.get_pod(last.namespace, last.name))
                try:
                    await actions.preempt(preemptor, last, node)
                except ApiError:
                    failed = True
        finally:
            self._preempting.pop(preemptor.uid, None)
        if failed:
            actions.activate(preemptor)

    def is_preempting(self, uid: str) -> bool:
        """Whether the pod's victims are still being removed (its last victim gone or being deleted counts as done)."""
        if uid not in self._preempting:
            return False
        last_victim_running = self._preempting[uid]
        return last_victim_running is None or last_victim_running()

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if self._preempting and self.is_preempting(pod.uid):
            return Status.unresolvable(WAITING)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), hint=self._after_victim_deletion)]

    def _after_victim_deletion(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """A pod held by this plugin's gate goes back once its preemption is over (its last victim
        gone or going); while victims remain, deletions leave it where it is."""
        return QueueingHint.QUEUE_SKIP if self.is_preempting(pod.metadata.uid or "") else QueueingHint.QUEUE


def _still_running(victim: Any | None) -> bool:
    return victim is not None and victim.metadata.deletionTimestamp is None


def new(args: Any, handle: Handle) -> DefaultPreemption:
    """Build the plugin from its (possibly absent) arguments, validated."""
    decoded = decode_args(args, Args)
    decoded.validate()
    return DefaultPreemption(decoded, handle)
