"""The `scale` subresource of the workloads (autoscaling/v1 `Scale`): read, replaced or patched
as a Scale, stored as the object's `spec.replicas` (what `kubectl scale` uses)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

import msgspec
from lightkube.models import meta_v1

from kubesched.api.errors import FieldError
from kubesched.api.objects import Named, Served, meta_of
from kubesched.api.selectors import selector_string
from kubesched.cluster.errors import BadRequest, Invalid
from kubesched.storage.patch import PatchError, apply_patch

if TYPE_CHECKING:
    from kubesched.storage.store import MemoryStore


class _ScaledSpec(Protocol):
    @property
    def replicas(self) -> int | None: ...

    @property
    def selector(self) -> meta_v1.LabelSelector | dict[str, str] | None: ...


class _ScaledStatus(Protocol):
    @property
    def replicas(self) -> int | None: ...


class Scaled(Named, Protocol):
    """A workload with replicas: what the scale subresource stands for."""

    @property
    def spec(self) -> _ScaledSpec | None: ...

    @property
    def status(self) -> _ScaledStatus | None: ...


def _selector(obj: Scaled) -> str:
    selector = obj.spec.selector if obj.spec else None
    if isinstance(selector, dict):  # a ReplicationController's is a plain map
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    return selector_string(selector) or ""


def scale_of(obj: Scaled) -> dict[str, object]:
    meta = meta_of(obj)
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta.name,
            "namespace": meta.namespace,
            "uid": meta.uid,
            "resourceVersion": meta.resourceVersion,
            "creationTimestamp": msgspec.to_builtins(meta.creationTimestamp),
        },
        "spec": {"replicas": obj.spec.replicas if obj.spec and obj.spec.replicas is not None else 0},
        "status": {"replicas": (obj.status.replicas if obj.status else None) or 0, "selector": _selector(obj)},
    }


def _scaled(store: MemoryStore, cls: type[Served], name: str, namespace: str | None) -> Scaled:
    return cast(Scaled, store.get(cls, name, namespace=namespace))  # only workloads serve `scale`


def read_scale(store: MemoryStore, cls: type[Served], name: str, namespace: str | None) -> dict[str, object]:
    return scale_of(_scaled(store, cls, name, namespace))


def write_scale(
    store: MemoryStore, cls: type[Served], name: str, namespace: str | None, scale: object, *, field_manager: str
) -> dict[str, object]:
    """Set `spec.replicas` from a Scale (its resourceVersion, when given, a precondition), the
    write recorded as `field_manager`'s through the scale subresource."""
    body = scale if isinstance(scale, dict) else {}
    spec = body.get("spec")
    replicas = spec.get("replicas", 0) if isinstance(spec, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        error = FieldError("spec.replicas", replicas, "must be greater than or equal to 0")
        raise Invalid("Scale.autoscaling", name, [error], group="autoscaling")
    meta = body.get("metadata") or {}
    patch: dict[str, object] = {"spec": {"replicas": replicas}}
    if meta.get("resourceVersion"):
        patch["metadata"] = {"resourceVersion": meta["resourceVersion"]}
    patched = store.patch(cls, name, patch, namespace=namespace, field_manager=field_manager, via="scale")
    return scale_of(cast(Scaled, patched))  # as `_scaled`'s


def patch_scale(
    store: MemoryStore,
    cls: type[Served],
    name: str,
    namespace: str | None,
    patch: object,
    patch_type: str,
    *,
    field_manager: str,
) -> dict[str, object]:
    current = scale_of(_scaled(store, cls, name, namespace))
    try:
        patched: Any = apply_patch("Scale", current, patch, patch_type)  # Any: read as a Scale's map
    except PatchError as e:
        raise BadRequest(str(e)) from None
    patched.get("metadata", {}).pop("resourceVersion", None)
    return write_scale(store, cls, name, namespace, patched, field_manager=field_manager)
