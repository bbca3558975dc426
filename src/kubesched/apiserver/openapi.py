"""The OpenAPI documents kubectl reads: Swagger 2.0 (JSON and gnostic protobuf) and OpenAPI 3.0 per group-version.

kubectl needs them for three things. Client-side validation looks a kind's schema up by the
`x-kubernetes-group-version-kind` of its definition. Before validating it asks whether the server
validates fields itself: it looks for the `fieldValidation` query parameter among the parameters of
the PATCH operation whose `x-kubernetes-group-version-kind` names the kind, and when it is there it
leaves validation to the server. `kubectl apply` builds strategic merge patches from the
`x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` of list fields, and only does so
when the kind's PATCH operation consumes `application/strategic-merge-patch+json`.

The definitions are `cluster.schemas`'; this module writes the documents around them: the paths
and operations of every served kind, the v3 conversion and the gnostic protobuf encoding.
"""

from __future__ import annotations

import functools
import hashlib
import json
import struct
from collections.abc import Iterable, Iterator
from typing import Any

from kubesched.cluster.definitions import META, definition_name
from kubesched.cluster.kinds import KINDS, Kind
from kubesched.cluster.schemas import (
    GVK_EXTENSION,
    PATCH,
    REF_V2,
    REF_V3,
    Json,
    definitions,
    group_versions,
    gvk_entry,
    list_model,
    ref,
    subresource_model,
)

_ACTION = "x-kubernetes-action"
K8S_VERSION = "v1.36.2"
V2_PROTOBUF_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
"""What kubectl sends as Accept for `/openapi/v2` when it wants `swagger_v2_protobuf()`."""

# -- paths ---------------------------------------------------------------------------------------


def _param(name: str, where: str, type_: str, description: str, *, required: bool = False) -> Json:
    out: Json = {"name": name, "in": where, "description": description, "type": type_, "uniqueItems": True}
    if required:
        out["required"] = True
    return out


_PRETTY = _param("pretty", "query", "string", "If 'true', the output is pretty printed.")
_NAME = _param("name", "path", "string", "The name of the object.", required=True)
_NAMESPACE = _param("namespace", "path", "string", "The namespace of the object.", required=True)
_DRY_RUN = _param("dryRun", "query", "string", "When `All`, the change is checked but not persisted.")
_FIELD_MANAGER = _param("fieldManager", "query", "string", "The name of the actor making the change.")
_FIELD_VALIDATION = _param(
    "fieldValidation",
    "query",
    "string",
    "How the server treats unknown and duplicate fields in the body: `Ignore` drops them, `Warn` drops "
    "them with a warning, `Strict` fails the request.",
)
_FORCE = _param("force", "query", "boolean", "Apply requests only: take fields over from other managers.")
_LIST_PARAMS = [
    _param("allowWatchBookmarks", "query", "boolean", "Ask for BOOKMARK events in a watch."),
    _param("continue", "query", "string", "The continue token of the previous page of a list."),
    _param("fieldSelector", "query", "string", "Select objects by their fields, such as `spec.nodeName=n1`."),
    _param("labelSelector", "query", "string", "Select objects by their labels."),
    _param("limit", "query", "integer", "The most objects a page of a list holds."),
    _param("resourceVersion", "query", "string", "The resource version to list or watch from."),
    _param("resourceVersionMatch", "query", "string", "How `resourceVersion` applies to a list."),
    _param("sendInitialEvents", "query", "boolean", "Start a watch with the current objects as ADDED events."),
    _param("timeoutSeconds", "query", "integer", "How long a list or watch may take."),
    _param("watch", "query", "boolean", "Watch for changes instead of listing."),
]
_DELETE_PARAMS = [
    _DRY_RUN,
    _param("gracePeriodSeconds", "query", "integer", "Seconds to wait before the object is deleted."),
    _param(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "query",
        "boolean",
        "Delete an object that cannot be read back from storage.",
    ),
    _param("orphanDependents", "query", "boolean", "Deprecated: use `propagationPolicy`."),
    _param("propagationPolicy", "query", "string", "`Orphan`, `Background` or `Foreground` garbage collection."),
]
_WRITE_PARAMS = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]

