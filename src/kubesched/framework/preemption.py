"""Preemption as a library for PostFilter plugins (upstream's `framework/preemption` Evaluator).

A preemption plugin supplies the policy (`PreemptionPolicy`: who may preempt, which victims on a
node, how many candidates to look for); the `Evaluator` does the rest with the plugin's handle:

1. Eligibility: the policy says why the pod may not preempt now ("" when it may).
2. Candidates: the nodes whose Filter status is exactly Unschedulable (a node without a status
   carries the absent status, unresolvable by default).
3. Dry run, node by node from the policy's offset, each on a clone of the node and of the cycle
   state: the policy's victims for that node. It stops once it has the wanted number of
   candidates, one of them without PDB violations.
4. `pick_one_node`: fewest PDB violations, lowest most-important victim, lowest sum of victim
   priorities, fewest victims, latest start among the most important victims, first in dry-run order.
5. Acting (upstream's asynchronous mode, KEP-4832), started before PostFilter returns: victims
   already being deleted are skipped; if any remain, the preemptor is marked as preempting and a
   background task clears the nominations of lower-priority pods nominated to the node, preempts
   every victim but the last concurrently, then the last one (unless one failed), then unmarks
   the preemptor; on an API error the preemptor is activated. With SchedulerAsyncPreemption off
   (`handle.features`), upstream's synchronous mode: every victim preempted at once, then the
   nominations cleared, while the scheduler takes no other pod (`handle.run_blocking`).
   Per victim: a pod waiting at Permit is preempted in memory (it fails with an Error); any other
   gets `DisruptionTarget=True` (reason `PreemptionByScheduler`) and is deleted gracefully; then
   the `Preempted` event.

Success returns `PostFilterResult(node)` and writes the `Decision` to the cycle state
(`decision(state)`). Failure returns Unschedulable with the reason, which the plugin prefixes
(`preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.`).

`is_preempting(uid)` is what a plugin's PreEnqueue gate asks: whether the pod's victims are still
being removed (its last victim gone or being deleted counts as done).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from lightkube.models import core_v1 as m
from lightkube.resources import core_v1

from kubesched.api.errors import FieldError
from kubesched.api.selectors import LabelSelectorMatcher, compile_label_selector
from kubesched.cache import NodeInfo, PodInfo
from kubesched.clock.base import rfc3339
from kubesched.cluster.errors import ApiError, NotFound
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NodeToStatus, PostFilterResult
from kubesched.framework.status import Code, Status

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
PRIORITY_SHIFT = 2**31  # MaxInt32 + 1: makes every priority non-negative in the sum criterion


def preempted(pod: m.Pod) -> bool:
    """Whether the pod carries the condition the scheduler gives a victim: DisruptionTarget True,
    reason PreemptionByScheduler."""
    return any(
        c.type == DISRUPTION_TARGET and c.status == "True" and c.reason == PREEMPTION_BY_SCHEDULER
        for c in (pod.status.conditions if pod.status else None) or ()
    )


@dataclass(frozen=True)
class Candidate:
    """A node where the pod fits once `victims` (most important first) are gone."""

    node: str
    victims: tuple[PodInfo, ...]
    num_pdb_violations: int = 0


@dataclass(frozen=True)
class Decision:
    """What a successful preemption chose, kept in the cycle state under the plugin's key."""

    preemptor: PodInfo
    candidate: Candidate
    considered: tuple[Candidate, ...] = ()  # every candidate the dry run found
    reason: str = ""  # the criterion that chose `candidate` among them

    def clone(self) -> Decision:
        return self


DECISION_KEY = "preemption/decision"


def decision(state: CycleState) -> Decision | None:
    """The preemption decided in this cycle, if one succeeded."""
    found = state.get(DECISION_KEY)
    return found if isinstance(found, Decision) else None


def preempted_message(preemptor: PodInfo, node: str) -> str:
    """The note of the `Preempted` event recorded on each victim."""
    return f"Preempted by pod {preemptor.uid} on node {node}"


def _start_time(pod: PodInfo, now: float) -> float:
    """`status.startTime` in seconds; a pod that has not started counts as starting now."""
    status = pod.pod.status
    start = status.startTime if status is not None else None
    return now if start is None else start.timestamp()


def importance(now: float) -> Callable[[PodInfo], tuple[int, float]]:
    """A sort key putting the more important pod first: higher priority, then earlier start."""
    return lambda p: (-p.priority, _start_time(p, now))


