"""The `scale` subresource of the workloads (autoscaling/v1 `Scale`): read, replaced or patched
as a Scale, stored as the object's `spec.replicas` (what `kubectl scale` uses)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.api.errors import FieldError
from kubesched.api.objects import Served
from kubesched.api.selectors import selector_string
from kubesched.cluster.errors import BadRequest, Invalid
from kubesched.storage.patch import PatchError, apply_patch

if TYPE_CHECKING:
    from kubesched.storage.store import MemoryStore


def _selector(obj: Any) -> str:
    selector = obj.spec.selector if obj.spec else None
    if isinstance(selector, dict):  # a ReplicationController's is a plain map
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    return selector_string(selector) or ""


def scale_of(obj: Any) -> dict[str, Any]:
    meta = obj.metadata
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


def read_scale(store: MemoryStore, cls: type[Served], name: str, namespace: str | None) -> dict[str, Any]:
    return scale_of(store.get(cls, name, namespace=namespace))


def write_scale(
    store: MemoryStore, cls: type[Served], name: str, namespace: str | None, scale: Any, *, field_manager: str
) -> dict[str, Any]:
    """Set `spec.replicas` from a Scale (its resourceVersion, when given, a precondition), the
    write recorded as `field_manager`'s through the scale subresource."""
    spec = scale.get("spec") if isinstance(scale, dict) else None
    replicas = spec.get("replicas", 0) if isinstance(spec, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        error = FieldError("spec.replicas", replicas, "must be greater than or equal to 0")
        raise Invalid("Scale.autoscaling", name, [error], group="autoscaling")
    meta = scale.get("metadata") or {}
    patch: dict[str, Any] = {"spec": {"replicas": replicas}}
    if meta.get("resourceVersion"):
        patch["metadata"] = {"resourceVersion": meta["resourceVersion"]}
    return scale_of(store.patch(cls, name, patch, namespace=namespace, field_manager=field_manager, via="scale"))


def patch_scale(
    store: MemoryStore,
    cls: type[Served],
    name: str,
    namespace: str | None,
    patch: object,
    patch_type: str,
    *,
    field_manager: str,
) -> dict[str, Any]:
    current = scale_of(store.get(cls, name, namespace=namespace))
    try:
        patched = apply_patch("Scale", current, patch, patch_type)
    except PatchError as e:
        raise BadRequest(str(e)) from None
    patched.get("metadata", {}).pop("resourceVersion", None)
    return write_scale(store, cls, name, namespace, patched, field_manager=field_manager)
