"""Pod specs defaulted and validated once per distinct spec.

Pods are mostly stamped from templates (ReplicaSets, Jobs, benchmarks), so many creates carry
byte-identical specs. The cache keys on the encoded spec and keeps one defaulted spec object and a
new pod's status; every pod created with that spec holds the same object, as
the store's objects are never changed in place (a write replaces what it changes). A spec the cache
handed out is known again by its identity, without encoding it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from lightkube.models import core_v1 as m

from kubesched.cluster.codec import decoder, encode
from kubesched.cluster.memo import IdentityMemo
from kubesched.cluster.memory.defaults import default_pod_spec, qos_class

_decode_spec = decoder(m.PodSpec).decode


@dataclass(frozen=True)
class PreparedSpec:
    spec: Any  # the defaulted PodSpec, shared: never change it in place
    pending: Any  # the status of a new pod with this spec (phase Pending, its QoS class), shared


class PodSpecCache:
    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._entries: dict[bytes, PreparedSpec] = {}
        self._handed_out: dict[int, PreparedSpec] = {}  # by id of the entry's spec, which the entry holds

    def prepare(self, spec: Any) -> PreparedSpec:
        """The defaulted form of `spec` (the input is not changed)."""
        entry = self._handed_out.get(id(spec))
        if entry is not None and entry.spec is spec:
            return entry
        raw = encode(spec)
        entry = self._entries.get(raw)
        if entry is None:
            fresh = _decode_spec(raw)
            default_pod_spec(fresh)
            pending = m.PodStatus(phase="Pending", qosClass=qos_class(fresh))
            entry = PreparedSpec(fresh, pending)
            if len(self._entries) >= self._size:
                evicted = self._entries.pop(next(iter(self._entries)))
                del self._handed_out[id(evicted.spec)]
            self._entries[raw] = entry
            self._handed_out[id(fresh)] = entry
        return entry


class BoundForms:
    """What a binding makes of a pod's spec and status, shared by the pods that had the same ones:
    the pods of one template bound to one node hold one spec, and those bound in one second one
    status."""

    def __init__(self, size: int = 1 << 16) -> None:
        self._specs: IdentityMemo[Any] = IdentityMemo(size)
        self._statuses: IdentityMemo[Any] = IdentityMemo(size)

    def spec(self, spec: Any, node: str) -> Any:
        return self._specs.get(spec, node, lambda: msgspec.structs.replace(spec, nodeName=node))

    def status(self, status: Any, stamp: datetime) -> Any:
        def bound() -> Any:
            scheduled = m.PodCondition(type="PodScheduled", status="True", lastTransitionTime=stamp)
            conditions = [c for c in status.conditions or [] if c.type != "PodScheduled"]
            return msgspec.structs.replace(status, conditions=[*conditions, scheduled], nominatedNodeName=None)

        return self._statuses.get(status, stamp, bound)