_PATCH_TYPES = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
]
_PRODUCES = ["application/json"]
_WATCH_PRODUCES = ["application/json", "application/json;stream=watch"]


def _body(schema: str, *, required: bool = True) -> Json:
    return {"name": "body", "in": "body", "required": required, "schema": ref(schema)}


def _responses(schema: str, *codes: str) -> Json:
    text = {"200": "OK", "201": "Created", "202": "Accepted"}
    out: Json = {code: {"description": text[code], "schema": ref(schema)} for code in codes}
    out["401"] = {"description": "Unauthorized"}
    return out


def _group_word(group: str) -> str:
    return group.split(".", 1)[0].capitalize() if group else "Core"


def _operation(
    kind: Kind,
    verb: str,
    action: str,
    description: str,
    suffix: str,
    *,
    gvk: Json | None = None,
    parameters: list[Json] | None = None,
    responses: Json,
    consumes: list[str] | None = None,
    produces: list[str] | None = None,
) -> Json:
    group_word = _group_word(kind.group)
    tag = f"{group_word.lower()}_{kind.version}"
    out: Json = {
        "description": description,
        "consumes": consumes or ["*/*"],
        "produces": produces or _PRODUCES,
        "schemes": ["https"],
        "tags": [tag],
        "operationId": f"{verb}{group_word}{kind.version.capitalize()}{suffix}",
    }
    if parameters:
        out["parameters"] = parameters
    out["responses"] = responses
    out[_ACTION] = action
    out[GVK_EXTENSION] = gvk or gvk_entry(kind.group, kind.version, kind.kind)
    return out


def _kind_paths(kind: Kind) -> Iterator[tuple[str, Json]]:
    prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    scope = "/namespaces/{namespace}" if kind.namespaced else ""
    namespaced = "Namespaced" if kind.namespaced else ""
    obj = definition_name(kind.cls)
    obj_list = definition_name(list_model(kind))
    status = f"{META}.Status"
    delete_options = f"{META}.DeleteOptions"
    scope_params = [_NAMESPACE] if kind.namespaced else []
    k = kind.kind
    collection = f"{prefix}{scope}/{kind.plural}"
    yield (
        collection,
        {
            "get": _operation(
                kind,
                "list",
                "list",
                f"list or watch objects of kind {k}",
                f"{namespaced}{k}",
                parameters=_LIST_PARAMS,
                responses=_responses(obj_list, "200"),
                produces=_WATCH_PRODUCES,
            ),
            "post": _operation(
                kind,
                "create",
                "post",
                f"create a {k}",
                f"{namespaced}{k}",
                parameters=[_body(obj), *_WRITE_PARAMS],
                responses=_responses(obj, "200", "201", "202"),
            ),
            "delete": _operation(
                kind,
                "delete",
                "deletecollection",
                f"delete collection of {k}",
                f"Collection{namespaced}{k}",
                parameters=[_body(delete_options, required=False), *_DELETE_PARAMS, *_LIST_PARAMS[1:-1]],
                responses=_responses(status, "200"),
            ),
            "parameters": [*scope_params, _PRETTY],
        },
    )
    item = f"{collection}/{{name}}"
    item_params = [_NAME, *scope_params, _PRETTY]
    yield (
        item,
        {
            "get": _operation(
                kind, "read", "get", f"read the specified {k}", f"{namespaced}{k}", responses=_responses(obj, "200")
            ),
            "put": _operation(
                kind,
                "replace",
                "put",
                f"replace the specified {k}",
                f"{namespaced}{k}",
                parameters=[_body(obj), *_WRITE_PARAMS],
                responses=_responses(obj, "200", "201"),
            ),
            "delete": _operation(
                kind,
                "delete",
                "delete",
                f"delete a {k}",
                f"{namespaced}{k}",
                parameters=[_body(delete_options, required=False), *_DELETE_PARAMS],
                responses=_responses(obj, "200", "202"),
            ),
            "patch": _patch_operation(kind, f"partially update the specified {k}", f"{namespaced}{k}", obj),
            "parameters": item_params,
        },
    )
    for sub in kind.subresources:
        word = sub.capitalize()
        if sub == "status":
            yield (
                f"{item}/status",
                {
                    "get": _operation(
                        kind,
                        "read",
                        "get",
                        f"read status of the specified {k}",
                        f"{namespaced}{k}Status",
                        responses=_responses(obj, "200"),
                    ),
                    "put": _operation(
                        kind,
                        "replace",
                        "put",
                        f"replace status of the specified {k}",
                        f"{namespaced}{k}Status",
                        parameters=[_body(obj), *_WRITE_PARAMS],
                        responses=_responses(obj, "200", "201"),
                    ),
                    "patch": _patch_operation(
                        kind, f"partially update status of the specified {k}", f"{namespaced}{k}Status", obj
                    ),
                    "parameters": item_params,
                },
            )
            continue
        found = subresource_model(sub)
        if found is None:
            continue
        model, gvk = found
        sub_obj = definition_name(model)
        yield (
            f"{item}/{sub}",
            {
                "post": _operation(
                    kind,
                    "create",
                    "post",
                    f"create {sub} of a {k}",
                    f"{namespaced}{k}{word}",
                    gvk=gvk,
                    parameters=[_body(sub_obj), *_WRITE_PARAMS],
                    responses=_responses(sub_obj, "200", "201", "202"),
                ),
                "parameters": item_params,
            },
        )
    if kind.namespaced:
        yield (
            f"{prefix}/{kind.plural}",
            {
                "get": _operation(
                    kind,
                    "list",
                    "list",
                    f"list or watch objects of kind {k}",
                    f"{k}ForAllNamespaces",
                    parameters=_LIST_PARAMS,
                    responses=_responses(obj_list, "200"),
                    produces=_WATCH_PRODUCES,
                ),
                "parameters": [_PRETTY],
            },
        )


