"""Pod specs defaulted, validated and admitted once per distinct spec.

Pods are mostly stamped from templates (ReplicaSets, Jobs, benchmarks), so many creates carry
byte-identical specs. The cache keys on the encoded spec and keeps one defaulted spec object, its
validation errors and a new pod's status; every pod created with that spec holds the same object, as
the store's objects are never changed in place (a write replaces what it changes). The Priority
admission plugin's result is kept beside it, one spec per outcome.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec
from lightkube.models import core_v1 as m

from kubesched.api.errors import FieldError
from kubesched.cluster.codec import decoder, encode
from kubesched.cluster.memo import IdentityMemo
from kubesched.cluster.memory.defaults import Admitted, admitted_priority, default_pod_spec, qos_class
from kubesched.cluster.memory.validation import pod_spec_errors

_decode_spec = decoder(m.PodSpec).decode


@dataclass
class PreparedSpec:
    spec: Any  # the defaulted PodSpec, shared: never change it in place
    errors: tuple[FieldError, ...]
    pending: Any  # the status of a new pod with this spec (phase Pending, its QoS class), shared
    _admitted: dict[Admitted, Any] = field(default_factory=dict, repr=False)

    def admit(self, name: str, priority_classes: Iterable[Any]) -> Any:
        """The spec with the priority the Priority admission plugin gives it (Forbidden when the
        class is unknown or the spec's value contradicts it), shared like `spec`."""
        outcome = admitted_priority(self.spec, name, priority_classes)
        spec = self._admitted.get(outcome)
        if spec is None:
            class_name, value, policy = outcome
            spec = self._admitted[outcome] = msgspec.structs.replace(
                self.spec, priorityClassName=class_name, priority=value, preemptionPolicy=policy
            )
        return spec


class PodSpecCache:
    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._entries: dict[bytes, PreparedSpec] = {}

    def prepare(self, spec: Any) -> PreparedSpec:
        """The defaulted form of `spec` with its validation errors (the input is not changed)."""
        raw = encode(spec)
        entry = self._entries.get(raw)
        if entry is None:
            fresh = _decode_spec(raw)
            default_pod_spec(fresh)
            pending = m.PodStatus(phase="Pending", qosClass=qos_class(fresh))
            entry = PreparedSpec(fresh, tuple(pod_spec_errors(fresh)), pending)
            if len(self._entries) >= self._size:
                del self._entries[next(iter(self._entries))]
            self._entries[raw] = entry
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
