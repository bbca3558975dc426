"""The PodGroup status controller (scheduler-plugins `pkg/controllers/podgroup_controller.go`):
keeps each group's `status` — phase, `occupiedBy`, running/succeeded/failed counts — current with
its pods.

Phases, one step per reconcile: none → Pending; Pending → Scheduling once the group has
`minMember` pods (`occupiedBy`: the first pod's owners, `<namespace>/<owner>`, sorted, joined by
","); then from the pods' phases: fewer pods than `minMember` → Pending; running + succeeded
short of `minMember` → Scheduling, else Running; any failed with failed + running + succeeded at
`minMember` → Failed; succeeded at `minMember` → Finished. Finished and Failed are final.

Deviation: a group's pods are those of its own namespace (upstream lists the label in every
namespace).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import msgspec
from lightkube.resources import core_v1

from kubesched.plugin.cluster import ApiError, NotFound
from kubesched.plugin.controllers import DELETED, Clock, Cluster, Gone
from kubesched_scheduler_plugins.apis import (
    FAILED,
    FINISHED,
    PENDING,
    POD_GROUP_LABEL,
    RUNNING,
    SCHEDULING,
    PodGroup,
)

TERMINAL = (FINISHED, FAILED)


def next_status(pg: Any, pods: list[Any]) -> dict[str, Any]:
    """The group's status after one reconcile, as JSON."""
    status = dict(_status(pg))
    phase = status.get("phase", "")
    min_member = pg.spec.minMember if pg.spec is not None else 0
    if phase == "":
        status["phase"] = PENDING
    elif phase == PENDING:
        if len(pods) >= min_member:
            status["phase"] = SCHEDULING
        if pods:
            owners = sorted(
                f"{pods[0].metadata.namespace}/{ref.name}" for ref in pods[0].metadata.ownerReferences or ()
            )
            if owners:
                status["occupiedBy"] = ",".join(owners)
    else:
        phases = [(p.status.phase if p.status else None) or "" for p in pods]
        running, succeeded, failed = (phases.count(x) for x in ("Running", "Succeeded", "Failed"))
        status.update(running=running, succeeded=succeeded, failed=failed)
        if len(pods) < min_member:
            status["phase"] = PENDING
        else:
            status["phase"] = SCHEDULING if succeeded + running < min_member else RUNNING
            if failed and failed + running + succeeded >= min_member:
                status["phase"] = FAILED
            if succeeded >= min_member:
                status["phase"] = FINISHED
    return status


def _status(pg: Any) -> dict[str, Any]:
    found: dict[str, Any] = msgspec.to_builtins(pg.status) if pg.status is not None else {}
    return found


class PodGroupController:
    """Reconciles a PodGroup whenever it or one of its pods changes."""

    def __init__(self, cluster: Cluster, clock: Clock) -> None:
        self.cluster = cluster
        self.clock = clock

    async def reconcile(self, namespace: str, name: str) -> None:
        try:
            pg = await self.cluster.get(PodGroup, name, namespace=namespace)
        except NotFound:
            return
        current = _status(pg)
        if current.get("phase") in TERMINAL:
            return
        listed = await self.cluster.list(core_v1.Pod, namespace=namespace, label_selector=f"{POD_GROUP_LABEL}={name}")
        new = next_status(pg, listed.items)
        if new != current:
            with contextlib.suppress(NotFound):
                await self.cluster.patch(PodGroup, name, {"status": new}, namespace=namespace, subresource="status")

    async def run(self) -> None:
        """Watch PodGroups and pods until cancelled."""
        await asyncio.gather(self._watch(PodGroup, self._group_of), self._watch(core_v1.Pod, self._pod_group))

    @staticmethod
    def _group_of(obj: Any) -> tuple[str, str] | None:
        return obj.metadata.namespace or "default", obj.metadata.name

    @staticmethod
    def _pod_group(obj: Any) -> tuple[str, str] | None:
        label = (obj.metadata.labels or {}).get(POD_GROUP_LABEL)
        return (obj.metadata.namespace or "default", label) if label else None

    async def _watch(self, kind: type[Any], target: Any) -> None:
        while True:
            try:
                listed = await self.cluster.list(kind)
                for obj in listed.items:
                    if (key := target(obj)) is not None:
                        await self._reconcile_quietly(*key)
                async for event in self.cluster.watch(kind, resource_version=listed.resource_version):
                    key = target(event.object)
                    if key is not None and not (event.type == DELETED and kind is PodGroup):
                        await self._reconcile_quietly(*key)
            except Gone:
                continue
            except (NotFound, TypeError):  # the CRD is not installed (yet): look again later
                await self.clock.sleep(5.0)

    async def _reconcile_quietly(self, namespace: str, name: str) -> None:
        with contextlib.suppress(ApiError):
            await self.reconcile(namespace, name)


def new(cluster: Cluster, clock: Clock) -> PodGroupController:
    return PodGroupController(cluster, clock)
