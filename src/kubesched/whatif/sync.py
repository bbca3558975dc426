"""Keeping one cluster in step with another: the source followed with list and watch requests
only (never written), each object and change applied to the target — typically a `cluster up`
to try a scheduler or a configuration on a copy of production, as kube-scheduler-simulator's
syncer does.

What is applied: the snapshot's kinds (see `whatif.record`), as documents without the source's
uids, versions and owner references (the target's garbage collector would find the owners
missing); a pod created bound keeps its node, a pod bound later is bound in the target by a
Binding; labels, annotations and status follow; a deletion deletes (pods at once). An object
the target refuses is counted and named, and the sync goes on. Run the target without
controllers (`cluster up --controllers ''`), or they make their own pods for the synced
workloads.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from typing import cast

import msgspec
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.objects import Served, meta_of, present
from kubesched.cluster import ADDED, DELETED, Cluster, NotFound
from kubesched.cluster.errors import ApiError
from kubesched.whatif.documents import document_name, document_namespace, metadata, section, string
from kubesched.whatif.record import Follower
from kubesched.whatif.snapshot import SnapshotError, custom_classes, document_class

log = logging.getLogger(__name__)
DROPPED = ("uid", "resourceVersion", "creationTimestamp", "generation", "ownerReferences", "deletionTimestamp")
WITH_STATUS = frozenset({"Pod", "Node", "PersistentVolume", "PersistentVolumeClaim", "PodDisruptionBudget"})


class Syncer:
    """Applies `source`'s objects and changes to `target` (see the module). `synced` is set once
    the objects there at the start are applied; `applied` and `refused` count."""

    def __init__(self, source: Cluster, target: Cluster) -> None:
        self.target = target
        self._queue: asyncio.Queue[tuple[str, dict[str, object]] | None] = asyncio.Queue()
        self._follower = Follower(source, lambda type_, doc, _initial: self._queue.put_nowait((type_, doc)))
        self.synced = asyncio.Event()
        self.applied = 0
        self.refused = 0
        self.reasons: list[str] = []
        self._custom: dict[tuple[str, str], type[Served]] = {}  # the custom kinds of the CRDs seen

    async def run(self) -> None:
        following = asyncio.ensure_future(self._follower.follow(listed=lambda: self._queue.put_nowait(None)))
        try:
            while True:
                item = await self._queue.get()
                if item is None:
                    self.synced.set()
                    continue
                await self._apply(*item)
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)

    async def _apply(self, type_: str, document: dict[str, object]) -> None:
        meta = metadata(document)
        namespace = meta.get("namespace")
        what = f"{document.get('kind')} {f'{namespace}/' if namespace else ''}{meta['name']}"
        try:
            if document.get("kind") == "CustomResourceDefinition" and type_ != DELETED:
                self._custom |= custom_classes([document])
            cls = document_class(document, self._custom)
            if type_ == DELETED:
                await self._delete(cls, document)
            else:
                await self._upsert(cls, document, created=type_ == ADDED)
            self.applied += 1
        except (ApiError, SnapshotError, msgspec.ValidationError) as e:
            self.refused += 1
            if len(self.reasons) < 5:
                self.reasons.append(f"{what}: {e}")
            log.warning("sync: %s %s: %s", type_, what, e)

    async def _delete(self, cls: type[Served], document: dict[str, object]) -> None:
        grace = 0 if cls is core_v1.Pod else None
        name, namespace = document_name(document), document_namespace(document)
        with contextlib.suppress(NotFound):
            await self.target.delete(cls, name, namespace=namespace, grace_period_seconds=grace)

    async def _upsert(self, cls: type[Served], document: dict[str, object], *, created: bool) -> None:
        body = copy.deepcopy(document)
        meta = metadata(body)
        for key in DROPPED:
            meta.pop(key, None)
        status = body.pop("status", None)
        name, namespace = document_name(body), document_namespace(body)
        current: Served | None
        try:
            current = await self.target.get(cls, name, namespace=namespace)
        except NotFound:
            current = None
        if current is None:
            await self.target.create(_decoded(cls, body | ({"status": status} if status else {})), namespace=namespace)
        elif cls is core_v1.Pod:
            await self._follow_pod(cast(core_v1.Pod, current), body)  # got as a Pod: cls is core_v1.Pod
        else:
            meta["resourceVersion"] = meta_of(current).resourceVersion
            await self.target.update(_decoded(cls, body))
        if status and document.get("kind") in WITH_STATUS:
            patch = {"status": status}
            await self.target.patch(cls, name, patch, namespace=namespace, subresource="status")

    async def _follow_pod(self, current: core_v1.Pod, body: dict[str, object]) -> None:
        """A pod's changes a pod may have: its binding, its labels and annotations."""
        meta = metadata(body)
        name, namespace = document_name(body), document_namespace(body) or "default"
        node = section(body, "spec").get("nodeName")
        if node and not present(current.spec, "the pod's spec").nodeName:
            binding = core_v1.Binding(
                metadata=meta_v1.ObjectMeta(name=name, namespace=namespace),
                target=m.ObjectReference(kind="Node", name=string(node, "spec.nodeName")),
            )
            await self.target.bind(binding, namespace=namespace)
        changed: dict[str, object] = {}
        for field in ("labels", "annotations"):
            have, want = getattr(meta_of(current), field) or {}, section(meta, field)
            if have != want:
                changed[field] = {**dict.fromkeys(set(have) - set(want)), **want}
        if changed:
            await self.target.patch(core_v1.Pod, name, {"metadata": changed}, namespace=namespace)


def _decoded(cls: type[Served], body: dict[str, object]) -> Served:
    return msgspec.json.decode(json.dumps(body).encode(), type=cls)
