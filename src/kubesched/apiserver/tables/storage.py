"""Printers of the storage kinds: PersistentVolumes and their claims, StorageClasses, CSI nodes,
drivers and capacities, VolumeAttachments."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lightkube.models import core_v1 as m
from lightkube.models import storage_v1 as storage_m
from lightkube.resources import core_v1, storage_v1

from kubesched.api.objects import Named, name_of
from kubesched.apiserver.tables.printing import (
    AGE,
    NONE,
    UNSET,
    Cell,
    Col,
    Printer,
    Printers,
    age,
    being_deleted,
    cells,
    created,
    name_col,
)

_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
_DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def _access_modes(modes: Iterable[str] | None) -> str:
    present = set(modes or ())
    return ",".join(short for mode, short in _ACCESS_MODES if mode in present)


def _storage_class_of(obj: Named, spec: m.PersistentVolumeSpec | m.PersistentVolumeClaimSpec | None) -> str:
    annotations = (obj.metadata.annotations if obj.metadata else None) or {}
    if _STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[_STORAGE_CLASS_ANNOTATION])
    return (spec.storageClassName if spec else None) or ""


def _storage(resources: Mapping[str, object] | None) -> str:
    value = (resources or {}).get("storage")
    return "0" if value is None else str(value)


def _pv_cells(pv: m.PersistentVolume, now: float) -> list[Cell]:
    spec, status = pv.spec, pv.status
    claim = spec.claimRef if spec else None
    claim_cell = f"{claim.namespace or ''}/{claim.name or ''}" if claim else ""
    phase = "Terminating" if being_deleted(pv) else (status.phase if status else None) or ""
    return [
        name_of(pv),
        _storage(spec.capacity if spec else None),
        _access_modes(spec.accessModes if spec else None),
        (spec.persistentVolumeReclaimPolicy if spec else None) or "",
        phase,
        claim_cell,
        _storage_class_of(pv, spec),
        (spec.volumeAttributesClassName if spec else None) or UNSET,
        (status.reason if status else None) or "",
        age(created(pv), now),
        (spec.volumeMode if spec else None) or UNSET,
    ]


_PERSISTENT_VOLUME = Printer(
    (
        name_col(),
        Col("Capacity", description="The volume's storage capacity."),
        Col("Access Modes", description="How the volume may be mounted."),
        Col("Reclaim Policy", description="What happens to the volume when its claim goes."),
        Col("Status", description="The volume's phase."),
        Col("Claim", description="The claim bound to the volume, as namespace/name."),
        Col("StorageClass", description="The volume's storage class."),
        Col("VolumeAttributesClass", description="The volume's attributes class."),
        Col("Reason", description="Why the volume is in its phase."),
        AGE,
        Col("VolumeMode", description="Filesystem or Block.", priority=1),
    ),
    cells(_pv_cells),
)


def _pvc_cells(pvc: m.PersistentVolumeClaim, now: float) -> list[Cell]:
    spec, status = pvc.spec, pvc.status
    volume = (spec.volumeName if spec else None) or ""
    capacity = access = ""
    if volume:
        capacity = _storage(status.capacity if status else None)
        access = _access_modes(status.accessModes if status else None)
    phase = "Terminating" if being_deleted(pvc) else (status.phase if status else None) or ""
    return [
        name_of(pvc),
        phase,
        volume,
        capacity,
        access,
        _storage_class_of(pvc, spec),
        (spec.volumeAttributesClassName if spec else None) or UNSET,
        age(created(pvc), now),
        (spec.volumeMode if spec else None) or UNSET,
    ]


_PERSISTENT_VOLUME_CLAIM = Printer(
    (
        name_col(),
        Col("Status", description="The claim's phase."),
        Col("Volume", description="The volume bound to the claim."),
        Col("Capacity", description="The bound volume's capacity."),
        Col("Access Modes", description="How the bound volume may be mounted."),
        Col("StorageClass", description="The claim's storage class."),
        Col("VolumeAttributesClass", description="The claim's attributes class."),
        AGE,
        Col("VolumeMode", description="Filesystem or Block.", priority=1),
    ),
    cells(_pvc_cells),
)


def _storage_class_cells(sc: storage_m.StorageClass, now: float) -> list[Cell]:
    annotations = (sc.metadata.annotations if sc.metadata else None) or {}
    name = name_of(sc)
    if any(annotations.get(key) == "true" for key in _DEFAULT_CLASS_ANNOTATIONS):
        name += " (default)"
    return [
        name,
        sc.provisioner or "",
        sc.reclaimPolicy or "Delete",
        sc.volumeBindingMode or "Immediate",
        bool(sc.allowVolumeExpansion),
        age(created(sc), now),
    ]


_STORAGE_CLASS = Printer(
    (
        name_col(),
        Col("Provisioner", description="The driver that provisions volumes of this class."),
        Col("ReclaimPolicy", description="The reclaim policy of volumes it provisions."),
        Col("VolumeBindingMode", description="When claims are bound and provisioned."),
        Col("AllowVolumeExpansion", description="Whether claims of this class may grow."),
        AGE,
    ),
    cells(_storage_class_cells),
)

_CSI_NODE: Printer[storage_m.CSINode] = Printer(
    (name_col(), Col("Drivers", type="integer", description="CSI drivers registered on the node."), AGE),
    cells(lambda n, now: [name_of(n), len((n.spec.drivers if n.spec else None) or ()), age(created(n), now)]),
)


def _csi_driver_cells(d: storage_m.CSIDriver, now: float) -> list[Cell]:
    spec = d.spec
    attach = True if spec is None or spec.attachRequired is None else bool(spec.attachRequired)
    tokens = spec.tokenRequests if spec else None
    modes = ",".join((spec.volumeLifecycleModes if spec else None) or ())
    return [
        name_of(d),
        attach,
        bool(spec and spec.podInfoOnMount),
        bool(spec and spec.storageCapacity),
        UNSET if tokens is None else ",".join(t.audience or "" for t in tokens),
        bool(spec and spec.requiresRepublish),
        modes or NONE,
        age(created(d), now),
    ]


_CSI_DRIVER = Printer(
    (
        name_col(),
        Col("AttachRequired", type="boolean", description="Whether volumes need an attach step."),
        Col("PodInfoOnMount", type="boolean", description="Whether mounts receive pod information."),
        Col("StorageCapacity", type="boolean", description="Whether the scheduler checks capacity."),
        Col("TokenRequests", description="Audiences of service account tokens passed on mount."),
        Col("RequiresRepublish", type="boolean", description="Whether volumes are re-published periodically."),
        Col("Modes", description="Volume lifecycle modes supported."),
        AGE,
    ),
    cells(_csi_driver_cells),
)

_CSI_STORAGE_CAPACITY: Printer[storage_m.CSIStorageCapacity] = Printer(
    (
        name_col(),
        Col("StorageClassName", description="The storage class the capacity is for."),
        Col("Capacity", description="Capacity available in the topology segment."),
    ),
    cells(lambda c, now: [name_of(c), c.storageClassName or "", UNSET if c.capacity is None else str(c.capacity)]),
)


def _volume_attachment_cells(va: storage_m.VolumeAttachment, now: float) -> list[Cell]:
    spec = va.spec
    source = spec.source if spec else None
    return [
        name_of(va),
        (spec.attacher if spec else None) or "",
        (source.persistentVolumeName if source else None) or "",
        (spec.nodeName if spec else None) or "",
        bool(va.status and va.status.attached),
        age(created(va), now),
    ]


_VOLUME_ATTACHMENT = Printer(
    (
        name_col(),
        Col("Attacher", format="name", description="The driver attaching the volume."),
        Col("PV", description="The persistent volume attached."),
        Col("Node", description="The node it is attached to."),
        Col("Attached", type="boolean", description="Whether the attach has completed."),
        AGE,
    ),
    cells(_volume_attachment_cells),
)


PRINTERS: Printers = {
    core_v1.PersistentVolume: _PERSISTENT_VOLUME,
    core_v1.PersistentVolumeClaim: _PERSISTENT_VOLUME_CLAIM,
    storage_v1.StorageClass: _STORAGE_CLASS,
    storage_v1.CSINode: _CSI_NODE,
    storage_v1.CSIDriver: _CSI_DRIVER,
    storage_v1.CSIStorageCapacity: _CSI_STORAGE_CAPACITY,
    storage_v1.VolumeAttachment: _VOLUME_ATTACHMENT,
}