def terminating_by_preemption(pod: Any) -> bool:  # Any: a served pod (its metadata is set), read unchecked
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


def budgets(pdbs: Sequence[Any]) -> list[Budget]:  # Any: served budgets (their metadata is set), read unchecked
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


class PreemptionPolicy(Protocol):
    """What a preemption plugin decides; the `Evaluator` does the rest."""

    def ineligible(self, state: CycleState, pod: PodInfo, statuses: NodeToStatus) -> str:
        """Why the pod may not preempt now ("" when it may); `state` is the attempt's cycle state."""
        ...

    def offset_and_candidates(self, num_nodes: int) -> tuple[int, int]:
        """Where among the potential nodes the dry run starts, and how many candidates it wants."""
        ...

    def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[Budget]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The pods to evict from `node` (a clone, free to mutate) for the pod to fit, most
        important first, and how many of them break a PDB; or why the node cannot be a candidate."""
        ...


class Evaluator:
    """Runs preemption for one plugin with its handle and its policy."""

    def __init__(
        self, plugin_name: str, handle: Handle, policy: PreemptionPolicy, *, asynchronous: bool | None = None
    ) -> None:
        """`asynchronous`: whether victims are removed off the scheduling thread (None: as the
        SchedulerAsyncPreemption gate of `handle.features` says)."""
        self.plugin_name = plugin_name
        self.handle = handle
        self.policy = policy
        self.asynchronous = handle.features.async_preemption if asynchronous is None else asynchronous
        # Preemptors whose victims are being removed -> whether their last victim is still there
        # (None until the last victim's turn).
        self._preempting: dict[str, Callable[[], bool] | None] = {}
        self._held: set[str] = set()  # preemptors a PreEnqueue gate held back while preempting

    def preempt(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Choose a node and victims and start removing them; or say why not."""
        self.handle.metrics.preemption_attempted()
        reason = self.policy.ineligible(state, pod, statuses)
        if reason:
            return None, Status.unschedulable(reason)
        nodes = self.handle.snapshot.node_info_list
        if not nodes:
            return None, Status.error("no nodes available")
        potential = [n for n in nodes if statuses.get(n.name).code == Code.UNSCHEDULABLE]
        candidates: list[Candidate] = []
        node_statuses: dict[str, Status] = {}
        if potential:
            offset, wanted = self.policy.offset_and_candidates(len(potential))
            pdbs = budgets(self.handle.listers.pdbs)
            candidates, node_statuses, errors = self.dry_run(state, pod, potential, pdbs, offset, wanted)
            if errors and not candidates:
                return None, Status.error(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
        if not candidates:
            return PostFilterResult(""), Status.unschedulable(fit_error_message(len(nodes), node_statuses, NOT_HELPFUL))
        best, why = pick_with_reason(candidates, self.handle.clock.now())
        chosen = Decision(pod, best, tuple(candidates), why)
        state.write(DECISION_KEY, chosen)
        self.prepare_candidate(chosen)
        return PostFilterResult(best.node), None

    def dry_run(
        self,
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
            victims, violations, status = self.policy.select_victims_on_node(state.clone(), pod, node.clone(), pdbs)
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

    # -- acting -------------------------------------------------------------------------------------

    def prepare_candidate(self, chosen: Decision) -> None:
        """Trace and count the choice, mark the preemptor as preempting and start removing its
        victims in the background (nothing to do when every victim is already being deleted)."""
        handle = self.handle
        handle.tracer.emit(
            "preemption.chosen",
            pod=chosen.preemptor.key,
            node=chosen.candidate.node,
            victims=[f"{v.key} (priority {v.priority})" for v in chosen.candidate.victims],
            reason=chosen.reason,
            candidates={
                c.node: {"victims": [v.key for v in c.victims], "pdb_violations": c.num_pdb_violations}
                for c in chosen.considered
            },
        )
        handle.metrics.preemption(len(chosen.candidate.victims))
        victims = [v for v in chosen.candidate.victims if v.pod.metadata.deletionTimestamp is None]
        if not self.asynchronous:
            handle.run_blocking(self._preempt_victims_in_cycle(chosen, victims))
            return
        if not victims:
            return
        self._preempting[chosen.preemptor.uid] = None
        handle.run_in_background(self._preempt_victims(chosen, victims))

    async def _preempt_victims_in_cycle(self, chosen: Decision, victims: list[PodInfo]) -> None:
        """SchedulerAsyncPreemption off: every victim preempted at once, then the lower-priority
        nominations to the node cleared, while the scheduler takes no other pod. On an API error
        the preemptor is activated."""
        preemptor, node = chosen.preemptor, chosen.candidate.node
        results = await asyncio.gather(*(self._preempt(preemptor, v, node) for v in victims), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, ApiError):
                raise result
        failed = any(isinstance(r, ApiError) for r in results)
        for nominated in self.handle.nominator.pods_for_node(node):
            if nominated.priority < preemptor.priority:
                try:
                    await self._clear_nomination(nominated)
                except ApiError:
                    failed = True
        if failed:
            self.handle.activate([preemptor])

    async def _preempt_victims(self, chosen: Decision, victims: list[PodInfo]) -> None:
        preemptor, node = chosen.preemptor, chosen.candidate.node
        failed = False
        try:
            for nominated in self.handle.nominator.pods_for_node(node):
                if nominated.priority < preemptor.priority:
                    try:
                        await self._clear_nomination(nominated)
                    except ApiError:
                        failed = True
            *first, last = victims
            results = await asyncio.gather(*(self._preempt(preemptor, v, node) for v in first), return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, ApiError):
                    raise result
            if any(isinstance(r, ApiError) for r in results):
                failed = True
            else:
                listers = self.handle.listers
                self._preempting[preemptor.uid] = lambda: _still_running(listers.pod(last.namespace, last.name))
                try:
                    await self._preempt(preemptor, last, node)
                except ApiError:
                    failed = True
        finally:
            self._preempting.pop(preemptor.uid, None)
        held = preemptor.uid in self._held
        self._held.discard(preemptor.uid)
        if failed or held:
            self.handle.activate([preemptor])

    async def _clear_nomination(self, pod: PodInfo) -> None:
        await self.handle.cluster.patch(
            core_v1.Pod,
            pod.name,
            {"status": {"nominatedNodeName": None}},
            namespace=pod.namespace,
            subresource="status",
        )

    async def _preempt(self, preemptor: PodInfo, victim: PodInfo, node: str) -> None:
        """A victim waiting at Permit is preempted in memory; any other gets the DisruptionTarget
        condition and is deleted (gracefully; NotFound meaning done). Then the `Preempted` event."""
        handle = self.handle
        handle.tracer.emit("preemption.victim", pod=victim.key, node=node, preemptor=preemptor.key)
        waiting = handle.get_waiting_pod(victim.uid)
        if waiting is not None:
            waiting.preempt(self.plugin_name, "preempted")
        else:
            condition = {
                "type": DISRUPTION_TARGET,
                "status": "True",
                "reason": PREEMPTION_BY_SCHEDULER,
                "message": f"{handle.profile_name}: preempting to accommodate a higher priority pod",
                "lastTransitionTime": rfc3339(handle.clock.now()),
            }
            with contextlib.suppress(NotFound):
                await handle.cluster.patch(
                    core_v1.Pod,
                    victim.name,
                    {"status": {"conditions": [condition]}},
                    namespace=victim.namespace,
                    subresource="status",
                    patch_type="strategic",
                )
                await handle.cluster.delete(core_v1.Pod, victim.name, namespace=victim.namespace)
        with contextlib.suppress(NotFound):
            await handle.events.record(
                victim.pod,
                "Normal",
                "Preempted",
                "Preempting",
                preempted_message(preemptor, node),
                related=preemptor.pod,
            )

    def is_preempting(self, uid: str) -> bool:
        """Whether the pod's victims are still being removed (its last victim gone or being deleted counts as done)."""
        if uid not in self._preempting:
            return False
        last_victim_running = self._preempting[uid]
        return last_victim_running is None or last_victim_running()

    def hold(self, uid: str) -> None:
        """A PreEnqueue gate held the pod back because it is preempting: activate it when its
        victims are gone, lest it wait for a deletion event that came while it was held."""
        self._held.add(uid)

    @property
    def any_preempting(self) -> bool:
        return bool(self._preempting)


def _still_running(victim: Any | None) -> bool:  # Any: the pod as `Listers.pod` gives it
    return victim is not None and victim.metadata.deletionTimestamp is None