def _patch_operation(kind: Kind, description: str, suffix: str, obj: str) -> Json:
    return _operation(
        kind,
        "patch",
        "patch",
        description,
        suffix,
        parameters=[_body(PATCH), *_WRITE_PARAMS, _FORCE],
        responses=_responses(obj, "200", "201"),
        consumes=_PATCH_TYPES,
    )


@functools.cache
def _swagger_v2() -> Json:
    paths: dict[str, Json] = {}
    for kind in KINDS.values():
        for path, item in _kind_paths(kind):
            paths[path] = item
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": K8S_VERSION},
        "paths": dict(sorted(paths.items())),
        "definitions": definitions(),
    }


def swagger_v2() -> Json:
    """The whole Swagger 2.0 document `/openapi/v2` serves. Shared: do not modify it."""
    return _swagger_v2()


@functools.cache
def swagger_v2_json() -> bytes:
    """`swagger_v2()` as JSON, for `/openapi/v2` with `Accept: application/json`."""
    return json.dumps(swagger_v2(), separators=(",", ":")).encode()


@functools.cache
def swagger_v2_protobuf() -> bytes:
    """`swagger_v2()` as a gnostic `openapi.v2.Document` message, for `Accept: V2_PROTOBUF_ACCEPT`."""
    return _document(swagger_v2())


