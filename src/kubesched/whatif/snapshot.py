"""A cluster's scheduling state as one file: what the scheduler reads of a cluster, read from any
cluster (read-only), written as a `v1 List` YAML document, and put back into a memory store.

The kinds kept are the ones a scheduling decision depends on (nodes, pods, PriorityClasses,
budgets, the workloads spread defaults look at and the Deployments, DaemonSets and Jobs owning
them, volumes and their classes, DRA's objects, CustomResourceDefinitions with their objects,
such as a PodGroup) and the namespaces holding them. An owner reference to an object not kept is
dropped, so that a cluster started from the file has no garbage collector delete the pods.
Secrets are never read; pod specs keep the names of their environment variables but not their
values. Fields that only the API server's bookkeeping gives (managedFields, resourceVersion,
selfLink) are left out; UIDs, timestamps, generation and status are kept, so the same cluster
saved twice gives the same file, and a file restored and saved again gives it back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
from lightkube.core.dictmixin import DictMixin
from lightkube.resources import (
    apiextensions_v1,
    apps_v1,
    batch_v1,
    core_v1,
    policy_v1,
    resource_v1,
    scheduling_v1,
    storage_v1,
)

from kubesched.api import yamlfile
from kubesched.api.objects import Served, key_of
from kubesched.cluster import Cluster
from kubesched.cluster.codec import decoder
from kubesched.cluster.custom import custom_resource
from kubesched.cluster.errors import ApiError, NotFound
from kubesched.storage import MemoryStore
from kubesched.whatif.documents import listed, mapping, mappings, metadata, section, string

# Restored in this order: what an object refers to comes before it.
KINDS: tuple[type[Served], ...] = (
    core_v1.Namespace,
    scheduling_v1.PriorityClass,
    storage_v1.StorageClass,
    storage_v1.CSIDriver,
    apiextensions_v1.CustomResourceDefinition,
    core_v1.Node,
    storage_v1.CSINode,
    storage_v1.CSIStorageCapacity,
    core_v1.PersistentVolume,
    core_v1.PersistentVolumeClaim,
    resource_v1.DeviceClass,
    resource_v1.ResourceSlice,
    resource_v1.ResourceClaim,
    core_v1.Service,
    apps_v1.Deployment,
    apps_v1.DaemonSet,
    batch_v1.Job,
    core_v1.ReplicationController,
    apps_v1.ReplicaSet,
    apps_v1.StatefulSet,
    policy_v1.PodDisruptionBudget,
    core_v1.Pod,
)
# The kinds a label selector given to `read` filters: the namespaced objects of the workloads.
SELECTED: frozenset[type[Served]] = frozenset(
    {
        core_v1.Pod,
        core_v1.PersistentVolumeClaim,
        resource_v1.ResourceClaim,
        core_v1.Service,
        apps_v1.Deployment,
        apps_v1.DaemonSet,
        batch_v1.Job,
        core_v1.ReplicationController,
        apps_v1.ReplicaSet,
        apps_v1.StatefulSet,
        policy_v1.PodDisruptionBudget,
    }
)
VOLATILE = ("managedFields", "resourceVersion", "selfLink")
PAGE = 500  # objects a list request asks for at a time


class SnapshotError(ValueError):
    """A snapshot file that cannot be read, in one line naming what is wrong."""


@dataclass(frozen=True)
class Snapshot:
    """The objects, as plain documents (`apiVersion`, `kind`, ...), in restore order."""

    items: tuple[dict[str, object], ...]

    def of_kind(self, kind: str) -> list[dict[str, object]]:
        return [i for i in self.items if i.get("kind") == kind]

    def dumps(self) -> str:
        document = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": list(self.items)}
        return yamlfile.dumps(document)

    def save(self, path: Path) -> None:
        path.write_text(self.dumps())

    def restore(self, store: MemoryStore) -> int:
        """Put every object into `store` as it was (UID, timestamps and status kept); the namespaces
        the store already has are replaced by the snapshot's. The number of objects stored."""
        classes = custom_classes(self.of_kind("CustomResourceDefinition"))
        stored = 0
        for index, item in enumerate(self.items):
            cls = _class_of(item, classes)
            try:
                store.restore(decoder(cls).decode(json.dumps(item).encode()))
            except (ApiError, msgspec.ValidationError) as e:
                meta = metadata(item)
                name = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]
                raise SnapshotError(f"items[{index}] ({item.get('kind')} {name}): {e}") from None
            stored += 1
        return stored


_BUILT_IN = {(c._api_info.resource.api_version, c._api_info.resource.kind): c for c in KINDS}


