"""Pod specs defaulted and validated once per distinct spec.

Pods are mostly stamped from templates (ReplicaSets, Jobs, benchmarks), so many creates carry
byte-identical specs. The cache keys on the encoded spec and keeps the defaulted spec's encoding,
its validation errors and its QoS class; every create still gets a fresh decoded copy.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lightkube.models import core_v1 as m

from kubesched.api.errors import FieldError
from kubesched.cluster.codec import decoder, encode
from kubesched.cluster.memory.defaults import default_pod_spec, qos_class
from kubesched.cluster.memory.validation import pod_spec_errors

_decode_spec = decoder(m.PodSpec).decode


class PreparedSpec(NamedTuple):
    spec: Any  # a fresh, defaulted PodSpec
    errors: tuple[FieldError, ...]
    qos: str


class PodSpecCache:
    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._entries: dict[bytes, tuple[bytes, tuple[FieldError, ...], str]] = {}

    def prepare(self, spec: Any) -> PreparedSpec:
        """A defaulted copy of `spec` with its validation errors (the input is not changed)."""
        raw = encode(spec)
        entry = self._entries.get(raw)
        if entry is None:
            fresh = _decode_spec(raw)
            default_pod_spec(fresh)
            entry = (encode(fresh), tuple(pod_spec_errors(fresh)), qos_class(fresh))
            if len(self._entries) >= self._size:
                del self._entries[next(iter(self._entries))]
            self._entries[raw] = entry
        return PreparedSpec(_decode_spec(entry[0]), entry[1], entry[2])
