"""The garbage collector (upstream `pkg/controller/garbagecollector`): objects whose owners are
all gone are deleted (background propagation); an owner deleted in the foreground keeps its
`foregroundDeletion` finalizer until its blocking dependents are gone; an owner deleted with
`orphan` has its references removed from its dependents, then its finalizer.

Every served kind is watched. An owner the caches do not hold is looked up in the API before a
dependent is judged dangling, so a dependent created just after its owner is never taken for an
orphan of a deleted one."""

from __future__ import annotations

from lightkube.models import meta_v1

from kubesched.api.objects import Named, Served, key_of, meta_of, name_of
from kubesched.cluster import NotFound
from kubesched.controllers.base import ControllerContext, patch_observed, work
from kubesched.controllers.informers import Handler, Informer
from kubesched.controllers.owners import finalizer_removal, release_patch, uid_of
from kubesched.controllers.workqueue import WorkQueue
from kubesched.storage.deletion import FOREGROUND_FINALIZER, ORPHAN_FINALIZER

Item = tuple[type[Served], str, str]  # kind, namespace, name


def _kind_name(cls: type[Served]) -> tuple[str, str]:
    info = cls._api_info.resource
    return (f"{info.group}/{info.version}" if info.group else info.version), info.kind


class GarbageCollector:
    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        self._informers: dict[tuple[str, str], Informer[Served]] = {}
        for cls in ctx.kinds():
            informer = ctx.informers(cls)
            self._informers[_kind_name(cls)] = informer
            informer.add_handler(self._handler(cls))
        self._queue: WorkQueue[Item] = WorkQueue(ctx.clock)

    def _handler(self, cls: type[Served]) -> Handler[Served]:
        def on_change(type_: str, obj: Served, old: Served | None) -> None:
            meta = meta_of(obj)
            item = (cls, meta.namespace or "", meta.name or "")
            if type_ == "DELETED":
                for dependent_cls, dependent in self._dependents(uid_of(obj)):
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

    def _unsettled(self, ref: meta_v1.OwnerReference) -> bool:
        """Whether an owner reference needs a look: its owner not in the caches, or being
        deleted in the foreground."""
        owner = self._owner(ref)
        return owner is None or self._deleting_foreground(owner)

    def _wake_waiting_owners(self, dependent: Named) -> None:
        """A dependent gone: the owners deleting in the foreground may now be done."""
        for ref in meta_of(dependent).ownerReferences or ():
            owner = self._owner(ref)
            if owner is not None and self._deleting_foreground(owner):
                informer = self._informers[(ref.apiVersion, ref.kind)]
                self._queue.add((informer.cls, *key_of(owner)))

    def _dependents(self, uid: str) -> list[tuple[type[Served], Served]]:
        return [(i.cls, obj) for i in self._informers.values() for obj in i.owned_by(uid)]

    def _owner(self, ref: meta_v1.OwnerReference) -> Named | None:
        informer = self._informers.get((ref.apiVersion, ref.kind))
        if informer is None:
            return _UNKNOWN
        owner = informer.by_uid(ref.uid)
        return owner

    @staticmethod
    def _deleting_foreground(owner: Named) -> bool:
        if owner is _UNKNOWN:
            return False
        meta = meta_of(owner)
        return meta.deletionTimestamp is not None and FOREGROUND_FINALIZER in (meta.finalizers or ())

    async def run(self) -> None:
        await work(self._queue, self._process, name="garbagecollector")

    async def _process(self, item: Item) -> None:
        cls, namespace, name = item
        informer = self._ctx.informers(cls)
        obj = informer.get((namespace, name))
        if obj is None:
            return
        meta = meta_of(obj)
        finalizers = meta.finalizers or ()
        if meta.deletionTimestamp is not None and ORPHAN_FINALIZER in finalizers:
            await self._orphan(cls, obj)
            return
        if meta.deletionTimestamp is not None and FOREGROUND_FINALIZER in finalizers:
            await self._foreground(cls, obj)
        if meta.ownerReferences:
            await self._attempt_delete(cls, obj)

    async def _orphan(self, cls: type[Served], owner: Served) -> None:
        uid = uid_of(owner)
        for dep_cls, dependent in self._dependents(uid):
            await self._patch(dep_cls, dependent, release_patch(dependent, uid))
        await self._drop_finalizer(cls, owner, ORPHAN_FINALIZER)

    async def _foreground(self, cls: type[Served], owner: Served) -> None:
        uid = uid_of(owner)
        dependents = self._dependents(uid)
        blocking = [
            (c, d)
            for c, d in dependents
            if any(r.uid == uid and r.blockOwnerDeletion for r in meta_of(d).ownerReferences or ())
        ]
        if not blocking:
            await self._drop_finalizer(cls, owner, FOREGROUND_FINALIZER)
            return
        for dep_cls, dependent in dependents:
            if meta_of(dependent).deletionTimestamp is None:
                await self._delete(dep_cls, dependent, "Foreground")

    async def _attempt_delete(self, cls: type[Served], obj: Served) -> None:
        """Delete `obj` when none of its owners is left; drop the references to owners that are
        gone when some are left."""
        solid: list[meta_v1.OwnerReference] = []
        dangling: list[meta_v1.OwnerReference] = []
        waiting: list[meta_v1.OwnerReference] = []
        meta = meta_of(obj)
        for ref in meta.ownerReferences or ():
            owner = await self._live_owner(ref, meta.namespace)
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
        if meta_of(obj).deletionTimestamp is not None:
            return
        if waiting:
            await self._delete(cls, obj, "Foreground")
        elif dangling:
            await self._delete(cls, obj, "Background")

    async def _live_owner(self, ref: meta_v1.OwnerReference, namespace: str | None) -> Named | None:
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

    async def _delete(self, cls: type[Served], obj: Named, policy: str) -> None:
        try:
            await self._ctx.cluster.delete(
                cls, name_of(obj), namespace=meta_of(obj).namespace, propagation_policy=policy
            )
        except NotFound:
            return

    async def _patch(self, cls: type[Served], obj: Named, patch: dict[str, object]) -> None:
        await patch_observed(self._ctx.cluster, self._ctx.informers(cls), obj, patch)

    async def _drop_finalizer(self, cls: type[Served], obj: Named, finalizer: str) -> None:
        await self._patch(cls, obj, finalizer_removal(obj, finalizer))


class _Unknown:
    """An owner of a kind no informer holds: taken to exist (never a reason to delete)."""

    metadata: meta_v1.ObjectMeta | None = None


_UNKNOWN = _Unknown()
