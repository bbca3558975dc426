"""Which objects a list or watch picks: its namespace, label selector and field selector, compiled
once per distinct query."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from kubesched.api.errors import FieldError
from kubesched.api.objects import Served
from kubesched.api.selectors import parse_field_selector, parse_label_selector
from kubesched.cluster.errors import BadRequest
from kubesched.cluster.kinds import Kind


def selection(kind: Kind, namespace: str | None, label_selector: str, field_selector: str) -> Callable[[Served], bool]:
    """Whether an object of `kind` is picked; a selector that does not parse is a BadRequest."""
    try:
        return _matcher(kind, namespace, label_selector, field_selector)
    except FieldError as e:
        raise BadRequest(str(e)) from None


@lru_cache(maxsize=1024)
def _matcher(kind: Kind, namespace: str | None, label_selector: str, field_selector: str) -> Callable[[Served], bool]:
    labels = parse_label_selector(label_selector) if label_selector else None
    fields = (
        parse_field_selector(field_selector, supported=kind.fields).compile(kind.fields) if field_selector else None
    )

    def matches(obj: Any) -> bool:  # Any: a stored object, its metadata set
        meta = obj.metadata
        if namespace and meta.namespace != namespace:
            return False
        if labels is not None and not labels.matches(meta.labels or {}):
            return False
        return fields is None or fields(obj)

    return matches
