"""The namespace controller (upstream `pkg/controller/namespace`): a namespace being deleted is
emptied — every object of every namespaced kind deleted, pods gracefully — its status
conditions saying what remains, and once nothing does, finalized (the `kubernetes` finalizer
removed), which lets the API server remove it."""

from __future__ import annotations

from collections import Counter

import msgspec
from lightkube.resources import core_v1

from kubesched.api.objects import Served, key_of, meta_of, name_of, present
from kubesched.clock.base import rfc3339
from kubesched.cluster import NotFound
from kubesched.controllers.base import ControllerContext, work, write_status
from kubesched.controllers.informers import Key
from kubesched.controllers.workqueue import WorkQueue
from kubesched.storage.strategy import NAMESPACE_FINALIZER

RECHECK_SECONDS = 1.0  # how soon a namespace with content left is looked at again, at the latest


def _plural(cls: type[Served]) -> str:
    info = cls._api_info
    return f"{info.plural}.{info.resource.group}"  # upstream prints "pods." for the core group


class NamespaceController:
    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        self._namespaces = ctx.informers(core_v1.Namespace)
        self._queue: WorkQueue[Key] = WorkQueue(ctx.clock)
        self._namespaces.add_handler(self._on_namespace)

    def _on_namespace(self, type_: str, ns: core_v1.Namespace, old: core_v1.Namespace | None) -> None:
        if type_ != "DELETED" and meta_of(ns).deletionTimestamp is not None:
            self._queue.add(key_of(ns))

    async def run(self) -> None:
        await work(self._queue, self.sync, name="namespace")

    async def sync(self, key: Key) -> None:
        ns = self._namespaces.get(key)
        if ns is None or meta_of(ns).deletionTimestamp is None:
            return
        name = meta_of(ns).name
        remaining: Counter[str] = Counter()
        finalizing: Counter[str] = Counter()
        for cls in self._ctx.namespaced_kinds():
            listed = await self._ctx.cluster.list(cls, namespace=name)
            for obj in listed.items:
                meta = meta_of(obj)
                remaining[_plural(cls)] += 1
                for finalizer in meta.finalizers or ():
                    finalizing[finalizer] += 1
                if meta.deletionTimestamp is None:
                    try:
                        await self._ctx.cluster.delete(cls, name_of(obj), namespace=name)
                    except NotFound:
                        continue
        if remaining:
            await self._write_conditions(ns, remaining, finalizing)
            self._queue.add_after(key, RECHECK_SECONDS)
            return
        spec = present(ns.spec, "the namespace's spec")
        finalizers = [f for f in spec.finalizers or () if f != NAMESPACE_FINALIZER]
        finalized = msgspec.structs.replace(ns, spec=msgspec.structs.replace(spec, finalizers=finalizers))
        try:
            await self._ctx.cluster.update(finalized, subresource="finalize")
        except NotFound:
            return

    async def _write_conditions(self, ns: core_v1.Namespace, remaining: Counter[str], finalizing: Counter[str]) -> None:
        """The conditions upstream's deleter reports while content is left."""
        stamp = rfc3339(self._ctx.clock.now())
        content = ", ".join(f"{kind} has {n} resource instances" for kind, n in sorted(remaining.items()))
        finalizers = ", ".join(f"{f} in {n} resource instances" for f, n in sorted(finalizing.items()))
        wanted = [
            (
                "NamespaceDeletionDiscoveryFailure",
                "False",
                "ResourcesDiscovered",
                "All resources successfully discovered",
            ),
            (
                "NamespaceDeletionGroupVersionParsingFailure",
                "False",
                "ParsedGroupVersions",
                "All legacy kube types successfully parsed",
            ),
            (
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization",
            ),
            ("NamespaceContentRemaining", "True", "SomeResourcesRemain", f"Some resources are remaining: {content}"),
            (
                "NamespaceFinalizersRemaining",
                "True" if finalizing else "False",
                "SomeFinalizersRemain" if finalizing else "ContentHasNoFinalizers",
                f"Some content in the namespace has finalizers remaining: {finalizers}"
                if finalizing
                else "All content-preserving finalizers finished",
            ),
        ]
        before = {c.type: c for c in (ns.status.conditions if ns.status else None) or ()}
        conditions = []
        for type_, status, reason, message in wanted:
            old = before.get(type_)
            since = stamp
            if old is not None and (old.status, old.reason, old.message) == (status, reason, message):
                since = rfc3339(old.lastTransitionTime.timestamp()) if old.lastTransitionTime else stamp
            conditions.append(
                {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": since}
            )
        if all(
            type_ in before and (before[type_].status, before[type_].reason, before[type_].message) == (s, r, m)
            for type_, s, r, m in wanted
        ):
            return
        await write_status(self._ctx.cluster, self._namespaces, ns, {"conditions": conditions})
