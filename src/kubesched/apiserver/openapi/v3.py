"""The OpenAPI 3.0 documents `/openapi/v3` serves, one per group-version, converted from the
Swagger 2.0 document (`v2`), and the discovery document that lists them with their hashes."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator

from kubesched import K8S_VERSION
from kubesched.apiserver.openapi.v2 import ACTION, swagger_v2
from kubesched.storage.schemas import GVK_EXTENSION, REF_V2, REF_V3, Json, group_versions


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _v3_schema(schema: object) -> object:
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
    out[ACTION] = op[ACTION]
    out[GVK_EXTENSION] = op[GVK_EXTENSION]
    return out


def _refs(node: object) -> Iterator[str]:
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
