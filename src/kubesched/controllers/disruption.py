"""A disruption controller: keeps each PodDisruptionBudget's status current from the pods it
covers (expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed), as the real one does,
so that eviction and preemption read budgets that follow the cluster."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from typing import TypedDict, TypeVar

from lightkube.resources import core_v1, policy_v1

from kubesched.api.disruption import budget, covers
from kubesched.api.objects import Served, meta_of, name_of, namespace_of
from kubesched.clock import Clock
from kubesched.cluster import DELETED, ApiError, Cluster, WatchEvent
from kubesched.cluster.protocol import BOOKMARK
from kubesched.trace import Tracer

S = TypeVar("S", bound=Served)


class _Status(TypedDict):
    """The fields of a budget's status this controller keeps."""

    observedGeneration: int | None
    expectedPods: int
    currentHealthy: int
    desiredHealthy: int
    disruptionsAllowed: int


class DisruptionController:
    def __init__(self, cluster: Cluster, clock: Clock, *, tracer: Tracer | None = None) -> None:
        self._cluster = cluster
        self._clock = clock
        self._trace = tracer or Tracer(clock.now)
        self._pods: dict[str, dict[str, core_v1.Pod]] = {}  # namespace -> uid -> pod
        self._budgets: dict[str, dict[str, policy_v1.PodDisruptionBudget]] = {}  # namespace -> name -> PDB
        self._dirty: set[tuple[str, str]] = set()
        self._wakeup = asyncio.Event()

    async def run(self) -> None:
        """Serve until cancelled."""
        await asyncio.gather(
            self._watch(policy_v1.PodDisruptionBudget, self._on_budget),
            self._watch(core_v1.Pod, self._on_pod),
            self._sync(),
        )

    async def _watch(self, kind: type[S], handle: Callable[[WatchEvent[S]], None]) -> None:
        async for event in self._cluster.watch(kind):
            if event.type != BOOKMARK:
                handle(event)

    def _on_budget(self, event: WatchEvent[policy_v1.PodDisruptionBudget]) -> None:
        pdb = event.object
        ns, name = namespace_of(pdb) or "default", name_of(pdb)
        if event.type == DELETED:
            self._budgets.get(ns, {}).pop(name, None)
            return
        self._budgets.setdefault(ns, {})[name] = pdb
        self._mark([(ns, name)])

    def _on_pod(self, event: WatchEvent[core_v1.Pod]) -> None:
        pod = event.object
        ns, uid = namespace_of(pod) or "default", meta_of(pod).uid or ""
        old = self._pods.setdefault(ns, {}).get(uid)
        if event.type == DELETED:
            self._pods[ns].pop(uid, None)
        else:
            self._pods[ns][uid] = pod
        affected = [
            (ns, name)
            for name, pdb in self._budgets.get(ns, {}).items()
            if covers(pdb, pod) or (old is not None and covers(pdb, old))
        ]
        self._mark(affected)

    def _mark(self, budgets: Iterable[tuple[str, str]]) -> None:
        before = len(self._dirty)
        self._dirty.update(budgets)
        if len(self._dirty) > before:
            self._wakeup.set()

    async def _sync(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            await asyncio.sleep(0)  # let a burst of watch events arrive first
            dirty, self._dirty = self._dirty, set()
            for ns, name in sorted(dirty):
                pdb = self._budgets.get(ns, {}).get(name)
                if pdb is not None:
                    await self._write(pdb, self._pods.get(ns, {}).values())

    async def _write(self, pdb: policy_v1.PodDisruptionBudget, pods: Iterable[core_v1.Pod]) -> None:
        state = budget(pdb, pods)
        meta = meta_of(pdb)
        status: _Status = {
            "observedGeneration": meta.generation,
            "expectedPods": state.expected,
            "currentHealthy": state.current_healthy,
            "desiredHealthy": state.desired_healthy,
            "disruptionsAllowed": state.disruptions_allowed,
        }
        current = pdb.status
        if current is not None and all(getattr(current, k) == v for k, v in status.items()):
            return
        self._trace.emit("disruption.status", pdb=f"{meta.namespace}/{meta.name}", **status)
        with contextlib.suppress(ApiError):  # deleted meanwhile: nothing to keep current
            await self._cluster.patch(
                policy_v1.PodDisruptionBudget,
                name_of(pdb),
                {"status": status},
                namespace=meta.namespace,
                subresource="status",
            )
