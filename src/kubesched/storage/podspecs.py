"""Pod specs defaulted and validated once per distinct spec.

Pods are mostly stamped from templates (ReplicaSets, Jobs, benchmarks), so many creates carry
byte-identical specs. The cache keys on the encoded spec and keeps one defaulted spec object, its
validation errors and a new pod's status; every pod created with that spec holds the same object, as
the store's objects are never changed in place (a write replaces what it changes). A spec the cache
handed out, or one derived from it (what an admission plugin makes of it), is known again by its
identity, without encoding it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime

import msgspec
from lightkube.models import core_v1 as m

from kubesched.api.errors import FieldError
from kubesched.cluster.codec import decoder, encode
from kubesched.storage.defaults import default_pod_spec, qos_class
from kubesched.storage.memo import IdentityMemo
from kubesched.storage.validation import pod_spec_errors

_decode_spec = decoder(m.PodSpec).decode


@dataclass(slots=True)
class PreparedSpec:
    spec: m.PodSpec  # the defaulted PodSpec, shared: never change it in place
    errors: tuple[FieldError, ...]
    pending: m.PodStatus  # the status of a new pod with this spec (phase Pending, its QoS class), shared
    derived: dict[Hashable, m.PodSpec] = field(default_factory=dict)  # key -> a spec made from `spec`


class PodSpecCache:
    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._entries: dict[bytes, PreparedSpec] = {}
        self._handed_out: dict[int, tuple[m.PodSpec, PreparedSpec]] = {}  # id of a spec an entry holds -> both

    def prepare(self, spec: object) -> PreparedSpec:
        """The defaulted form of `spec` with its validation errors (the input is not changed)."""
        found = self._handed_out.get(id(spec))
        if found is not None and found[0] is spec:
            return found[1]
        raw = encode(spec)
        entry = self._entries.get(raw)
        if entry is None:
            fresh: m.PodSpec = _decode_spec(raw)
            default_pod_spec(fresh)
            pending = m.PodStatus(phase="Pending", qosClass=qos_class(fresh))
            entry = PreparedSpec(fresh, tuple(pod_spec_errors(fresh)), pending)
            if len(self._entries) >= self._size:
                self._forget(self._entries.pop(next(iter(self._entries))))
            self._entries[raw] = entry
            self._handed_out[id(fresh)] = (fresh, entry)
        return entry

    def derive(self, spec: m.PodSpec, key: Hashable, make: Callable[[], m.PodSpec]) -> m.PodSpec:
        """`make()`'s spec for a prepared `spec` and `key`, made once and sharing the entry of
        `spec` (its errors and pending status): for changes that leave validation's verdict as it
        was, as the Priority admission plugin's."""
        entry = self.prepare(spec)
        made = entry.derived.get(key)
        if made is None:
            made = entry.derived[key] = make()
            self._handed_out[id(made)] = (made, entry)
        return made

    def _forget(self, entry: PreparedSpec) -> None:
        for spec in (entry.spec, *entry.derived.values()):
            del self._handed_out[id(spec)]


POD_SPECS = PodSpecCache()  # shared by the pod strategy and the Priority admission plugin


class BoundForms:
    """What a binding makes of a pod's spec and status, shared by the pods that had the same ones:
    the pods of one template bound to one node hold one spec, and those bound in one second one
    status."""

    def __init__(self, size: int = 1 << 16) -> None:
        self._specs: IdentityMemo[m.PodSpec] = IdentityMemo(size)
        self._statuses: IdentityMemo[m.PodStatus] = IdentityMemo(size)

    def spec(self, spec: m.PodSpec, node: str) -> m.PodSpec:
        return self._specs.get(spec, node, lambda: msgspec.structs.replace(spec, nodeName=node))

    def status(self, status: m.PodStatus, stamp: datetime) -> m.PodStatus:
        def bound() -> m.PodStatus:
            scheduled = m.PodCondition(type="PodScheduled", status="True", lastTransitionTime=stamp)
            conditions = [c for c in status.conditions or [] if c.type != "PodScheduled"]
            return msgspec.structs.replace(status, conditions=[*conditions, scheduled], nominatedNodeName=None)

        return self._statuses.get(status, stamp, bound)
