"""The kinds the store serves: their API names, scope, discovery metadata and selectable fields."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from lightkube.core.resource import NamespacedResource
from lightkube.resources import (
    apiextensions_v1,
    apps_v1,
    batch_v1,
    coordination_v1,
    core_v1,
    events_v1,
    policy_v1,
    rbac_authorization_v1,
    resource_v1,
    scheduling_v1,
    storage_v1,
)

from kubesched.api.objects import Served
from kubesched.cluster.legacy import PodDisruptionBudgetV1beta1

FieldGetter = Callable[[Any], str]  # Any: each kind's getters read the fields of that kind's objects
VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def _meta_fields() -> dict[str, FieldGetter]:
    return {
        "metadata.name": lambda o: o.metadata.name or "",
        "metadata.namespace": lambda o: o.metadata.namespace or "",
    }


class PrinterColumn(TypedDict, total=False):
    """One of a custom kind's additionalPrinterColumns, as its CRD writes it."""

    name: str
    type: str
    format: str
    description: str
    priority: int
    jsonPath: str


@dataclass(frozen=True, eq=False)
class Kind:
    """One served kind: `cls` is its lightkube resource class."""

    cls: type[Served]
    plural: str
    group: str
    version: str
    kind: str
    namespaced: bool
    fields: dict[str, FieldGetter] = field(default_factory=_meta_fields)
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    singular_name: str = ""
    columns: tuple[PrinterColumn, ...] = ()  # a custom kind's additionalPrinterColumns

    @property
    def qualified(self) -> str:
        """The resource name as API messages print it: `pods`, `poddisruptionbudgets.policy`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.singular_name or self.kind.lower()

    @property
    def has_status(self) -> bool:
        """Whether `status` is a subresource: updates of the object leave it alone and vice versa."""
        return "status" in self.subresources


def _pod_fields() -> dict[str, FieldGetter]:
    return {
        **_meta_fields(),
        "spec.nodeName": lambda p: p.spec.nodeName or "",
        "spec.schedulerName": lambda p: p.spec.schedulerName or "",
        "spec.restartPolicy": lambda p: p.spec.restartPolicy or "",
        "spec.serviceAccountName": lambda p: p.spec.serviceAccountName or "",
        "status.phase": lambda p: (p.status.phase if p.status else None) or "",
        "status.podIP": lambda p: (p.status.podIP if p.status else None) or "",
        "status.nominatedNodeName": lambda p: (p.status.nominatedNodeName if p.status else None) or "",
    }


def _ref_field(attr: str) -> FieldGetter:
    return lambda e: str(getattr(e.involvedObject, attr, None) or "")


def _event_fields() -> dict[str, FieldGetter]:
    fields = _meta_fields()
    for attr in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"):
        fields[f"involvedObject.{attr}"] = _ref_field(attr)
    fields["reason"] = lambda e: e.reason or ""
    fields["reportingComponent"] = lambda e: e.reportingComponent or ""
    fields["source"] = lambda e: (e.source.component if e.source else None) or ""
    fields["type"] = lambda e: e.type or ""
    return fields


def _make(
    cls: type[Served],
    *,
    fields: dict[str, FieldGetter] | None = None,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    subresources: tuple[str, ...] | None = None,
) -> Kind:
    info = cls._api_info
    if subresources is None:
        subresources = ("status",) if "status" in cls.__struct_fields__ else ()
    return Kind(
        cls=cls,
        plural=info.plural,
        group=info.resource.group,
        version=info.resource.version,
        kind=info.resource.kind,
        namespaced=issubclass(cls, NamespacedResource),
        fields=fields or _meta_fields(),
        short_names=short,
        categories=categories,
        subresources=subresources,
    )


_ALL = ("all",)
_SCALED = ("scale", "status")
KINDS: dict[type[Served], Kind] = {
    k.cls: k
    for k in (
        _make(
            core_v1.Namespace,
            short=("ns",),
            subresources=("finalize", "status"),
            fields={**_meta_fields(), "status.phase": lambda n: (n.status.phase if n.status else None) or ""},
        ),
        _make(
            core_v1.Node,
            short=("no",),
            fields={
                **_meta_fields(),
                "spec.unschedulable": lambda n: str(bool(n.spec and n.spec.unschedulable)).lower(),
            },
        ),
        _make(
            core_v1.Pod,
            fields=_pod_fields(),
            short=("po",),
            categories=_ALL,
            subresources=("attach", "binding", "eviction", "exec", "log", "portforward", "status"),
        ),
        _make(core_v1.Event, fields=_event_fields(), short=("ev",)),
        _make(events_v1.Event, short=("ev",)),
        _make(scheduling_v1.PriorityClass, short=("pc",)),
        _make(policy_v1.PodDisruptionBudget, short=("pdb",)),
        _make(PodDisruptionBudgetV1beta1, short=("pdb",)),
        _make(coordination_v1.Lease),
        _make(core_v1.PersistentVolume, short=("pv",)),
        _make(core_v1.PersistentVolumeClaim, short=("pvc",)),
        _make(core_v1.Service, short=("svc",), categories=_ALL),
        _make(core_v1.ReplicationController, short=("rc",), categories=_ALL, subresources=_SCALED),
        _make(apps_v1.ReplicaSet, short=("rs",), categories=_ALL, subresources=_SCALED),
        _make(apps_v1.StatefulSet, short=("sts",), categories=_ALL, subresources=_SCALED),
        _make(apps_v1.Deployment, short=("deploy",), categories=_ALL, subresources=_SCALED),
        _make(apps_v1.DaemonSet, short=("ds",), categories=_ALL),
        _make(batch_v1.Job, categories=_ALL),
        _make(storage_v1.StorageClass, short=("sc",)),
        _make(storage_v1.CSINode),
        _make(storage_v1.CSIDriver),
        _make(storage_v1.CSIStorageCapacity),
        _make(storage_v1.VolumeAttachment),
        _make(resource_v1.ResourceClaim),
        _make(resource_v1.ResourceSlice),
        _make(resource_v1.DeviceClass),
        _make(apiextensions_v1.CustomResourceDefinition, short=("crd", "crds")),
        _make(core_v1.ConfigMap, short=("cm",)),
        _make(core_v1.Secret),
        _make(core_v1.ServiceAccount, short=("sa",), subresources=("token",)),
        _make(rbac_authorization_v1.Role),
        _make(rbac_authorization_v1.ClusterRole),
        _make(rbac_authorization_v1.RoleBinding),
        _make(rbac_authorization_v1.ClusterRoleBinding),
    )
}


def custom_kind(
    cls: type[Served],
    *,
    short_names: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    subresources: tuple[str, ...] = (),
    singular: str = "",
    columns: tuple[PrinterColumn, ...] = (),
) -> Kind:
    """The `Kind` of a custom resource class (see `cluster.custom`), as its CRD describes it."""
    return Kind(
        cls=cls,
        plural=cls._api_info.plural,
        group=cls._api_info.resource.group,
        version=cls._api_info.resource.version,
        kind=cls._api_info.resource.kind,
        namespaced=issubclass(cls, NamespacedResource),
        short_names=short_names,
        categories=categories,
        subresources=subresources,
        singular_name=singular,
        columns=columns,
    )


def kind_of(cls: type[Served]) -> Kind:
    """The `Kind` for a resource class, or a TypeError for one the store does not serve."""
    try:
        return KINDS[cls]
    except KeyError:
        raise TypeError(f"kind {getattr(cls, '__name__', cls)!r} is not served") from None
