"""The scheduling queue as a state machine, written down as data: where a pending pod can be
(`STATES`), what moves it (`TRIGGERS`), and every move the queue makes (`MACHINE`), each with the
upstream function that makes it. `transition_of` reads a move back from the queue's trace, so the
table can be held against what the queue does. A pod leaves the machine from any state when it is
deleted, and from inFlight when it is assumed on a node."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.framework.events import FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT
from kubesched.queue.scheduling_queue import (
    ACTIVE,
    ATTEMPT_FAILURE,
    BACKOFF,
    BACKOFF_COMPLETE,
    GATED,
    IN_FLIGHT,
    POD_ADD,
    UNSCHEDULABLE,
)

NEW = "new"  # not in the queue yet
STATES = (NEW, ACTIVE, BACKOFF, UNSCHEDULABLE, GATED, IN_FLIGHT)
TRIGGERS = {
    "add": "the pod is created (or first seen by the informer)",
    "pop": "the scheduling loop takes the pod for an attempt",
    "attemptFailed": "the attempt ended without a node (Unschedulable or Error)",
    "backoffCompleted": "the pod's backoff ended (the one-second flush)",
    "clusterEvent": "a change elsewhere in the cluster that a rejecting plugin's QueueingHint says may help",
    "podUpdated": "the pending pod itself changed (its scheduling gates removed, its spec edited)",
    "unschedulableTimeout": "five minutes in unschedulablePods (the thirty-second leftover flush)",
    "activate": "a plugin asked for the pod to be retried now (Activate)",
}


@dataclass(frozen=True)
class Transition:
    source: str
    to: str
    trigger: str
    upstream: str  # the symbol of `trace.upstream.SITES` that makes the move
    when: str = ""
    shown: bool = True  # whether lab 5.4.2 makes it happen (False: possible, but not in the lab)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.to, self.trigger)


MACHINE: tuple[Transition, ...] = (
    Transition(NEW, ACTIVE, "add", "runPreEnqueuePlugins", "every PreEnqueue plugin admits it"),
    Transition(NEW, GATED, "add", "runPreEnqueuePlugins", "a PreEnqueue plugin refuses it (SchedulingGated)"),
    Transition(ACTIVE, IN_FLIGHT, "pop", "Pop", "first by QueueSort's order"),
    Transition(BACKOFF, IN_FLIGHT, "pop", "Pop", "activeQ is empty (SchedulerPopFromBackoffQ)"),
    Transition(
        IN_FLIGHT, UNSCHEDULABLE, "attemptFailed", "AddUnschedulableIfNotPresent", "no event in flight may help"
    ),
    Transition(
        IN_FLIGHT,
        BACKOFF,
        "attemptFailed",
        "AddUnschedulableIfNotPresent",
        "an Error, or an event during the attempt that a rejector's hint queues",
    ),
    Transition(
        IN_FLIGHT,
        ACTIVE,
        "attemptFailed",
        "requeuePodWithQueueingStrategy",
        "a Pending rejection whose event came during the attempt (queue immediately)",
        shown=False,
    ),
    Transition(
        IN_FLIGHT,
        GATED,
        "attemptFailed",
        "runPreEnqueuePlugins",
        "requeued, a PreEnqueue plugin refuses it (DefaultPreemption while its victims go)",
        shown=False,
    ),
    Transition(UNSCHEDULABLE, ACTIVE, "clusterEvent", "MoveAllToActiveOrBackoffQueue", "its backoff is over"),
    Transition(UNSCHEDULABLE, BACKOFF, "clusterEvent", "MoveAllToActiveOrBackoffQueue", "still backing off"),
    Transition(UNSCHEDULABLE, ACTIVE, "podUpdated", "Update", "the change may make it schedulable", shown=False),
    Transition(UNSCHEDULABLE, BACKOFF, "podUpdated", "Update", "the same, still backing off", shown=False),
    Transition(UNSCHEDULABLE, ACTIVE, "unschedulableTimeout", "flushUnschedulablePodsLeftover"),
    Transition(
        UNSCHEDULABLE,
        BACKOFF,
        "unschedulableTimeout",
        "flushUnschedulablePodsLeftover",
        "still backing off (only with podMaxBackoffSeconds above five minutes)",
        shown=False,
    ),
    Transition(UNSCHEDULABLE, ACTIVE, "activate", "Activate"),
    Transition(BACKOFF, ACTIVE, "backoffCompleted", "flushBackoffQCompleted"),
    Transition(BACKOFF, ACTIVE, "activate", "Activate", shown=False),
    Transition(GATED, ACTIVE, "podUpdated", "Update", "its scheduling gates removed: PreEnqueue admits it"),
)
KEYS = {t.key for t in MACHINE}


def trigger_of(event: str) -> str:
    """The trigger of a queue move, by the event the trace names."""
    if event == POD_ADD:
        return "add"
    if event == ATTEMPT_FAILURE:
        return "attemptFailed"
    if event == BACKOFF_COMPLETE:
        return "backoffCompleted"
    if event == UNSCHEDULABLE_TIMEOUT.label:
        return "unschedulableTimeout"
    if event == FORCE_ACTIVATE.label:
        return "activate"
    if event.startswith("UnschedulablePodUpdate") or event == "PodUpdate":
        return "podUpdated"
    return "clusterEvent"


def transition_of(kind: str, details: Mapping[str, object]) -> tuple[str, str, str] | None:
    """The (from, to, trigger) of a `queue.move` or `queue.pop` trace record; None for others."""
    if kind == "queue.pop":
        return (str(details.get("from", ACTIVE)), IN_FLIGHT, "pop")
    if kind == "queue.move":
        return (str(details.get("from") or NEW), str(details["to"]), trigger_of(str(details.get("event", ""))))
    return None
