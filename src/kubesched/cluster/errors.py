"""Typed API errors, each mapping 1:1 to a Kubernetes `Status` (code and reason)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar


class ApiError(Exception):
    """An error the API answers with; `status()` renders the wire `Status` object."""

    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"

    def __init__(self, message: str, *, kind: str = "", name: str = "", group: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.name = name
        self.group = group

    def causes(self) -> list[dict[str, str]]:
        return []

    # Any: the wire Status, a JSON document whose readers know its fields
    def status(self) -> dict[str, Any]:
        details: dict[str, object] = {}
        if self.name:
            details["name"] = self.name
        if self.group:
            details["group"] = self.group
        if self.kind:
            details["kind"] = self.kind
        if causes := self.causes():
            details["causes"] = causes
        out: dict[str, object] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if details:
            out["details"] = details
        return out


class BadRequest(ApiError):
    code = 400
    reason = "BadRequest"


class Forbidden(ApiError):
    code = 403
    reason = "Forbidden"


class NotFound(ApiError):
    code = 404
    reason = "NotFound"


class MethodNotAllowed(ApiError):
    """A method the resource (or subresource) does not serve; kube-apiserver's one message."""

    code = 405
    reason = "MethodNotAllowed"

    def __init__(self, message: str = "the server does not allow this method on the requested resource") -> None:
        super().__init__(message)


class AlreadyExists(ApiError):
    code = 409
    reason = "AlreadyExists"


class Conflict(ApiError):
    code = 409
    reason = "Conflict"


class ApplyConflict(Conflict):
    """A server-side apply that would change fields other managers own; one cause per field."""

    def __init__(self, message: str, causes: list[dict[str, str]]) -> None:
        super().__init__(message)
        self._causes = causes

    def causes(self) -> list[dict[str, str]]:
        return self._causes


class Gone(ApiError):
    """A watch or list asked for a resourceVersion older than the kept history."""

    code = 410
    reason = "Expired"


class Timeout(ApiError):
    """The server could not answer in time; `retry_after` seconds says when to ask again."""

    code = 504
    reason = "Timeout"

    def __init__(
        self, message: str, *, causes: list[dict[str, str]] | None = None, retry_after: int = 0, **kw: str
    ) -> None:
        super().__init__(message, **kw)
        self._causes = causes or []
        self.retry_after = retry_after

    def causes(self) -> list[dict[str, str]]:
        return self._causes

    def status(self) -> dict[str, Any]:  # Any: as ApiError.status
        out = super().status()
        if self.retry_after:
            out.setdefault("details", {})["retryAfterSeconds"] = self.retry_after
        return out


RESOURCE_VERSION_TOO_LARGE = "ResourceVersionTooLarge"  # the cause client-go's reflector recognises


class TooLargeResourceVersion(Timeout):
    """A watch (or list) from a resourceVersion newer than any the server has (the store went back
    in time: restored, or replaced by an empty one). A client relists from scratch, as client-go's
    reflector does."""

    def __init__(self, requested: int, current: int) -> None:
        super().__init__(
            f"Timeout: Too large resource version: {requested}, current: {current}",
            causes=[{"reason": RESOURCE_VERSION_TOO_LARGE, "message": "Too large resource version"}],
            retry_after=1,
        )


class TooManyRequests(ApiError):
    code = 429
    reason = "TooManyRequests"

    def __init__(self, message: str, *, causes: list[dict[str, str]] | None = None, **kw: str) -> None:
        super().__init__(message, **kw)
        self._causes = causes or []

    def causes(self) -> list[dict[str, str]]:
        return self._causes


class InternalError(ApiError):
    code = 500
    reason = "InternalError"


class UnsupportedMediaType(ApiError):
    code = 415
    reason = "UnsupportedMediaType"


class Unauthorized(ApiError):
    code = 401
    reason = "Unauthorized"


class RequestEntityTooLarge(ApiError):
    code = 413
    reason = "RequestEntityTooLarge"


class Invalid(ApiError):
    """Validation failed; `errors` are the field errors, each naming its field."""

    code = 422
    reason = "Invalid"

    def __init__(self, kind: str, name: str, errors: Sequence[ValueError], *, group: str = "") -> None:
        rendered = [str(e) for e in errors]
        body = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
        super().__init__(f'{kind} "{name}" is invalid: {body}', kind=kind, name=name, group=group)
        self.errors = list(errors)

    def causes(self) -> list[dict[str, str]]:
        out = []
        for e in self.errors:
            field = getattr(e, "field", "")
            kind = getattr(e, "kind", "FieldValueInvalid")
            text = str(e)
            body = text[len(field) + 2 :] if field and text.startswith(f"{field}: ") else text
            out.append({"reason": _cause_reason(kind), "message": body, "field": field})
        return out


def _cause_reason(kind: str) -> str:
    return {
        "Required value": "FieldValueRequired",
        "Duplicate value": "FieldValueDuplicate",
        "Unsupported value": "FieldValueNotSupported",
        "Forbidden": "FieldValueForbidden",
        "Too long": "FieldValueTooLong",
    }.get(kind, "FieldValueInvalid")


def conflict(qualified: str, name: str, why: str, *, kind: str = "") -> Conflict:
    """A Conflict worded as the API server words it."""
    return Conflict(f'Operation cannot be fulfilled on {qualified} "{name}": {why}', kind=kind, name=name)


STALE_OBJECT = "the object has been modified; please apply your changes to the latest version and try again"
