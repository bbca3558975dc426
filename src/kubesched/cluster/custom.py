"""Custom resources: classes for kinds defined by CustomResourceDefinitions, and the schema check
an API server applies to them.

`custom_resource(...)` makes a resource class (a msgspec Struct with lightkube's resource
metadata, like the built-in kinds) for one group/version/kind: `spec` and `status` as given types
(Structs a plugin package defines) or, by default, plain mappings. Two classes of one
group/version/kind are two views of the same objects: a store that serves the kind converts
between them through the wire codec. Top-level fields other than `apiVersion`, `kind`,
`metadata`, `spec` and `status` are not kept.

`schema_errors(schema, obj)` checks an object against a CRD version's `openAPIV3Schema` — types,
required fields, enums, numeric and length bounds, `x-kubernetes-int-or-string`,
`x-kubernetes-preserve-unknown-fields` — with the API server's paths and wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, cast

import msgspec
from lightkube.core import resource as res
from lightkube.core.dictmixin import DictMixin
from lightkube.models import meta_v1

from kubesched.api.errors import REQUIRED, FieldError
from kubesched.api.objects import Served

_CLASSES: dict[tuple[str, str, str, object, object], type[Served]] = {}
# Any: msgspec keeps a field of this type as plain JSON (`object` it would take for a custom type)
_PLAIN: type[object] = dict[str, Any]


class _Typed(Protocol):
    """What a custom kind's `__post_init__` fills in."""

    apiVersion: str | None
    kind: str | None


def custom_resource(
    *,
    group: str,
    version: str,
    kind: str,
    plural: str,
    namespaced: bool = True,
    spec: type[object] | None = None,
    status: type[object] | None = None,
) -> type[Served]:
    """The resource class of one custom kind (made once per group, version, kind and field types)."""
    spec_type = spec if spec is not None else _PLAIN
    status_type = status if status is not None else _PLAIN
    key = (group, version, kind, spec_type, status_type)
    found = _CLASSES.get(key)
    if found is not None:
        return found
    api_version = f"{group}/{version}" if group else version

    def __post_init__(self: _Typed) -> None:
        if self.apiVersion is None:
            self.apiVersion = api_version
        if self.kind is None:
            self.kind = kind

    base = res.NamespacedResourceG if namespaced else res.GlobalResource
    cls = msgspec.defstruct(
        kind,
        [
            ("apiVersion", str | None, None),
            ("kind", str | None, None),
            ("metadata", meta_v1.ObjectMeta | None, None),
            ("spec", spec_type | None, None),
            ("status", status_type | None, None),
        ],
        bases=(base, DictMixin, msgspec.Struct),
        namespace={"__post_init__": __post_init__, "__module__": "kubesched.cluster.custom"},
        kw_only=True,
        omit_defaults=True,
    )
    cls._api_info = res.ApiInfo(  # type: ignore[attr-defined]
        resource=res.ResourceDef(group, version, kind),
        plural=plural,
        verbs=[
            "delete",
            "deletecollection",
            "get",
            "global_list",
            "global_watch",
            "list",
            "patch",
            "post",
            "put",
            "watch",
        ],
    )
    resource = cast("type[Served]", cls)  # defstruct types what it makes as a plain Struct
    _CLASSES[key] = resource
    return resource


def gvk(cls: type[Served]) -> tuple[str, str, str] | None:
    """A resource class's (group, version, kind), None for a class without API info."""
    info = getattr(cls, "_api_info", None)
    if info is None:
        return None
    return info.resource.group, info.resource.version, info.resource.kind


# -- the openAPIV3Schema check ------------------------------------------------------------------------

_TYPES = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _type_of(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _invalid(path: str, value: object, detail: str) -> FieldError:
    return FieldError(path, value, detail)


# Any: an openAPIV3Schema as decoded JSON, each keyword of the type the schema language gives it
def schema_errors(schema: Mapping[str, Any], obj: Mapping[str, object]) -> list[FieldError]:
    """The fields of `obj` (its JSON form) that `schema` refuses; `metadata` is the API's, not checked here."""
    errors: list[FieldError] = []
    props = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if name not in obj and name not in ("apiVersion", "kind", "metadata"):
            errors.append(FieldError(name, None, "", kind=REQUIRED))
    for name, value in obj.items():
        if name in ("apiVersion", "kind", "metadata"):
            continue
        sub = props.get(name)
        if sub is not None:
            _check(sub, value, name, errors)
    return errors


# Any: as in `schema_errors`
def _check(schema: Mapping[str, Any], value: object, path: str, errors: list[FieldError]) -> None:
    if value is None:
        if not schema.get("nullable"):
            kind = schema.get("type")
            if kind:
                errors.append(_invalid(path, "null", f'{path} in body must be of type {kind}: "null"'))
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(value, int | str) or isinstance(value, bool):
            errors.append(_invalid(path, value, f"{path} in body must be of type integer,string: {_quoted(value)}"))
            return
    elif (kind := schema.get("type")) and not (
        isinstance(value, _TYPES.get(kind, (object,)))
        and not (kind in ("integer", "number") and isinstance(value, bool))
    ):
        errors.append(_invalid(path, _type_of(value), f'{path} in body must be of type {kind}: "{_type_of(value)}"'))
        return
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in schema["enum"])
        errors.append(FieldError(path, value, f"supported values: {allowed}", kind="Unsupported value"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(
                _invalid(path, value, f"{path} in body should be greater than or equal to {schema['minimum']}")
            )
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(_invalid(path, value, f"{path} in body should be less than or equal to {schema['maximum']}"))
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(FieldError(path, value, f"may not be more than {schema['maxLength']} bytes", kind="Too long"))
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(_invalid(path, value, f"{path} in body should be at least {schema['minLength']} chars long"))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check(schema["items"], item, f"{path}[{i}]", errors)
    if isinstance(value, dict):
        for name in schema.get("required") or ():
            if name not in value:
                errors.append(FieldError(f"{path}.{name}", None, "", kind=REQUIRED))
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            sub = props.get(name)
            if sub is None and isinstance(extra, Mapping):
                sub = extra
            if sub is not None:
                _check(sub, item, f"{path}.{name}", errors)


def _quoted(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)
