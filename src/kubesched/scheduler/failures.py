"""The scheduler's failure handling: requeueing, the FailedScheduling event and the PodScheduled condition."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lightkube.models import core_v1 as m
from lightkube.resources import core_v1

from kubesched.api.objects import meta_of, name_of
from kubesched.cache import PodInfo
from kubesched.clock.base import rfc3339
from kubesched.cluster import ApiError, NotFound

if TYPE_CHECKING:
    from kubesched.clock import Clock
    from kubesched.cluster import Cluster
    from kubesched.cluster.events import EventsV1Recorder
    from kubesched.framework.runtime import Framework
    from kubesched.framework.status import Status
    from kubesched.queue import QueuedPodInfo, SchedulingQueue
    from kubesched.scheduler.fit_error import Diagnosis
    from kubesched.scheduler.metrics import SchedulerMetrics
    from kubesched.trace import Tracer

EVENT_NOTE_LIMIT = 1024


def _truncate(message: str) -> str:
    data = message.encode()
    if len(data) <= EVENT_NOTE_LIMIT:
        return message
    return data[: EVENT_NOTE_LIMIT - 4].decode(errors="ignore") + " ..."


class Failures:
    """A scheduler's failure handling and reporting: requeueing, nominations, events, conditions."""

    def __init__(
        self,
        *,
        cluster: Cluster,
        clock: Clock,
        trace: Tracer,
        queue: SchedulingQueue,
        metrics: SchedulerMetrics,
        recorders: dict[str, EventsV1Recorder],
        attempt_results: Counter[tuple[str, str]],
        current: Callable[[str], Any | None],  # Any: a served pod (its spec is set), read unchecked per failure
        spawn: Callable[[Awaitable[None]], None],
    ) -> None:
        self.cluster = cluster
        self.clock = clock
        self.trace = trace
        self.queue = queue
        self.metrics = metrics
        self.recorders = recorders
        self.attempt_results = attempt_results
        self._current = current  # a pod's latest version by uid (None: gone or bound)
        self._spawn = spawn

    def handle_failure(
        self,
        fwk: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        diagnosis: Diagnosis | None,
        *,
        nomination: str | None = None,
    ) -> None:
        """Requeue the pod after a failed attempt and report it. `diagnosis`: a FitError's (its
        rejecting plugins decide what may wake the pod; without one the failure counts as an error
        for the backoff). `nomination`: None leaves the pod's nomination as it is; a node name
        nominates the pod there; "" clears it (upstream's clearNominatedNode)."""
        pod = qpi.pod_info
        reason = "Unschedulable" if status.is_rejected() else "SchedulerError"
        result = "unschedulable" if status.is_rejected() else "error"
        self.attempt_results[(result, fwk.profile_name)] += 1
        self.metrics.attempt(result, fwk.profile_name, self.clock.now() - qpi.attempt_started)
        qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins) if diagnosis else set()
        qpi.pending_plugins = set(diagnosis.pending_plugins) if diagnosis else set()
        self.trace.emit(
            "cycle.failed",
            pod=pod.key,
            reason=reason,
            message=status.message,
            plugins=sorted(qpi.unschedulable_plugins | qpi.pending_plugins),
        )
        current = self._current(pod.uid)
        if current is None or current.spec.nodeName:
            self.queue.done(pod.uid)
            return
        qpi.pod_info = PodInfo(current)
        if nomination == "":
            self.queue.nominator.delete(pod.uid)
        elif nomination is not None:
            self.queue.nominator.add(qpi.pod_info, nomination)
            self.trace.emit("nomination.set", pod=pod.key, node=nomination)
        self.queue.add_unschedulable_if_not_present(qpi)
        self._spawn(self._report_failure(fwk, current, reason, status.message, nomination))

    async def _report_failure(
        self, fwk: Framework, pod: m.Pod, reason: str, message: str, nomination: str | None = None
    ) -> None:
        """The FailedScheduling event, then the PodScheduled condition (and the nomination a
        PostFilter made or cleared) in one status patch, unless nothing would change."""
        await self.event(fwk, pod, "Warning", "FailedScheduling", "Scheduling", _truncate(message))
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastTransitionTime": rfc3339(self.clock.now()),
        }
        existing = (
            next((c for c in (pod.status.conditions or []) if c.type == "PodScheduled"), None) if pod.status else None
        )
        status: dict[str, object] = {"conditions": [condition]}
        if nomination is not None:
            status["nominatedNodeName"] = nomination or None
        unchanged = existing is not None and (existing.status, existing.reason, existing.message) == (
            "False",
            reason,
            message,
        )
        current_nomination = (pod.status.nominatedNodeName if pod.status else None) or ""
        if unchanged and (nomination is None or nomination == current_nomination):
            return
        with contextlib.suppress(ApiError):
            await self.cluster.patch(
                core_v1.Pod,
                name_of(pod),
                {"status": status},
                namespace=meta_of(pod).namespace,
                subresource="status",
                patch_type="strategic",
            )

    async def event(self, fwk: Framework, pod: object, type_: str, reason: str, action: str, note: str) -> None:
        """Record an event about `pod` (the API object) as the profile's scheduler."""
        with contextlib.suppress(NotFound):
            await self.recorders[fwk.profile_name].record(pod, type_, reason, action, note)
