"""The garbage collector (upstream `pkg/controller/garbagecollector`): objects whose owners are
all gone are deleted (background propagation); an owner deleted in the foreground keeps its
`foregroundDeletion` finalizer until its blocking dependents are gone; an owner deleted with
`orphan` has its references removed from its dependents, then its finalizer.

Every served kind is watched. An owner the caches do not hold is looked up in the API before a
dependent is judged dangling, so a dependent created just after its owner is never taken for an
orphan of a deleted one."""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Served, key_of, meta_of
from kubesched.cluster import NotFound
from kubesched.controllers.base import ControllerContext, patch_observed, work
from kubesched.controllers.informers import Informer
from kubesched.controllers.owners import finalizer_removal, release_patch
from kubesched.controllers.workqueue import WorkQueue
from kubesched.storage.deletion import FOREGROUND_FINALIZER, ORPHAN_FINALIZER

Item = tuple[type[Served], str, str]  # kind, namespace, name


def _kind_name(cls: type[Served]) -> tuple[str, str]:
    info = cls._api_info.resource
    return (f"{info.group}/{info.version}" if info.group else info.version), info.kind


class GarbageCollector:
    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        self._informers: dict[tuple[str, str], Informer] = {}
        for cls in ctx.kinds():
            informer = ctx.informers(cls)
            self._informers[_kind_name(cls)] = informer
            informer.add_handler(self._handler(cls))
        self._queue: WorkQueue[Item] = WorkQueue(ctx.clock)

    def _handler(self, cls: type[Served]) -> Any:
        def on_change(type_: str, obj: Any, old: Any | None) -> None:
            meta = obj.metadata
            item = (cls, meta.namespace or "", meta.name or "")
            if type_ == "DELETED":
                for dependent_cls, dependent in self._dependents(meta.uid):
                    self._queue.add((dependent_cls, *key_of(dependent)))
                self._wake_waiting_owners(obj)
                return
            finalizers = meta.finalizers or ()
            if meta.deletionTimestamp is not None and (
                FOREGROUND_FINALIZER in finalizers or ORPHAN_FINALIZER in finalizers
            ):
                self._queue.add(item)
            if any(self._unsettled(ref) for ref in meta.ownerReferences or ()):
                self._queue.add(item)

        return on_change

    def _unsettled(self, ref: object) -> bool:
        """Whether an owner reference needs a look: its owner not in the caches, or being
        deleted in the foreground."""
        owner = self._owner(ref)
        return owner is None or self._deleting_foreground(owner)

    def _wake_waiting_owners(self, dependent: Any) -> None:
        """A dependent gone: the owners deleting in the foreground may now be done."""
        for ref in dependent.metadata.ownerReferences or ():
            owner = self._owner(ref)
            if owner is not None and self._deleting_foreground(owner):
                informer = self._informers[(ref.apiVersion, ref.kind)]
                self._queue.add((informer.cls, *key_of(owner)))

    def _dependents(self, uid: str) -> list[tuple[type[Served], Any]]:
        return [(i.cls, obj) for i in self._informers.values() for obj in i.owned_by(uid)]

    def _owner(self, ref: Any) -> Any | None:
        informer = self._informers.get((ref.apiVersion, ref.kind))
        if informer is None:
            return _UNKNOWN
        owner = informer.by_uid(ref.uid)
        return owner

    @staticmethod
    def _deleting_foreground(owner: Any) -> bool:
        return (
            owner is not _UNKNOWN
            and owner.metadata.deletionTimestamp is not None
            and FOREGROUND_FINALIZER in (owner.metadata.finalizers or ())
        )

    async def run(self) -> None:
        await work(self._queue, self._process, name="garbagecollector")  # type: ignore[arg-type]

    async def _process(self, item: Item) -> None:
        cls, namespace, name = item
        informer = self._ctx.informers(cls)
        obj = informer.get((namespace, name))
        if obj is None:
            return
        meta = obj.metadata
        finalizers = meta.finalizers or ()
        if meta.deletionTimestamp is not None and ORPHAN_FINALIZER in finalizers:
            await self._orphan(cls, obj)
            return
        if meta.deletionTimestamp is not None and FOREGROUND_FINALIZER in finalizers:
            await self._foreground(cls, obj)
        if meta.ownerReferences:
            await self._attempt_delete(cls, obj)

    async def _orphan(self, cls: type[Served], owner: Any) -> None:
        for dep_cls, dependent in self._dependents(owner.metadata.uid):
            await self._patch(dep_cls, dependent, release_patch(dependent, owner.metadata.uid))
        await self._drop_finalizer(cls, owner, ORPHAN_FINALIZER)

    async def _foreground(self, cls: type[Served], owner: Any) -> None:
        dependents = self._dependents(owner.metadata.uid)
        blocking = [
            (c, d)
            for c, d in dependents
            if any(r.uid == owner.metadata.uid and r.blockOwnerDeletion for r in d.metadata.ownerReferences or ())
        ]
        if not blocking:
            await self._drop_finalizer(cls, owner, FOREGROUND_FINALIZER)
            return
        for dep_cls, dependent in dependents:
            if dependent.metadata.deletionTimestamp is None:
                await self._delete(dep_cls, dependent, "Foreground")

    async def _attempt_delete(self, cls: type[Served], obj: Any) -> None:
        """Delete `obj` when none of its owners is left; drop the references to owners that are
        gone when some are left."""
        solid, dangling, waiting = [], [], []
        for ref in obj.metadata.ownerReferences or ():
            owner = await self._live_owner(ref, obj.metadata.namespace)
            if owner is None:
                dangling.append(ref)
            elif self._deleting_foreground(owner):
                waiting.append(ref)
            else:
                solid.append(ref)
        if solid:
            for ref in dangling:
                await self._patch(cls, obj, release_patch(obj, ref.uid))
                obj = self._ctx.informers(cls).get(key_of(obj)) or obj
            return
        if obj.metadata.deletionTimestamp is not None:
            return
        if waiting:
            await self._delete(cls, obj, "Foreground")
        elif dangling:
            await self._delete(cls, obj, "Background")

    async def _live_owner(self, ref: Any, namespace: str | None) -> Any | None:
        owner = self._owner(ref)
        if owner is _UNKNOWN:
            return _UNKNOWN
        if owner is not None:
            return owner
        informer = self._informers[(ref.apiVersion, ref.kind)]
        try:
            live = await self._ctx.cluster.get(informer.cls, ref.name, namespace=namespace)
        except NotFound:
            return None
        return live if meta_of(live).uid == ref.uid else None

    async def _delete(self, cls: type[Served], obj: Any, policy: str) -> None:
        try:
            await self._ctx.cluster.delete(
                cls, obj.metadata.name, namespace=obj.metadata.namespace, propagation_policy=policy
            )
        except NotFound:
            return

    async def _patch(self, cls: type[Served], obj: object, patch: dict[str, object]) -> None:
        await patch_observed(self._ctx.cluster, self._ctx.informers(cls), obj, patch)

    async def _drop_finalizer(self, cls: type[Served], obj: object, finalizer: str) -> None:
        await self._patch(cls, obj, finalizer_removal(obj, finalizer))


class _Unknown:
    """An owner of a kind no informer holds: taken to exist (never a reason to delete)."""

    metadata: Any = None


_UNKNOWN: Any = _Unknown()
