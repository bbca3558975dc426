"""Informers plugins ask for through their handle: one per kind, listed and watched with the
scheduler's own, feeding the plugins' handlers and requeueing the pods whose rejecting plugins
registered events of that kind."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from lightkube.resources import core_v1

from kubesched.api.objects import Served, meta_of, served
from kubesched.cluster import DELETED, Cluster, NotFound, WatchEvent
from kubesched.cluster.kinds import KINDS
from kubesched.framework.events import ActionType, ClusterEvent
from kubesched.framework.handle import Informer, InformerHandler
from kubesched.scheduler.reflector import list_until_listed, reflect
from kubesched.trace import Tracer

T = TypeVar("T")
FED: frozenset[type[Served]] = frozenset({core_v1.Pod})  # kinds the scheduler watches anyway
Requeue = Callable[[ClusterEvent, object, object], None]  # (event, old object, new object)


def event_resource(kind: type[Served]) -> str:
    """The resource name cluster events of `kind` carry, as upstream's `EventResource`: the kind for
    the core group's (`PersistentVolumeClaim`), `<group>/<kind>` for Kubernetes' other groups
    (`storage.k8s.io/CSINode`), `<plural>.<version>.<group>` for custom kinds
    (`podgroups.v1alpha1.scheduling.x-k8s.io`)."""
    info = kind._api_info
    group = info.resource.group
    if kind.__module__.startswith("lightkube.resources"):
        return f"{group}/{info.resource.kind}" if group else str(info.resource.kind)
    return f"{info.plural}.{info.resource.version}" + (f".{group}" if group else "")


def served_kinds_of(resources: Iterable[str]) -> list[type[Served]]:
    """The served kinds whose cluster events are among `resources`: what upstream's
    `addAllEventHandlers` watches for the events the profiles' plugins registered (Pods and Nodes
    are the scheduler's own informers)."""
    wanted = set(resources)
    return [cls for cls in KINDS if cls not in (core_v1.Pod, core_v1.Node) and event_resource(cls) in wanted]


def _key(obj: Any) -> tuple[str, str]:  # Any: a served object (its metadata is set), read unchecked per event
    meta = obj.metadata
    return meta.namespace or "", meta.name


class KindInformer:
    """The objects of one kind as last seen, and the handlers to tell of changes."""

    def __init__(self, kind: type[Served]) -> None:
        self.kind = kind
        self.resource = event_resource(kind)
        # Any: objects of `kind`, whichever kind (see `informer`), read unchecked per event
        self.objects: dict[tuple[str, str], Any] = {}
        self.handlers: list[InformerHandler] = []

    def list(self) -> list[Any]:  # Any: as `objects`'
        return list(self.objects.values())

    def __len__(self) -> int:
        return len(self.objects)

    def get(self, name: str, namespace: str | None = None) -> Any | None:  # Any: as `objects`'
        return self.objects.get((namespace or "", name))

    def add_handler(self, handler: InformerHandler) -> None:
        self.handlers.append(handler)

    def changed(self, old: object | None, new: object | None) -> None:
        for handler in self.handlers:
            handler(old, new)


class SharedInformers:
    """`InformerFactory` for a scheduler: informers made while its profiles are built, started with it.
    The Pod informer is fed from the scheduler's own pod watch (`feed`), not watched twice."""

    def __init__(self, cluster: Cluster, tracer: Tracer, requeue: Requeue) -> None:
        self._cluster = cluster
        self._trace = tracer
        self._requeue = requeue
        self.informers: dict[type[object], KindInformer] = {}

    def informer(self, kind: type[T]) -> Informer[T]:
        found = self.informers.get(kind)
        if found is None:
            if not served(kind):
                raise TypeError(f"{kind.__name__}: not a kind the API serves")
            found = self.informers[kind] = KindInformer(kind)
        return found

    async def start(self) -> list[asyncio.Task[None]]:
        """List every kind asked for, then watch each in a task of its own. A kind the cluster does
        not serve (a CRD not installed) is traced once and stays empty."""
        tasks = []
        for informer in list(self.informers.values()):
            if informer.kind in FED:
                continue
            try:
                relist = functools.partial(self._relist, informer)
                rv = await list_until_listed(relist, informer.kind, trace=self._trace)
            except (NotFound, TypeError):
                self._trace.emit("informer.not_served", resource=informer.resource)
                continue
            watch = reflect(
                self._cluster,
                informer.kind,
                resource_version=rv,
                relist=functools.partial(self._relist, informer),
                handle=functools.partial(self._on_event, informer),
                trace=self._trace,
            )
            tasks.append(asyncio.get_running_loop().create_task(watch, name=informer.resource))
        return tasks

    async def _relist(self, informer: KindInformer) -> str:
        listed = await self._cluster.list(informer.kind)
        fresh = {_key(o): o for o in listed.items}
        for key in [k for k in informer.objects if k not in fresh]:
            self._apply(informer, informer.objects.pop(key), None)
        for key, obj in fresh.items():
            old = informer.objects.get(key)
            if old is None or old.metadata.resourceVersion != meta_of(obj).resourceVersion:
                informer.objects[key] = obj
                self._apply(informer, old, obj)
        return listed.resource_version

    def _on_event(self, informer: KindInformer, event: WatchEvent[object]) -> None:
        key = _key(event.object)
        old = informer.objects.get(key)
        if event.type == DELETED:
            informer.objects.pop(key, None)
            self._apply(informer, old or event.object, None)
        else:
            informer.objects[key] = event.object
            self._apply(informer, old, event.object)

    def fed(self, kind: type[Served]) -> KindInformer | None:
        """The informer of a kind the scheduler feeds itself, if a plugin asked for it."""
        return self.informers.get(kind)

    @staticmethod
    def feed(informer: KindInformer, obj: Any, *, deleted: bool = False) -> None:  # Any: as `objects`'
        """One object as the scheduler's own watch saw it (its handlers are told; no requeue: the
        scheduler's handling of the same event does that)."""
        key = _key(obj)
        old = informer.objects.get(key)
        if deleted:
            if informer.objects.pop(key, None) is not None:
                informer.changed(old, None)
            return
        if old is not None and old.metadata.resourceVersion == obj.metadata.resourceVersion:
            return
        informer.objects[key] = obj
        informer.changed(old, obj)

    def _apply(self, informer: KindInformer, old: object | None, new: object | None) -> None:
        informer.changed(old, new)
        action = ActionType.ADD if old is None else ActionType.DELETE if new is None else ActionType.UPDATE
        self._requeue(ClusterEvent(informer.resource, action), old, new)
