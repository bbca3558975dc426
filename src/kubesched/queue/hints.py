"""Whether a cluster event is worth requeuing a pod for: the per-pod decision the queue makes
with the QueueingHints of the plugins that rejected it."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import Enum

from lightkube.models import core_v1

from kubesched.cache import PodInfo
from kubesched.framework.events import ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.framework.queued import QueuedPodInfo
from kubesched.framework.status import Status


class Strategy(Enum):
    """Where an event sends a pod waiting in unschedulablePods."""

    SKIP = "skip"  # it stays
    AFTER_BACKOFF = "after-backoff"  # to backoffQ while its backoff lasts, else to activeQ
    IMMEDIATELY = "immediately"  # to activeQ


@dataclass
class Decision:
    strategy: Strategy
    plugin: str = ""  # the rejector plugin whose hint decided (empty: no hint was needed)
    hint: str = ""  # what that hint said
    hint_fn: bool = True  # False: the registration has no hint function, which means Queue


SKIP = Decision(Strategy.SKIP)


@dataclass
class QueueProfile:
    """What the queue needs from one profile: its PreEnqueue verdict, the events its rejecting
    plugins registered, and the plugins' hint keys (see `EnqueueExtensions`)."""

    pre_enqueue: Callable[[PodInfo], Status | None]
    events: dict[str, list[ClusterEventWithHint]]
    hint_keys: dict[str, Callable[[core_v1.Pod], Hashable]] = field(default_factory=dict)
    _interest: dict[ClusterEvent, bool] = field(default_factory=dict, repr=False)

    def interested(self, event: ClusterEvent) -> bool:
        """Whether any plugin of this profile registered an event matching `event`."""
        known = self._interest.get(event)
        if known is None:
            known = self._interest[event] = any(
                r.event.matches(event) for registered in self.events.values() for r in registered
            )
        return known

    def registered(self, plugin: str, event: ClusterEvent) -> bool:
        return any(r.event.matches(event) for r in self.events.get(plugin, ()))


def _ask(registration: ClusterEventWithHint, pod: object, old: object, new: object) -> QueueingHint:
    if registration.hint is None:
        return QueueingHint.QUEUE
    try:
        return registration.hint(pod, old, new)
    except Exception:  # a failing hint function requeues, as upstream treats a hint error
        return QueueingHint.QUEUE


def decide(profile: QueueProfile, qpi: QueuedPodInfo, event: ClusterEvent, old: object, new: object) -> Decision:
    """The decision for one pod and one event: no rejector plugins → after backoff; a wildcard
    event → after backoff (unless it targets another pod); otherwise the hints of the rejector
    plugins' matching registrations: Queue from a Pending plugin → immediately, Queue from
    another → after backoff, no Queue at all → skip (naming the first plugin whose hint said
    QueueSkip, when one did)."""
    rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
    if not rejectors:
        return Decision(Strategy.AFTER_BACKOFF)
    if event.is_wildcard():
        if event.target_uid and event.target_uid != qpi.uid:
            return SKIP
        return Decision(Strategy.AFTER_BACKOFF)
    queued: Decision | None = None
    skipped: Decision | None = None  # the first hint that said QueueSkip, for the trace
    for plugin in sorted(rejectors):
        for registration in profile.events.get(plugin, ()):
            if not registration.event.matches(event):
                continue
            if _ask(registration, qpi.pod_info.pod, old, new) == QueueingHint.QUEUE_SKIP:
                skipped = skipped or Decision(Strategy.SKIP, plugin, "QueueSkip")
                continue
            hint_fn = registration.hint is not None
            if plugin in qpi.pending_plugins:
                return Decision(Strategy.IMMEDIATELY, plugin, "Queue", hint_fn)
            queued = queued or Decision(Strategy.AFTER_BACKOFF, plugin, "Queue", hint_fn)
            if not qpi.pending_plugins:
                return queued
    return queued or skipped or SKIP
