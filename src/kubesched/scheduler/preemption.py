"""Acting on a preemption decision: the API side DefaultPreemption asks the scheduler for
(`PreemptionActions`), as upstream's executor does it."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lightkube.resources import core_v1

from kubesched.cache import PodInfo
from kubesched.clock.base import rfc3339
from kubesched.cluster import NotFound
from kubesched.plugins.default_preemption import preempted_message

if TYPE_CHECKING:
    from kubesched.framework.runtime import Framework
    from kubesched.scheduler.scheduler import Scheduler

PREEMPTION_REASON = "PreemptionByScheduler"


class Actions:
    """`PreemptionActions` for one profile of a scheduler."""

    def __init__(self, scheduler: Scheduler, fwk: Framework) -> None:
        self._scheduler = scheduler
        self._fwk = fwk

    def nominated_pods(self, node: str) -> Sequence[PodInfo]:
        return self._scheduler.queue.nominator.pods_for_node(node)

    async def clear_nomination(self, pod: PodInfo) -> None:
        await self._scheduler.cluster.patch(
            core_v1.Pod,
            pod.name,
            {"status": {"nominatedNodeName": None}},
            namespace=pod.namespace,
            subresource="status",
        )

    async def preempt(self, preemptor: PodInfo, victim: PodInfo, node: str) -> None:
        """A victim waiting at Permit is rejected in memory; any other gets the DisruptionTarget
        condition and is deleted (gracefully). Then the `Preempted` event."""
        s = self._scheduler
        s.trace.emit("preemption.victim", pod=victim.key, node=node, preemptor=preemptor.key)
        waiting = self._fwk.waiting_pods.get(victim.uid)
        if waiting is not None:
            waiting.reject("", "preempted")
        else:
            condition = {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": PREEMPTION_REASON,
                "message": f"{self._fwk.profile_name}: preempting to accommodate a higher priority pod",
                "lastTransitionTime": rfc3339(s.clock.now()),
            }
            with contextlib.suppress(NotFound):
                await s.cluster.patch(
                    core_v1.Pod,
                    victim.name,
                    {"status": {"conditions": [condition]}},
                    namespace=victim.namespace,
                    subresource="status",
                    patch_type="strategic",
                )
                await s.cluster.delete(core_v1.Pod, victim.name, namespace=victim.namespace)
        with contextlib.suppress(NotFound):
            await s.recorders[self._fwk.profile_name].record(
                victim.pod,
                "Normal",
                "Preempted",
                "Preempting",
                preempted_message(preemptor, node),
                related=preemptor.pod,
            )

    def activate(self, pod: PodInfo) -> None:
        self._scheduler.queue.activate(pod.uid, pod.key)

    def get_pod(self, namespace: str, name: str) -> Any | None:
        info = self._scheduler.cache.pod_by_key(f"{namespace}/{name}")
        return info.pod if info is not None else None
