"""API errors from HTTP replies: a `Status` body (or a bare code) to the typed `ApiError` it stands for."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from kubesched.client.codec import decode_dict
from kubesched.cluster.errors import (
    RESOURCE_VERSION_TOO_LARGE,
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    InternalError,
    Invalid,
    MethodNotAllowed,
    NotFound,
    RequestEntityTooLarge,
    Timeout,
    TooLargeResourceVersion,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
)


class NotServed(NotFound):
    """The server does not serve this kind (its collection is 404 and discovery does not list it)."""


class ServiceUnavailable(ApiError):
    code = 503
    reason = "ServiceUnavailable"


class ConnectionFailed(ServiceUnavailable):
    """The request got no HTTP reply: connection refused or dropped, or a timeout."""


_BY_REASON: dict[str, type[ApiError]] = {
    cls.reason: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        MethodNotAllowed,
        AlreadyExists,
        Conflict,
        Gone,
        RequestEntityTooLarge,
        UnsupportedMediaType,
        Invalid,
        TooManyRequests,
        InternalError,
        ServiceUnavailable,
        Timeout,
    )
}
_BY_REASON["Gone"] = Gone
_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    410: Gone,
    413: RequestEntityTooLarge,
    415: UnsupportedMediaType,
    422: Invalid,
    429: TooManyRequests,
    500: InternalError,
    503: ServiceUnavailable,
    504: Timeout,
}
_CAUSE_KINDS = {  # a cause's reason back to the field error kind `Invalid` renders it from
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
}


class _Cause(ValueError):
    """One cause of an `Invalid` reply, as the field error it was rendered from."""

    def __init__(self, cause: dict[str, object]) -> None:
        self.field = str(cause.get("field") or "")
        self.kind = _CAUSE_KINDS.get(str(cause.get("reason")), "Invalid value")
        message = str(cause.get("message") or "")
        super().__init__(f"{self.field}: {message}" if self.field else message)


def _int(value: object, default: int) -> int:
    """A number as the server wrote it (a string or not); `default` when there is none."""
    return int(value) if value and isinstance(value, int | float | str) else default


def error_from_status(code: int, status: Mapping[str, object]) -> ApiError:
    """The typed error for a `Status` reply with HTTP `code` (the body's code wins when present)."""
    code = _int(status.get("code"), code)
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or f"the server responded with HTTP {code}")
    found = status.get("details")
    details: Mapping[str, object] = found if isinstance(found, dict) else {}
    cls = _BY_REASON.get(reason)
    if cls is None or cls.code != code:
        cls = _BY_CODE.get(code) or (InternalError if code >= 500 else BadRequest)
    names = {
        "kind": str(details.get("kind") or ""),
        "name": str(details.get("name") or ""),
        "group": str(details.get("group") or ""),
    }
    listed = details.get("causes")
    causes = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    error: ApiError
    if cls is Invalid:
        error = Invalid(names["kind"], names["name"], [_Cause(c) for c in causes], group=names["group"])
        error.message = message
        error.args = (message,)
    elif cls is Timeout:
        retry_after = _int(details.get("retryAfterSeconds"), 0)
        if any(c.get("reason") == RESOURCE_VERSION_TOO_LARGE for c in causes):
            error = TooLargeResourceVersion(0, 0)
            error.message, error.args = message, (message,)
        else:
            error = Timeout(
                message, causes=[{k: str(v) for k, v in c.items()} for c in causes], retry_after=retry_after
            )
    elif cls is TooManyRequests:
        error = TooManyRequests(message, causes=[{k: str(v) for k, v in c.items()} for c in causes], **names)
    else:
        error = cls(message, **names)
    return error


def error_from_reply(code: int, body: bytes) -> ApiError:
    """The typed error for an HTTP error reply, with or without a `Status` body."""
    try:
        status = decode_dict(body)
    except msgspec.DecodeError:
        status = {}
    if status.get("kind") != "Status":
        text = body.decode(errors="replace").strip()[:200]
        status = {"message": f"the server responded with HTTP {code}: {text}" if text else ""}
    return error_from_status(code, status)
