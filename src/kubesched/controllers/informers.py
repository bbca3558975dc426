"""One watch per kind shared by every controller: the kind's objects by key, by uid and by the
owners their ownerReferences name, and the handlers each change is handed to.

A controller that writes an object tells the informer what the API answered (`observe`), so its
next sync sees its own writes before the watch delivers them, as client-go's mutation cache
lets a controller do; the watch's copy of the same version changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, cast

from kubesched.api.objects import Named, Served, key_of, meta_of
from kubesched.cluster import DELETED, Cluster, Gone
from kubesched.cluster.protocol import ADDED, BOOKMARK, MODIFIED

S = TypeVar("S", bound=Served)
T = TypeVar("T")

Key = tuple[str, str]  # namespace ("" for cluster-scoped kinds), name
Handler = Callable[[str, T, T | None], None]  # event type, object, the object as it was before


def _version(obj: Named) -> int:
    try:
        return int(meta_of(obj).resourceVersion or 0)
    except ValueError:
        return 0


class Informer(Generic[S]):
    """A kind's objects as its watch last told them (and as this process last wrote them)."""

    def __init__(self, cluster: Cluster, cls: type[S]) -> None:
        self.cls = cls
        self._cluster = cluster
        self._objects: dict[Key, S] = {}
        self._by_uid: dict[str, Key] = {}
        self._owned: dict[str, set[Key]] = {}  # owner uid -> keys of the objects naming it
        self._orphans: dict[str, set[Key]] = {}  # namespace -> keys of the objects no controller owns
        self._controlled: dict[str, set[Key]] = {}  # controller uid -> keys of the objects it controls
        self._removed: dict[Key, int] = {}  # keys removed by this process's writes, at the version they went
        self._watched: dict[Key, S] = {}  # each object as the watch last delivered it: what handlers compare with
        self._handlers: list[Handler[S]] = []
        self.synced = asyncio.Event()

    def add_handler(self, handler: Handler[S]) -> None:
        self._handlers.append(handler)

    # -- reading -----------------------------------------------------------------------------

    def get(self, key: Key) -> S | None:
        return self._objects.get(key)

    def by_uid(self, uid: str) -> S | None:
        key = self._by_uid.get(uid)
        return None if key is None else self._objects.get(key)

    def owned_by(self, uid: str) -> list[S]:
        """The objects whose ownerReferences name `uid`."""
        return [self._objects[k] for k in self._owned.get(uid, ()) if k in self._objects]

    def controlled_by(self, uid: str) -> list[S]:
        """The objects whose controller reference names `uid`."""
        return [self._objects[k] for k in self._controlled.get(uid, ()) if k in self._objects]

    def orphans(self, namespace: str) -> list[S]:
        """The objects of `namespace` without a controller reference."""
        return [self._objects[k] for k in self._orphans.get(namespace, ()) if k in self._objects]

    def items(self, namespace: str | None = None) -> Iterator[S]:
        for (ns, _), obj in self._objects.items():
            if namespace is None or ns == namespace:
                yield obj

    def __len__(self) -> int:
        return len(self._objects)

    # -- writing -----------------------------------------------------------------------------

    def observe(self, obj: S | None) -> None:
        """What a write of this process returned: kept unless the cache already holds a later version."""
        if obj is None:
            return
        key = key_of(obj)
        current = self._objects.get(key)
        if current is None or _version(obj) > _version(current):
            self._put(key, obj)

    def observe_removed(self, obj: Named) -> None:
        """An object this process's write removed (`obj` as the API returned it)."""
        key = key_of(obj)
        self._removed[key] = _version(obj)
        self._drop(key)

    def _put(self, key: Key, obj: S) -> None:
        old = self._objects.get(key)
        if old is not None:
            self._unindex(key, old)
        self._objects[key] = obj
        meta = meta_of(obj)
        self._by_uid[meta.uid or ""] = key
        refs = meta.ownerReferences or ()
        for ref in refs:
            self._owned.setdefault(ref.uid, set()).add(key)
        controller = next((ref for ref in refs if ref.controller), None)
        if controller is None:
            self._orphans.setdefault(key[0], set()).add(key)
        else:
            self._controlled.setdefault(controller.uid, set()).add(key)

    def _drop(self, key: Key) -> S | None:
        old = self._objects.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def _unindex(self, key: Key, obj: S) -> None:
        meta = meta_of(obj)
        uid = meta.uid or ""
        if self._by_uid.get(uid) == key:
            del self._by_uid[uid]
        orphans = self._orphans.get(key[0])
        if orphans is not None:
            orphans.discard(key)
        controller = next((ref for ref in meta.ownerReferences or () if ref.controller), None)
        if controller is not None and (controlled := self._controlled.get(controller.uid)) is not None:
            controlled.discard(key)
            if not controlled:
                del self._controlled[controller.uid]
        for ref in meta.ownerReferences or ():
            owned = self._owned.get(ref.uid)
            if owned is not None:
                owned.discard(key)
                if not owned:
                    del self._owned[ref.uid]

    # -- the watch ---------------------------------------------------------------------------

    def _apply(self, type_: str, obj: S) -> None:
        key = key_of(obj)
        old = self._watched.pop(key, None)
        if type_ == DELETED:
            self._removed.pop(key, None)
            gone = self._drop(key)
            for handler in self._handlers:
                handler(DELETED, gone if gone is not None else obj, None)
            return
        self._watched[key] = obj
        removed_at = self._removed.get(key)
        if removed_at is not None:
            if _version(obj) <= removed_at:
                return  # a version from before this process removed it
            del self._removed[key]
        cached = self._objects.get(key)
        if cached is None or _version(obj) >= _version(cached):
            self._put(key, obj)
        for handler in self._handlers:
            handler(ADDED if old is None else MODIFIED, obj, old)

    async def run(self) -> None:
        """List, then watch from the list's version until cancelled: resume from the last
        version seen when the watch ends, relist when that version is Gone (what vanished
        meanwhile is handed on as deleted)."""
        version: str | None = None
        while True:
            if version is None:
                version = await self._relist()
            try:
                async for event in self._cluster.watch(self.cls, resource_version=version):
                    if event.type != BOOKMARK:
                        self._apply(event.type, event.object)
                    version = meta_of(event.object).resourceVersion or version
            except Gone:
                version = None
            await asyncio.sleep(0)

    async def _relist(self) -> str:
        listed = await self._cluster.list(self.cls)
        present = {key_of(obj) for obj in listed.items}
        for key in [k for k in self._objects if k not in present]:
            self._apply(DELETED, self._objects[key])
        for obj in listed.items:
            self._apply(ADDED, obj)
        self.synced.set()
        return listed.resource_version


class Informers:
    """The informers of one controller manager, made on first request, started together."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._informers: dict[type[Served], Informer[Served]] = {}

    def __call__(self, cls: type[S]) -> Informer[S]:
        informer = self._informers.get(cls)
        if informer is None:
            informer = self._informers[cls] = Informer(self._cluster, cls)
        return cast("Informer[S]", informer)  # each class's informer is made of that class

    def all(self) -> list[Informer[Served]]:
        return list(self._informers.values())

    async def run(self) -> None:
        await asyncio.gather(*(i.run() for i in self._informers.values()))

    async def wait_synced(self) -> None:
        await asyncio.gather(*(i.synced.wait() for i in self._informers.values()))
