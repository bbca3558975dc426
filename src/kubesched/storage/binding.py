"""The `pods/binding` subresource: an unbound pod assigned to a node, its spec and status as a
binding leaves them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from lightkube.models import core_v1 as m
from lightkube.resources import core_v1

from kubesched.api.errors import FieldError
from kubesched.cluster.errors import conflict
from kubesched.cluster.kinds import KINDS
from kubesched.storage.podspecs import BoundForms

if TYPE_CHECKING:
    from kubesched.storage.store import MemoryStore

_POD = KINDS[core_v1.Pod]


class Binder:
    """Binds pods; the forms it makes are shared by the pods bound alike (see `BoundForms`)."""

    def __init__(self) -> None:
        self._bound = BoundForms()

    def __call__(self, store: MemoryStore, binding: Any, namespace: str | None) -> object:  # Any: a Binding
        meta = binding.metadata
        ns = namespace or meta.namespace or "default"
        target = binding.target
        errors = []
        if target is None or not target.name:
            errors.append(FieldError("target.name", None, "", kind="Required value"))
        elif target.kind not in (None, "", "Node"):
            errors.append(FieldError("target.kind", target.kind, "", kind="Not found"))
        store.refuse_invalid(_POD, binding, errors, kind_name="Binding")
        pod: Any = store.get(core_v1.Pod, meta.name, namespace=ns)  # Any: a stored pod, its metadata and spec set
        store.check_preconditions(_POD, pod, uid=meta.uid, rv=meta.resourceVersion)
        if (why := _unbindable(pod)) is not None:
            raise conflict("pods/binding", pod.metadata.name, why, kind="pods/binding")
        annotations = pod.metadata.annotations
        if meta.annotations:
            annotations = {**(annotations or {}), **meta.annotations}
        new = msgspec.structs.replace(
            pod,
            metadata=msgspec.structs.replace(pod.metadata, annotations=annotations),
            spec=self._bound.spec(pod.spec, target.name),
            status=self._bound.status(pod.status or m.PodStatus(), store.stamp()),
        )
        return store.write(_POD, pod, new)


def _unbindable(pod: Any) -> str | None:  # Any: as the binder's
    name = pod.metadata.name
    if pod.metadata.deletionTimestamp is not None:
        return f"pod {name} is being deleted, cannot be assigned to a host"
    if pod.spec.nodeName:
        return f'pod {name} is already assigned to node "{pod.spec.nodeName}"'
    if pod.spec.schedulingGates:
        return f"pod {name} has non-empty .spec.schedulingGates"
    return None