def custom_classes(crds: Sequence[Mapping[str, object]]) -> dict[tuple[str, str], type[Served]]:
    """The resource class of each storage version the CRDs define, by (apiVersion, kind)."""
    out: dict[tuple[str, str], type[Served]] = {}
    for crd in crds:
        spec = mapping(crd["spec"], "spec")
        versions = [mapping(v, "spec.versions[]") for v in listed(spec["versions"], "spec.versions")]
        version = next((v for v in versions if v.get("storage")), versions[0])
        names = mapping(spec["names"], "spec.names")
        group, version_name = string(spec["group"], "spec.group"), string(version["name"], "spec.versions[].name")
        kind = string(names["kind"], "spec.names.kind")
        cls = custom_resource(
            group=group,
            version=version_name,
            kind=kind,
            plural=string(names["plural"], "spec.names.plural"),
            namespaced=spec.get("scope") == "Namespaced",
        )
        out[(f"{group}/{version_name}", kind)] = cls
    return out


def _class_of(item: Mapping[str, object], custom: dict[tuple[str, str], type[Served]]) -> type[Served]:
    api_version, kind = item.get("apiVersion", ""), item.get("kind", "")
    found = None
    if isinstance(api_version, str) and isinstance(kind, str):
        found = _BUILT_IN.get((api_version, kind)) or custom.get((api_version, kind))
    if found is None:
        raise SnapshotError(f"items: {api_version} {kind} is not a kind a snapshot holds")
    return found


def document_class(
    item: Mapping[str, object], custom: dict[tuple[str, str], type[Served]] | None = None
) -> type[Served]:
    """The resource class of a document: a built-in kind's, or one of `custom` (`custom_classes`);
    SnapshotError for any other kind."""
    return _class_of(item, custom or {})


def load(path: Path) -> Snapshot:
    """The snapshot in `path`; SnapshotError when it is not one."""
    try:
        document = yamlfile.load(path)
    except yamlfile.YamlError as e:
        raise SnapshotError(str(e)) from None
    if not isinstance(document, dict) or document.get("kind") != "List":
        raise SnapshotError(f"{path}: not a snapshot (a v1 List of objects)")
    items = document.get("items") or []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict) or "name" not in item["metadata"]:
            raise SnapshotError(f"{path}: items[{index}]: an object with metadata.name is required")
    snapshot = Snapshot(tuple(items))
    classes = custom_classes(snapshot.of_kind("CustomResourceDefinition"))
    for index, item in enumerate(items):
        try:
            _class_of(item, classes)
        except SnapshotError as e:
            raise SnapshotError(f"{path}: items[{index}]: {str(e).removeprefix('items: ')}") from None
    return snapshot


def plain(obj: object) -> dict[str, object]:
    """An object as the document a snapshot (or a recording) keeps: bookkeeping fields dropped, a
    pod's env variables without their values."""
    if not isinstance(obj, DictMixin):  # every served kind's class is one (custom kinds' too)
        raise TypeError(f"{type(obj).__name__}: not an object of a served kind")
    document: dict[str, object] = obj.to_dict()
    meta = section(document, "metadata")
    for key in VOLATILE:
        meta.pop(key, None)
    if document.get("kind") == "Pod":
        spec = section(document, "spec")
        for field in ("initContainers", "containers", "ephemeralContainers"):
            for container in mappings(spec, field):
                for variable in mappings(container, "env"):
                    variable.pop("value", None)
    return document


async def _all(cluster: Cluster, kind: type[Served], selector: str) -> list[Served]:
    items: list[Served] = []
    token: str | None = None
    while True:
        page = await cluster.list(kind, label_selector=selector, limit=PAGE, continue_token=token)
        items.extend(page.items)
        token = page.continue_token
        if not token:
            return items


async def read(cluster: Cluster, *, selector: str = "") -> Snapshot:
    """The snapshot of `cluster`, read with list requests only. `selector` (a label selector)
    keeps, of the workloads' namespaced objects (SELECTED), those it matches; the rest is read
    whole. The namespaces kept are those holding something kept."""
    groups: list[list[dict[str, object]]] = []
    for kind in KINDS:
        if kind is core_v1.Pod:  # the objects of the custom kinds, before the pods that name them
            for cls in custom_classes(groups[KINDS.index(apiextensions_v1.CustomResourceDefinition)]).values():
                groups.append(await _documents(cluster, cls, selector))
        groups.append(await _documents(cluster, kind, selector if kind in SELECTED else ""))
    used = {metadata(d).get("namespace") for group in groups for d in group} - {None}
    groups[0] = [d for d in groups[0] if metadata(d)["name"] in used]
    documents = [d for group in groups for d in group]
    kept = {metadata(d).get("uid") for d in documents}
    for d in documents:  # an owner left out would have a garbage collector delete what it owns
        meta = metadata(d)
        if meta.get("ownerReferences"):
            meta["ownerReferences"] = [o for o in mappings(meta, "ownerReferences") if o.get("uid") in kept] or None
            if meta["ownerReferences"] is None:
                del meta["ownerReferences"]
    return Snapshot(tuple(documents))


async def _documents(cluster: Cluster, kind: type[Served], selector: str) -> list[dict[str, object]]:
    try:
        objs = await _all(cluster, kind, selector)
    except NotFound:  # a kind this cluster does not serve (an API group switched off, say)
        return []
    return [plain(o) for o in sorted(objs, key=key_of)]
