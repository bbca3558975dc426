"""What a request asks beyond its body: patch type, dryRun, fieldManager and query numbers, read
and checked as kube-apiserver reads and checks them."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from kubesched.api.errors import FieldError
from kubesched.apiserver.codec import media_type
from kubesched.cluster.errors import BadRequest, Invalid, UnsupportedMediaType
from kubesched.storage import MemoryStore
from kubesched.storage.fields.managers import MAX_MANAGER_LENGTH, manager_from_user_agent
from kubesched.storage.patch import CONTENT_TYPES as PATCH_TYPES
from kubesched.storage.typecheck import unmarshal_error


def patch_type(request: web.Request) -> str:
    """The patch type the request's Content-Type names (415 for any other)."""
    patch_type = PATCH_TYPES.get(media_type(request.headers.get("Content-Type", "")))
    if patch_type is None:
        raise UnsupportedMediaType(
            "the body of the request was in an unknown format - accepted media types include: " + ", ".join(PATCH_TYPES)
        )
    return patch_type


def flag(value: str | None) -> bool:
    return value in ("true", "1", "True")


DRY_RUN_ALL = "All"  # the one dryRun value kube-apiserver accepts


# Any: the dryRun a body carries as sent, read as a list (a body with anything else there fails)
def dry_run(request: web.Request, options: str, given: Any = ()) -> bool:
    """Whether the request asks for dryRun=All (in its query or, for a delete, its options body);
    any other value is refused as kube-apiserver's option validation refuses it."""
    values = [*request.query.getall("dryRun", ()), *(given or ())]
    if not values:
        return False
    if any(not isinstance(v, str) or v != DRY_RUN_ALL for v in values):
        error = FieldError.not_supported("dryRun", values, [DRY_RUN_ALL])
        raise Invalid(f"{options}.meta.k8s.io", "", [error], group="meta.k8s.io")
    return True


def field_manager(request: web.Request, options: str, *, applying: bool = False) -> str:
    """The manager a write is recorded for: the `fieldManager` the request names (required for
    an apply), else its User-Agent's product name, as kube-apiserver checks and derives it."""
    given = request.query.get("fieldManager", "")
    errors = []
    if applying and not given:
        errors.append(FieldError("fieldManager", None, "is required for apply patch", kind="Required value"))
    if len(given.encode()) > MAX_MANAGER_LENGTH:
        errors.append(
            FieldError("fieldManager", None, f"may not be more than {MAX_MANAGER_LENGTH} bytes", kind="Too long")
        )
    errors += [
        FieldError("fieldManager", given, f"invalid character {code_point(c)} (at position {i})")
        for i, c in enumerate(given)
        if not c.isprintable()
    ]
    if "force" in request.query and not applying:
        errors.append(FieldError("force", None, "may not be specified for non-apply patch", kind="Forbidden"))
    if errors:
        raise Invalid(f"{options}.meta.k8s.io", "", errors, group="meta.k8s.io")
    return given or manager_from_user_agent(request.headers.get("User-Agent", ""))


def code_point(c: str) -> str:
    """A character as Go's %#U prints it: U+0007 or U+00E9 'é'."""
    code = f"U+{ord(c):04X}"
    return f"{code} '{c}'" if c.isprintable() else code


# DeleteOptions' fields the server reads from a body: the JSON type each decodes from, and its Go type
_DELETE_FIELDS: dict[str, tuple[type, str]] = {
    "gracePeriodSeconds": (int, "int64"),
    "preconditions": (dict, "v1.Preconditions"),
    "orphanDependents": (bool, "bool"),
    "propagationPolicy": (str, "v1.DeletionPropagation"),
    "dryRun": (list, "[]string"),
}
_PRECONDITIONS = ("uid", "resourceVersion")


def check_delete_options(body: Mapping[str, object]) -> None:
    """Refuse (400) a DeleteOptions body whose field has the wrong JSON type, naming the field as
    kube-apiserver's decoder names it."""

    def refuse(value: object, field: str, go: str) -> BadRequest:
        return BadRequest(unmarshal_error(value, f"DeleteOptions.{field}", go))

    for field, (wanted, go) in _DELETE_FIELDS.items():
        value = body.get(field)
        if value is not None and (not isinstance(value, wanted) or (wanted is int and isinstance(value, bool))):
            raise refuse(value, field, go)
    preconditions = body.get("preconditions")
    if isinstance(preconditions, dict):
        for field in _PRECONDITIONS:
            value = preconditions.get(field)
            if value is not None and not isinstance(value, str):
                raise refuse(value, f"preconditions.{field}", "string")


def int_param(query: Mapping[str, str], key: str) -> int | None:
    raw = query.get(key)
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadRequest(f"invalid value for {key}: {raw!r}") from None


def writing(store: MemoryStore, dry_run: bool) -> contextlib.AbstractContextManager[None]:
    """The store as a write should see it: as it is, or in dry-run. Held only around synchronous
    store calls, never across an await, so no other request's write is caught in it."""
    return store.dry_run() if dry_run else contextlib.nullcontext()
