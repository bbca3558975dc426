"""The scheduling queue: activeQ, backoffQ and unschedulablePods, with the flush timers.

- activeQ: pods ready to be tried, ordered by the QueueSort plugin.
- backoffQ: pods that failed and must wait `initial * 2**(n-1)` (capped) before the next try;
  rejections and errors back off in separate heaps. When activeQ is empty a rejected pod may be
  popped from backoffQ before its backoff ends (SchedulerPopFromBackoffQ).
- unschedulablePods: pods rejected by plugins, waiting for a cluster event their rejecting
  plugins' QueueingHints say may help (or for the flush of pods older than 5 minutes); and gated
  pods held by a PreEnqueue plugin.
- in flight: pods being scheduled; events that arrive meanwhile are replayed against a pod that
  fails, so no wake-up is lost.
- the nominator: pods nominated to nodes.

Every transition is a `queue.move` trace record (from, to, event, and the plugin whose hint
moved the pod), and is counted in `incoming` by (queue, event).
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgspec
from lightkube.models import core_v1

from kubesched.cache import PodInfo
from kubesched.clock import Clock, TimerHandle
from kubesched.framework.events import FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT, WILDCARD, ActionType, ClusterEvent
from kubesched.framework.queued import QueuedPodInfo
from kubesched.framework.status import Status
from kubesched.queue.heap import ByLess, PodHeap
from kubesched.queue.hints import SKIP, Decision, QueueProfile, Strategy, decide
from kubesched.queue.in_flight import InFlight
from kubesched.queue.nominator import Nominator
from kubesched.queue.pool import UnschedulablePool, group_key
from kubesched.trace import Tracer

DEFAULT_INITIAL_BACKOFF = 1.0
DEFAULT_MAX_BACKOFF = 10.0
DEFAULT_MAX_IN_UNSCHEDULABLE = 300.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0
BACKOFF_FLUSH_PERIOD = 1.0

ACTIVE = "activeQ"
BACKOFF = "backoffQ"
UNSCHEDULABLE = "unschedulablePods"
GATED = "gated"
IN_FLIGHT = "inFlight"

# Queue-internal event labels
POD_ADD = "PodAdd"
POD_UPDATE = "PodUpdate"
ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"

# Metric label of each queue (scheduler_pending_pods, scheduler_queue_incoming_pods_total)
METRIC_QUEUE = {ACTIVE: "active", BACKOFF: "backoff", UNSCHEDULABLE: "unschedulable", GATED: "gated"}


@dataclass(frozen=True)
class PendingPod:
    """One pending pod as the queue sees it (for `kubesched queue` and its JSON)."""

    key: str
    queue: str  # activeQ, backoffQ, unschedulablePods, gated or inFlight
    attempts: int
    backoff_until: float | None  # when its backoff ends (backoffQ only)
    rejected_by: list[str]  # the plugins that rejected its last attempt, or its gating plugin
    wake_on: list[str]  # the registered events (of those plugins) that may requeue it
    since: float  # when it entered the queue it is in (or was last requeued)


class SchedulingQueue:
    def __init__(
        self,
        *,
        clock: Clock,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        sort_key: Callable[[QueuedPodInfo], object] | None = None,
        profiles: dict[str, QueueProfile],
        initial_backoff: float = DEFAULT_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_MAX_BACKOFF,
        max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE,
        tracer: Tracer | None = None,
        nominator: Nominator | None = None,
    ) -> None:
        self.clock = clock
        self.profiles = profiles
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self._trace = tracer or Tracer(clock.now)
        order = sort_key or (lambda qpi: ByLess(qpi, less))
        self.active = PodHeap(lambda qpi: 0, order)
        self.backoff = PodHeap(self._expiry, order)
        self.error_backoff = PodHeap(self._expiry, order)
        self.unschedulable = UnschedulablePool()
        self.in_flight = InFlight()
        self.nominator = nominator if nominator is not None else Nominator()
        self.incoming: Counter[tuple[str, str]] = Counter()  # (metric queue label, event) -> pods
        self._wakeup: asyncio.Event | None = None
        self._timers: list[TimerHandle] = []
        self.closed = False

    # -- timers -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the backoff flush (every second, on whole seconds) and the unschedulable flush (every 30 s)."""
        now = self.clock.now()
        self._timers.append(self.clock.call_at(math.floor(now) + BACKOFF_FLUSH_PERIOD, self._flush_backoff))
        self._timers.append(self.clock.call_later(UNSCHEDULABLE_FLUSH_PERIOD, self._flush_unschedulable))

    def close(self) -> None:
        self.closed = True
        for timer in self._timers:
            timer.cancel()
        self._wake()

    def _flush_backoff(self) -> None:
        if self.closed:
            return
        for heap in (self.backoff, self.error_backoff):
            while (head := heap.peek()) is not None and not self._backing_off(head):
                heap.pop()
                self._to_active(head, event=BACKOFF_COMPLETE, source=BACKOFF, pre_enqueue=False)
        self._timers = [t for t in self._timers if not t.cancelled()]
        self._timers.append(
            self.clock.call_at(math.floor(self.clock.now()) + BACKOFF_FLUSH_PERIOD, self._flush_backoff)
        )

    def _flush_unschedulable(self) -> None:
        if self.closed:
            return
        now = self.clock.now()
        stale = [q for q in self.unschedulable if now - q.timestamp > self.max_in_unschedulable]
        profiles = self.profiles
        for qpi in stale:
            profile = profiles.get(qpi.pod_info.pod.spec.schedulerName or "")
            if profile is None or (qpi.gated and not profile.registered(qpi.gating_plugin, UNSCHEDULABLE_TIMEOUT)):
                continue
            self._requeue(qpi, decide(profile, qpi, UNSCHEDULABLE_TIMEOUT, None, None), UNSCHEDULABLE_TIMEOUT.label)
        self._timers.append(self.clock.call_later(UNSCHEDULABLE_FLUSH_PERIOD, self._flush_unschedulable))

    # -- backoff ----------------------------------------------------------------------------------

    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        count = qpi.consecutive_errors if qpi.consecutive_errors > 0 else qpi.unschedulable_count
        if count == 0 or self.max_backoff == 0:
            return 0.0
        if count > 64:  # doubled past any maximum (and past what a float holds, for huge counts)
            return float(self.max_backoff)
        return float(min(self.initial_backoff * 2.0 ** (count - 1), self.max_backoff))

    def _expiry(self, qpi: QueuedPodInfo) -> float:
        if qpi.backoff_expiry is None:
            qpi.backoff_expiry = float(math.floor(qpi.timestamp + self.backoff_duration(qpi)))
        return qpi.backoff_expiry

    def _backing_off(self, qpi: QueuedPodInfo) -> bool:
        if self.backoff_duration(qpi) == 0:
            return False
        return self._expiry(qpi) >= math.floor(self.clock.now())

    # -- moving pods --------------------------------------------------------------------------

    def _moved(self, qpi: QueuedPodInfo, source: str, to: str, event: str, decision: Decision | None = None) -> None:
        self.incoming[(METRIC_QUEUE[to], event)] += 1
        if self._trace.enabled:
            # Any: values of several types, spread into emit's typed keywords
            fields: dict[str, Any] = {"pod": qpi.key, "from": source, "to": to, "event": event}
            if decision is not None and decision.plugin:
                fields.update(plugin=decision.plugin, hint=decision.hint)
                if not decision.hint_fn:
                    fields["hint_fn"] = False
            if to == BACKOFF:
                fields["until"] = self._expiry(qpi)
                fields["wait"] = round(fields["until"] - self.clock.now(), 6)  # how long it backs off from now
            if to in (UNSCHEDULABLE, GATED):
                fields["plugins"] = sorted(qpi.unschedulable_plugins | qpi.pending_plugins)
            self._trace.emit("queue.move", **fields)

    def _stayed(self, qpi: QueuedPodInfo, decision: Decision, event: str) -> None:
        """A cluster event that left a waiting pod where it was: which hint said so, if any did."""
        if self._trace.enabled:
            where = GATED if qpi.gated else UNSCHEDULABLE
            # Any: values of several types, spread into emit's typed keywords
            fields: dict[str, Any] = {"pod": qpi.key, "in": where, "event": event}
            if decision.plugin:
                fields.update(plugin=decision.plugin, hint=decision.hint)
            self._trace.emit("queue.stayed", **fields)

    def _gate(self, qpi: QueuedPodInfo, status: Status, source: str, event: str) -> None:
        qpi.gating_plugin = status.plugin
        qpi.unschedulable_plugins = {status.plugin}
        qpi.pending_plugins = set()
        self._to_pool(qpi)
        self._moved(qpi, source, GATED, event)

    def _to_pool(self, qpi: QueuedPodInfo) -> None:
        self.unschedulable.add(qpi, group_key(self._profile(qpi), qpi))

    def _to_active(
        self, qpi: QueuedPodInfo, *, event: str, source: str, pre_enqueue: bool = True, why: Decision | None = None
    ) -> bool:
        """Move to activeQ, unless a PreEnqueue plugin gates the pod (then it waits as gated)."""
        if pre_enqueue:
            status = self._pre_enqueue(qpi)
            if status is not None:
                self._gate(qpi, status, source, event)
                return False
        qpi.gating_plugin = ""
        if qpi.initial_attempt is None:
            qpi.initial_attempt = self.clock.now()
        self.active.push(qpi)
        self._moved(qpi, source, ACTIVE, event, why)
        self._wake()
        return True

    def _to_backoff_or_active(
        self, qpi: QueuedPodInfo, *, event: str, source: str, why: Decision | None = None
    ) -> None:
        if not self._backing_off(qpi):
            self._to_active(qpi, event=event, source=source, why=why)
            return
        status = self._pre_enqueue(qpi)
        if status is not None:
            self._gate(qpi, status, source, event)
            return
        qpi.gating_plugin = ""
        heap = self.error_backoff if qpi.consecutive_errors > 0 else self.backoff
        heap.push(qpi)
        self._moved(qpi, source, BACKOFF, event, why)
        self._wake()

    def _requeue(self, qpi: QueuedPodInfo, decision: Decision, event: str) -> bool:
        """Move a pod out of unschedulablePods as `decision` says; False when it stays."""
        if decision.strategy == Strategy.SKIP:
            self._stayed(qpi, decision, event)
            return False
        source = GATED if qpi.gated else UNSCHEDULABLE
        self.unschedulable.remove(qpi.key)
        if qpi.gated or decision.strategy == Strategy.IMMEDIATELY:
            self._to_active(qpi, event=event, source=source, why=decision)
        else:
            self._to_backoff_or_active(qpi, event=event, source=source, why=decision)
        return True

    def _profile(self, qpi: QueuedPodInfo) -> QueueProfile | None:
        return self.profiles.get(qpi.pod_info.pod.spec.schedulerName or "")

    def _pre_enqueue(self, qpi: QueuedPodInfo) -> Status | None:
        profile = self._profile(qpi)
        status: Status | None = profile.pre_enqueue(qpi.pod_info) if profile is not None else None
        return status

    # -- adding -----------------------------------------------------------------------------------

    def add(self, pod: object) -> None:
        """A new unscheduled pod from the informer."""
        qpi = QueuedPodInfo(PodInfo(pod), timestamp=self.clock.now())
        if self._to_active(qpi, event=POD_ADD, source=""):
            self.nominator.add(qpi.pod_info)  # a pod entering activeQ brings its nomination

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None:
        """Requeue a pod after a failed attempt. An error attempt (no rejecting plugin) backs off;
        a rejected pod is judged against the events that arrived while it was in flight: if one
        may help it goes to backoffQ or activeQ at once, otherwise it waits in unschedulablePods."""
        try:
            if qpi.key in self.unschedulable or self.active.get(qpi.key) or self._backoff_get(qpi.key):
                return
            if not qpi.unschedulable_plugins and not qpi.pending_plugins:
                qpi.consecutive_errors += 1
            else:
                qpi.unschedulable_count += 1
                qpi.consecutive_errors = 0
            qpi.timestamp = self.clock.now()
            qpi.backoff_expiry = None
            decision = self._in_flight_decision(qpi)
            if decision.strategy == Strategy.SKIP:
                self._to_pool(qpi)
                self._moved(qpi, IN_FLIGHT, UNSCHEDULABLE, ATTEMPT_FAILURE)
            elif decision.strategy == Strategy.IMMEDIATELY:
                self._to_active(qpi, event=ATTEMPT_FAILURE, source=IN_FLIGHT, why=decision)
            else:
                self._to_backoff_or_active(qpi, event=ATTEMPT_FAILURE, source=IN_FLIGHT, why=decision)
        finally:
            self.done(qpi.uid)

    def _in_flight_decision(self, qpi: QueuedPodInfo) -> Decision:
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return Decision(Strategy.AFTER_BACKOFF)
        profile = self._profile(qpi)
        if profile is None:
            return SKIP
        result = SKIP
        for recorded in self.in_flight.since_pop(qpi.uid):
            decision = decide(profile, qpi, recorded.event, recorded.old, recorded.new)
            if decision.strategy == Strategy.IMMEDIATELY:
                return decision
            if decision.strategy == Strategy.AFTER_BACKOFF and result.strategy == Strategy.SKIP:
                result = decision
        return result

    def _backoff_get(self, key: str) -> QueuedPodInfo | None:
        return self.backoff.get(key) or self.error_backoff.get(key)

    # -- cluster events ---------------------------------------------------------------------------

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object = None,
        new: object = None,
        *,
        pre_check: Callable[[QueuedPodInfo], bool] | None = None,
    ) -> None:
        """A cluster event: requeue the unschedulable pods whose rejecting plugins' hints say it
        may help (all of them for a wildcard event); remember it for the pods in flight."""
        if not event.is_wildcard() and not any(p.interested(event) for p in self.profiles.values()):
            return
        for members in list(self.unschedulable.groups.values()):
            sample = next(iter(members.values()))
            profile = self._profile(sample)
            if profile is None:
                continue
            if sample.gated and not profile.registered(sample.gating_plugin, event):
                continue
            decision = self._group_decision(profile, members, event, old, new)
            if decision is None:  # pods of their own group: judged one by one
                for qpi in list(members.values()):
                    if pre_check is None or pre_check(qpi):
                        self._requeue(qpi, decide(profile, qpi, event, old, new), event.label)
            elif decision.strategy != Strategy.SKIP:
                for qpi in list(members.values()):
                    if pre_check is None or pre_check(qpi):
                        self._requeue(qpi, decision, event.label)
            elif self._trace.enabled:  # a group stays as one; told pod by pod only when traced
                for qpi in members.values():
                    self._stayed(qpi, decision, event.label)
        self.in_flight.record(event, old, new)

    @staticmethod
    def _group_decision(
        profile: QueueProfile, members: dict[str, QueuedPodInfo], event: ClusterEvent, old: object, new: object
    ) -> Decision | None:
        """The decision shared by a group of pods with equal hint keys; None when its pods are
        judged one by one (a lone pod, or an event about one of the group's pods)."""
        if len(members) == 1:
            return None
        changed = new if new is not None else old
        meta = getattr(changed, "metadata", None)
        if meta is not None and f"{meta.namespace}/{meta.name}" in members:
            return None
        return decide(profile, next(iter(members.values())), event, old, new)

    # -- pod updates ------------------------------------------------------------------------------

    # Any: a served pod (metadata set), read without checks on the queue's per-pod path
    def update(self, old: core_v1.Pod, new: Any, events: Iterable[ClusterEvent]) -> None:
        """An unscheduled pod changed: refresh its queued copy, and requeue it if the change may help."""
        key = f"{new.metadata.namespace}/{new.metadata.name}"
        info = PodInfo(new)
        in_flight = self.in_flight.get(info.uid)
        if in_flight is not None:
            in_flight.pod_info = info
            for event in events:
                self.in_flight.record(event, old, new)
            return
        for heap in (self.active, self.backoff, self.error_backoff):
            qpi = heap.get(key)
            if qpi is not None:
                qpi.pod_info = info
                self.nominator.update(old, info)
                return
        qpi = self.unschedulable.get(key)
        if qpi is None:
            self.add(new)
            return
        qpi.pod_info = info
        self.nominator.update(old, info)
        self._to_pool(qpi)  # its hint keys may have changed
        if not _spec_or_meta_changed(old, new):
            return  # a status-only change (e.g. our own PodScheduled condition) helps nothing
        profile = self._profile(qpi)
        if profile is None:
            return
        for event in events:
            if qpi.gated and not profile.registered(qpi.gating_plugin, event):
                continue
            if self._requeue(qpi, decide(profile, qpi, event, old, new), event.label):
                return

    def activate(self, uid: str, key: str) -> None:
        """Move the pod to activeQ now (ForceActivate), from unschedulablePods or backoffQ; a pod
        in flight is moved when its attempt fails. Unknown pods are ignored."""
        if uid in self.in_flight:
            self.in_flight.record(ClusterEvent(WILDCARD, ActionType.ALL, FORCE_ACTIVATE.label, uid), None, None)
            return
        qpi = self.unschedulable.remove(key)
        source = UNSCHEDULABLE
        if qpi is None:
            qpi = self.backoff.remove(key) or self.error_backoff.remove(key)
            source = BACKOFF
        if qpi is not None:
            self._to_active(qpi, event=FORCE_ACTIVATE.label, source=GATED if qpi.gated else source)

    # Any: a served pod (metadata set), read without checks on the queue's per-pod path
    def delete(self, pod: Any) -> None:
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        for heap in (self.active, self.backoff, self.error_backoff):
            heap.remove(key)
        self.unschedulable.remove(key)
        self.nominator.delete(pod.metadata.uid or "")

    # -- popping ----------------------------------------------------------------------------------

    async def pop(self) -> QueuedPodInfo | None:
        """The next pod to try (None once closed). Waits while nothing is ready."""
        while True:
            qpi = self.active.pop()
            source = ACTIVE
            if qpi is None:  # an idle scheduler takes a backing-off pod early (SchedulerPopFromBackoffQ)
                qpi, source = self.backoff.pop(), BACKOFF
            if qpi is not None:
                qpi.attempts += 1
                self.in_flight.add(qpi)
                if self._trace.enabled:
                    self._trace.emit("queue.pop", pod=qpi.key, attempts=qpi.attempts, **{"from": source})
                return qpi
            if self.closed:
                return None
            if self._wakeup is None:
                self._wakeup = asyncio.Event()
            self._wakeup.clear()
            await self._wakeup.wait()

    def done(self, uid: str) -> None:
        """The pod's attempt is over (bound, requeued or dropped)."""
        self.in_flight.done(uid)

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()

    # -- introspection ----------------------------------------------------------------------------

    def pending(self) -> dict[str, int]:
        """Pods per queue, as `scheduler_pending_pods` counts them."""
        gated = sum(len(m) for m in self.unschedulable.groups.values() if next(iter(m.values())).gated)
        return {
            "active": len(self.active),
            "backoff": len(self.backoff) + len(self.error_backoff),
            "unschedulable": len(self.unschedulable) - gated,
            "gated": gated,
        }

    def rejections(self) -> Counter[tuple[str, str]]:
        """Waiting pods per (rejecting plugin, profile), as `scheduler_unschedulable_pods` counts them."""
        out: Counter[tuple[str, str]] = Counter()
        for qpi in self.unschedulable:
            for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
                out[(plugin, qpi.pod_info.pod.spec.schedulerName or "")] += 1
        return out

    def where(self, key: str) -> str | None:
        """Which queue holds the pod (activeQ, backoffQ, unschedulablePods, gated), if any."""
        if self.active.get(key):
            return ACTIVE
        if self._backoff_get(key):
            return BACKOFF
        qpi = self.unschedulable.get(key)
        if qpi is not None:
            return GATED if qpi.gated else UNSCHEDULABLE
        return None

    def snapshot(self) -> list[PendingPod]:
        """Every pending pod (in flight included), by queue then key."""
        out: list[PendingPod] = []
        for queue, pods in (
            (ACTIVE, list(self.active)),
            (BACKOFF, [*self.backoff, *self.error_backoff]),
            (UNSCHEDULABLE, list(self.unschedulable)),
        ):
            for qpi in pods:
                where = GATED if qpi.gated else queue
                rejectors = sorted(qpi.unschedulable_plugins | qpi.pending_plugins)
                out.append(
                    PendingPod(
                        key=qpi.key,
                        queue=where,
                        attempts=qpi.attempts,
                        backoff_until=self._expiry(qpi) if where == BACKOFF else None,
                        rejected_by=rejectors,
                        wake_on=self._wake_events(qpi, rejectors) if where in (UNSCHEDULABLE, GATED) else [],
                        since=qpi.timestamp,
                    )
                )
        order = {ACTIVE: 0, BACKOFF: 1, UNSCHEDULABLE: 2, GATED: 3}
        return sorted(out, key=lambda p: (order[p.queue], p.key))

    def _wake_events(self, qpi: QueuedPodInfo, rejectors: list[str]) -> list[str]:
        profile = self._profile(qpi)
        if profile is None:
            return []
        labels = {f"{r.event.label} ({plugin})" for plugin in rejectors for r in profile.events.get(plugin, ())}
        if not qpi.gated:
            labels.add(f"{UNSCHEDULABLE_TIMEOUT.label} (after {self.max_in_unschedulable:g} s)")
        return sorted(labels)


# Any: a served pod (metadata set), read without checks on the queue's per-pod path
def _stripped(pod: Any) -> object:
    meta = msgspec.structs.replace(
        pod.metadata, resourceVersion=None, generation=None, managedFields=None, finalizers=None
    )
    return msgspec.structs.replace(pod, metadata=meta, status=None)


def _spec_or_meta_changed(old: object, new: object) -> bool:
    """Whether anything but the status and bookkeeping fields differs."""
    return bool(_stripped(old) != _stripped(new))
