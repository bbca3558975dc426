"""Pod specs defaulted, validated and admitted once per distinct spec.

Pods are mostly stamped from templates (ReplicaSets, Jobs, benchmarks), so many creates carry
byte-identical specs. The cache keys on the encoded spec and keeps one defaulted spec object, its
validation errors and its QoS class; every pod created with that spec holds the same object, as
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
from kubesched.cluster.memory.defaults import Admitted, admitted_priority, default_pod_spec, qos_class
from kubesched.cluster.memory.validation import pod_spec_errors

_decode_spec = decoder(m.PodSpec).decode


@dataclass
class PreparedSpec:
    spec: Any  # the defaulted PodSpec, shared: never change it in place
    errors: tuple[FieldError, ...]
    qos: str
    pending: Any  # the status of a new pod with this spec, shared
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
            qos = qos_class(fresh)
            entry = PreparedSpec(fresh, tuple(pod_spec_errors(fresh)), qos, m.PodStatus(phase="Pending", qosClass=qos))
            if len(self._entries) >= self._size:
                del self._entries[next(iter(self._entries))]
            self._entries[raw] = entry
        return entry


class BoundForms:
    """What a binding makes of a pod's spec and status, shared by the pods that had the same ones:
    the pods of one template bound to one node hold one spec, and those bound in one second one
    status. Entries hold the objects they were made from, so an identity seen again is the same
    object; the cache is emptied when full."""

    def __init__(self, size: int = 1 << 16) -> None:
        self._size = size
        self._specs: dict[tuple[int, str], tuple[Any, Any]] = {}
        self._statuses: dict[tuple[int, datetime], tuple[Any, Any]] = {}

    def spec(self, spec: Any, node: str) -> Any:
        key = (id(spec), node)
        found = self._specs.get(key)
        if found is not None and found[0] is spec:
            return found[1]
        bound = msgspec.structs.replace(spec, nodeName=node)
        if len(self._specs) >= self._size:
            self._specs.clear()
        self._specs[key] = (spec, bound)
        return bound

    def status(self, status: Any, stamp: datetime) -> Any:
        key = (id(status), stamp)
        found = self._statuses.get(key)
        if found is not None and found[0] is status:
            return found[1]
        scheduled = m.PodCondition(type="PodScheduled", status="True", lastTransitionTime=stamp)
        conditions = [c for c in status.conditions or [] if c.type != "PodScheduled"]
        bound = msgspec.structs.replace(status, conditions=[*conditions, scheduled], nominatedNodeName=None)
        if len(self._statuses) >= self._size:
            self._statuses.clear()
        self._statuses[key] = (status, bound)
        return bound
