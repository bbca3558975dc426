"""Field errors shaped like the API server's validation errors."""

from __future__ import annotations

import json
from collections.abc import Iterable

INVALID = "Invalid value"
NOT_SUPPORTED = "Unsupported value"
REQUIRED = "Required value"
FORBIDDEN = "Forbidden"
TOO_LONG = "Too long"

# Kinds whose rendering leaves out the offending value, as upstream does.
_VALUELESS_KINDS = frozenset({REQUIRED, FORBIDDEN, TOO_LONG, "Internal error"})


def render_value(value: object) -> str:
    """Render a bad value the way upstream prints it: JSON-style scalars, Go-style string lists."""
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "}"
    if value is None or isinstance(value, str | bool | int | float):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


class FieldError(ValueError):
    """One problem with one field of an object, e.g. ``spec.containers[0].resources.requests[cpu]``.

    ``str()`` renders ``<field>: <kind>: <value>: <detail>``, the value being omitted for the
    kinds that upstream prints without it (``Required value``, ``Forbidden``).
    """

    field: str
    value: object
    detail: str
    kind: str

    def __init__(self, field: str, value: object, detail: str, *, kind: str = INVALID) -> None:
        self.field = field
        self.value = value
        self.detail = detail
        self.kind = kind
        super().__init__(field, value, detail, kind)

    @classmethod
    def not_supported(cls, field: str, value: object, supported: Iterable[str]) -> FieldError:
        """An ``Unsupported value`` error listing the accepted values in the given order."""
        listed = ", ".join(json.dumps(s) for s in supported)
        return cls(field, value, f"supported values: {listed}", kind=NOT_SUPPORTED)

    def __str__(self) -> str:
        body = self.kind if self.kind in _VALUELESS_KINDS else f"{self.kind}: {render_value(self.value)}"
        if self.detail:
            body = f"{body}: {self.detail}"
        return f"{self.field}: {body}" if self.field else body

    def __repr__(self) -> str:
        return f"FieldError({self.field!r}, {self.value!r}, {self.detail!r}, kind={self.kind!r})"