# -- OpenAPI v3 ----------------------------------------------------------------------------------


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _v3_schema(schema: Any) -> Any:
    """A v2 schema in v3 form: component references, and `allOf` around references with siblings."""
    if isinstance(schema, list):
        return [_v3_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    reference = schema.get("$ref")
    if not isinstance(reference, str):  # no reference (JSONSchemaProps has a *property* named "$ref")
        return {key: _v3_schema(value) for key, value in schema.items()}
    out = {key: _v3_schema(value) for key, value in schema.items() if key != "$ref"}
    v3 = {"$ref": REF_V3 + reference.removeprefix(REF_V2)}
    if not out:
        return v3
    return {"allOf": [v3], **out}


def _v3_parameter(param: Json) -> Json:
    schema: Json = {"type": param["type"], "uniqueItems": True}
    out: Json = {"name": param["name"], "in": param["in"], "description": param["description"]}
    if param.get("required"):
        out["required"] = True
    out["schema"] = schema
    return out


def _v3_operation(op: Json) -> Json:
    out: Json = {key: op[key] for key in ("tags", "description", "operationId")}
    params = [p for p in op.get("parameters", []) if p["in"] != "body"]
    bodies = [p for p in op.get("parameters", []) if p["in"] == "body"]
    if params:
        out["parameters"] = [_v3_parameter(p) for p in params]
    if bodies:
        schema = _v3_schema(bodies[0]["schema"])
        out["requestBody"] = {
            "content": {media: {"schema": schema} for media in op["consumes"]},
            "required": bodies[0]["required"],
        }
    responses: Json = {}
    for code, response in op["responses"].items():
        entry: Json = {"description": response["description"]}
        if "schema" in response:
            schema = _v3_schema(response["schema"])
            entry["content"] = {media: {"schema": schema} for media in op["produces"]}
        responses[code] = entry
    out["responses"] = responses
    out[_ACTION] = op[_ACTION]
    out[GVK_EXTENSION] = op[GVK_EXTENSION]
    return out


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value.rsplit("/", 1)[-1]
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


@functools.cache
def _v3_documents() -> dict[str, tuple[Json, bytes]]:
    v2 = swagger_v2()
    defs = v2["definitions"]
    out: dict[str, tuple[Json, bytes]] = {}
    for group, version in sorted(group_versions()):
        gv = _gv_path(group, version)
        paths: Json = {}
        for path, item in v2["paths"].items():
            if not path.startswith(f"/{gv}/"):
                continue
            converted: Json = {}
            for method, op in item.items():
                if method == "parameters":
                    converted["parameters"] = [_v3_parameter(p) for p in op]
                else:
                    converted[method] = _v3_operation(op)
            paths[path] = converted
        names: set[str] = set()
        todo = list(_refs(paths))
        while todo:
            name = todo.pop()
            if name not in names:
                names.add(name)
                todo.extend(_refs(defs[name]))
        document: Json = {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": K8S_VERSION},
            "paths": paths,
            "components": {"schemas": {name: _v3_schema(defs[name]) for name in sorted(names)}},
        }
        out[gv] = (document, json.dumps(document, separators=(",", ":")).encode())
    return out


@functools.cache
def openapi_v3_paths() -> Json:
    """The `/openapi/v3` discovery document: each group-version's URL, with a hash of its document."""
    paths: Json = {}
    for gv, (_, body) in _v3_documents().items():
        digest = hashlib.sha512(body).hexdigest().upper()
        paths[gv] = {"serverRelativeURL": f"/openapi/v3/{gv}?hash={digest}"}
    return {"paths": paths}


def openapi_v3_group_version(path: str) -> Json | None:
    """The OpenAPI 3.0 document of one group-version (`api/v1`, `apis/apps/v1`), None for others.

    Shared: do not modify it.
    """
    found = _v3_documents().get(path.strip("/").removeprefix("openapi/v3/"))
    return found[0] if found else None


def openapi_v3_group_version_json(path: str) -> bytes | None:
    """`openapi_v3_group_version(path)` as the JSON its hash in `openapi_v3_paths()` was taken of."""
    found = _v3_documents().get(path.strip("/").removeprefix("openapi/v3/"))
    return found[1] if found else None


# -- protobuf: gnostic's openapi.v2 messages -----------------------------------------------------
#
# Each message is written with its fields in field-number order, as Go's encoder does. Vendor
# extensions (`x-...` keys) become NamedAny entries whose Any carries the value as YAML; JSON is YAML,
# so the value's JSON text is what is written.


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _len(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _string(field: int, value: str) -> bytes:
    return _len(field, value.encode()) if value else b""


def _bool(field: int, value: bool) -> bytes:
    return _varint(field << 3) + b"\x01" if value else b""


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value) if value else b""


def _double(field: int, value: float) -> bytes:
    return _varint(field << 3 | 1) + struct.pack("<d", value) if value else b""


def _strings(field: int, values: Iterable[str]) -> bytes:
    return b"".join(_len(field, v.encode()) for v in values)


def _any(value: Any) -> bytes:
    return _string(2, json.dumps(value, ensure_ascii=False) + "\n")


def _named(field: int, name: str, value: bytes) -> bytes:
    return _len(field, _string(1, name) + _len(2, value))


def _extensions(field: int, obj: Json) -> bytes:
    return b"".join(_named(field, k, _any(v)) for k, v in obj.items() if k.startswith("x-"))


def _message(obj: Json, fields: dict[str, tuple[int, Any]], extension_field: int, what: str) -> bytes:
    """Encode the keys of `obj` by `fields` (key -> field number, encoder), in field-number order."""
    parts: list[tuple[int, bytes]] = []
    for key, value in obj.items():
        if key.startswith("x-"):
            continue
        if key not in fields:
            raise ValueError(f"{what}: the encoder has no field for {key!r}")
        number, encode = fields[key]
        parts.append((number, encode(number, value)))
    parts.append((extension_field, _extensions(extension_field, obj)))
    parts.sort(key=lambda part: part[0])
    return b"".join(payload for _, payload in parts)


def _sub(encoder: Any) -> Any:
    return lambda number, value: _len(number, encoder(value))


def _subs(encoder: Any) -> Any:
    return lambda number, values: b"".join(_len(number, encoder(v)) for v in values)


def _schema(obj: Json) -> bytes:
    return _message(obj, _SCHEMA_FIELDS, 31, "Schema")


def _type_item(value: str | list[str]) -> bytes:
    return _strings(1, [value] if isinstance(value, str) else value)


def _items_item(value: Json | list[Json]) -> bytes:
    return b"".join(_len(1, _schema(s)) for s in ([value] if isinstance(value, dict) else value))


def _additional_properties(value: Json | bool) -> bytes:
    if isinstance(value, bool):
        return _varint(2 << 3) + (b"\x01" if value else b"\x00")
    return _len(1, _schema(value))


def _properties(value: Json) -> bytes:
    return b"".join(_named(1, name, _schema(schema)) for name, schema in value.items())


def _external_docs(obj: Json) -> bytes:
    return _message(obj, {"description": (1, _string), "url": (2, _string)}, 3, "ExternalDocs")


_SCHEMA_FIELDS: dict[str, tuple[int, Any]] = {
    "$ref": (1, _string),
    "format": (2, _string),
    "title": (3, _string),
    "description": (4, _string),
    "default": (5, _sub(_any)),
    "multipleOf": (6, _double),
    "maximum": (7, _double),
    "exclusiveMaximum": (8, _bool),
    "minimum": (9, _double),
    "exclusiveMinimum": (10, _bool),
    "maxLength": (11, _int),
    "minLength": (12, _int),
    "pattern": (13, _string),
    "maxItems": (14, _int),
    "minItems": (15, _int),
    "uniqueItems": (16, _bool),
    "maxProperties": (17, _int),
    "minProperties": (18, _int),
    "required": (19, _strings),
    "enum": (20, _subs(_any)),
    "additionalProperties": (21, _sub(_additional_properties)),
    "type": (22, _sub(_type_item)),
    "items": (23, _sub(_items_item)),
    "allOf": (24, _subs(_schema)),
    "properties": (25, _sub(_properties)),
    "discriminator": (26, _string),
    "readOnly": (27, _bool),
    "externalDocs": (29, _sub(_external_docs)),
    "example": (30, _sub(_any)),
}

# QueryParameterSubSchema and PathParameterSubSchema share their first fields; past `name` the path
# one lacks allowEmptyValue, so its numbers are one lower.
_QUERY_FIELDS: dict[str, tuple[int, Any]] = {
    "required": (1, _bool),
    "in": (2, _string),
    "description": (3, _string),
    "name": (4, _string),
    "allowEmptyValue": (5, _bool),
    "type": (6, _string),
    "format": (7, _string),
    "collectionFormat": (9, _string),
    "default": (10, _sub(_any)),
    "uniqueItems": (20, _bool),
    "enum": (21, _subs(_any)),
}
_PATH_FIELDS: dict[str, tuple[int, Any]] = {
    "required": (1, _bool),
    "in": (2, _string),
    "description": (3, _string),
    "name": (4, _string),
    "type": (5, _string),
    "format": (6, _string),
    "collectionFormat": (8, _string),
    "default": (9, _sub(_any)),
    "uniqueItems": (19, _bool),
    "enum": (20, _subs(_any)),
}
_BODY_FIELDS: dict[str, tuple[int, Any]] = {
    "description": (1, _string),
    "name": (2, _string),
    "in": (3, _string),
    "required": (4, _bool),
    "schema": (5, _sub(_schema)),
}


def _parameters_item(param: Json) -> bytes:
    """A ParametersItem: a Parameter (body, or a non-body one by where it goes), or a reference."""
    if "$ref" in param:
        return _len(2, _string(1, param["$ref"]))
    where = param.get("in")
    if where == "body":
        parameter = _len(1, _message(param, _BODY_FIELDS, 6, "BodyParameter"))
    elif where == "query":
        parameter = _len(2, _len(3, _message(param, _QUERY_FIELDS, 23, "QueryParameterSubSchema")))
    elif where == "path":
        parameter = _len(2, _len(4, _message(param, _PATH_FIELDS, 22, "PathParameterSubSchema")))
    else:
        raise ValueError(f"parameter {param.get('name')!r}: cannot encode parameters in {where!r}")
    return _len(1, parameter)


def _response(obj: Json) -> bytes:
    fields = {"description": (1, _string), "schema": (2, _sub(lambda s: _len(1, _schema(s))))}
    return _message(obj, fields, 5, "Response")


def _responses_message(obj: Json) -> bytes:
    codes = b"".join(_named(1, code, _len(1, _response(r))) for code, r in obj.items() if not code.startswith("x-"))
    return codes + _extensions(2, obj)


_OPERATION_FIELDS: dict[str, tuple[int, Any]] = {
    "tags": (1, _strings),
    "summary": (2, _string),
    "description": (3, _string),
    "externalDocs": (4, _sub(_external_docs)),
    "operationId": (5, _string),
    "produces": (6, _strings),
    "consumes": (7, _strings),
    "parameters": (8, _subs(_parameters_item)),
    "responses": (9, _sub(_responses_message)),
    "schemes": (10, _strings),
    "deprecated": (11, _bool),
}


def _operation_message(obj: Json) -> bytes:
    return _message(obj, _OPERATION_FIELDS, 13, "Operation")


_PATH_ITEM_FIELDS: dict[str, tuple[int, Any]] = {
    "$ref": (1, _string),
    "get": (2, _sub(_operation_message)),
    "put": (3, _sub(_operation_message)),
    "post": (4, _sub(_operation_message)),
    "delete": (5, _sub(_operation_message)),
    "options": (6, _sub(_operation_message)),
    "head": (7, _sub(_operation_message)),
    "patch": (8, _sub(_operation_message)),
    "parameters": (9, _subs(_parameters_item)),
}


def _paths(obj: Json) -> bytes:
    items = b"".join(
        _named(2, path, _message(item, _PATH_ITEM_FIELDS, 10, "PathItem"))
        for path, item in obj.items()
        if not path.startswith("x-")
    )
    return _extensions(1, obj) + items


def _info(obj: Json) -> bytes:
    fields = {"title": (1, _string), "version": (2, _string), "description": (3, _string)}
    return _message(obj, fields, 7, "Info")


def _definitions_message(obj: Json) -> bytes:
    return b"".join(_named(1, name, _schema(schema)) for name, schema in obj.items())


_DOCUMENT_FIELDS: dict[str, tuple[int, Any]] = {
    "swagger": (1, _string),
    "info": (2, _sub(_info)),
    "host": (3, _string),
    "basePath": (4, _string),
    "schemes": (5, _strings),
    "consumes": (6, _strings),
    "produces": (7, _strings),
    "paths": (8, _sub(_paths)),
    "definitions": (9, _sub(_definitions_message)),
}


def _document(obj: Json) -> bytes:
    return _message(obj, _DOCUMENT_FIELDS, 16, "Document")
