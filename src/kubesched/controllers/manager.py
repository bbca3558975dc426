"""The controller manager: the built-in controllers by kube-controller-manager's names, chosen
with its `--controllers` syntax, run on shared informers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from lightkube.resources import core_v1

from kubesched.api.objects import Served
from kubesched.clock import Clock
from kubesched.cluster import Cluster
from kubesched.controllers.base import Controller, ControllerContext
from kubesched.controllers.daemonset import DaemonSetController
from kubesched.controllers.deployment import DeploymentController
from kubesched.controllers.disruption import DisruptionController
from kubesched.controllers.garbage_collector import GarbageCollector
from kubesched.controllers.informers import Informers
from kubesched.controllers.job import JobController
from kubesched.controllers.namespace import NamespaceController
from kubesched.controllers.replicaset import ReplicaSetController
from kubesched.controllers.serviceaccount import ServiceAccountController
from kubesched.controllers.statefulset import StatefulSetController
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.storage.conversion import VIEWS
from kubesched.trace import Tracer

_VIEWS = tuple(VIEWS)  # stored as another kind's objects
_UNWATCHED = (*_VIEWS, core_v1.Event)  # owned by nothing the garbage collector manages
Factory = Callable[[ControllerContext], Controller]

CONTROLLERS: dict[str, Factory] = {
    "daemonset": DaemonSetController,
    "deployment": DeploymentController,
    "disruption": lambda ctx: DisruptionController(ctx.cluster, ctx.clock, tracer=ctx.tracer),
    "garbagecollector": GarbageCollector,
    "job": JobController,
    "namespace": NamespaceController,
    "replicaset": ReplicaSetController,
    "serviceaccount": ServiceAccountController,
    "statefulset": StatefulSetController,
}


def parse_controllers(text: str) -> list[str]:
    """kube-controller-manager's `--controllers`: names to enable, `*` for every one, `-name` to
    leave one out; unknown names are a ValueError naming them."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    unknown = sorted({t.lstrip("-") for t in items if t != "*" and t.lstrip("-") not in CONTROLLERS})
    if unknown:
        raise ValueError(f"unknown controller(s) {', '.join(unknown)} (known: {', '.join(sorted(CONTROLLERS))})")
    chosen = set(CONTROLLERS) if "*" in items else set()
    chosen |= {t for t in items if t != "*" and not t.startswith("-")}
    chosen -= {t[1:] for t in items if t.startswith("-")}
    return sorted(chosen)


class ControllerManager:
    """The chosen controllers on one set of informers, started once every informer has listed."""

    def __init__(
        self,
        cluster: Cluster,
        clock: Clock,
        *,
        names: Iterable[str] = tuple(CONTROLLERS),
        tracer: Tracer | None = None,
        kinds: Callable[[], Iterable[type[Served]]] = lambda: (),
        namespaced_kinds: Callable[[], Iterable[type[Served]]] = lambda: (),
    ) -> None:
        self.informers = Informers(cluster)
        self.context = ControllerContext(
            cluster=cluster,
            clock=clock,
            informers=self.informers,
            tracer=tracer or Tracer(clock.now),
            kinds=kinds,
            namespaced_kinds=namespaced_kinds,
        )
        self.controllers: dict[str, Controller] = {name: CONTROLLERS[name](self.context) for name in names}

    @classmethod
    def on_store(
        cls,
        store: MemoryStore,
        clock: Clock,
        *,
        names: Iterable[str] = tuple(CONTROLLERS),
        tracer: Tracer | None = None,
    ) -> ControllerManager:
        """The controllers over a memory store: the garbage collector watching every kind served
        but Events, the namespace controller emptying every namespaced kind (views excepted)."""
        return cls(
            MemoryCluster(store),
            clock,
            names=names,
            tracer=tracer,
            kinds=lambda: [k.cls for k in store.kinds() if k.cls not in _UNWATCHED],
            namespaced_kinds=lambda: [k.cls for k in store.kinds() if k.namespaced and k.cls not in _VIEWS],
        )

    async def run(self) -> None:
        informers = asyncio.ensure_future(self.informers.run())
        try:
            await self.informers.wait_synced()
            await asyncio.gather(*(c.run() for c in self.controllers.values()))
        finally:
            informers.cancel()
            await asyncio.gather(informers, return_exceptions=True)
