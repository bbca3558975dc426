"""The Swagger 2.0 document `/openapi/v2` serves: the paths and operations of every served kind
around `storage.schemas`' definitions, as JSON and as gnostic's protobuf."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass

from kubesched import K8S_VERSION
from kubesched.apiserver.openapi import gnostic
from kubesched.cluster.kinds import KINDS, Kind
from kubesched.storage.definitions import META, definition_name
from kubesched.storage.schemas import (
    GVK_EXTENSION,
    PATCH,
    Json,
    definitions,
    gvk_entry,
    list_model,
    ref,
    subresource_model,
)

ACTION = "x-kubernetes-action"  # an operation's verb, in both versions' documents
V2_PROTOBUF_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
"""What kubectl sends as Accept for `/openapi/v2` when it wants `swagger_v2_protobuf()`."""


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
    out[ACTION] = action
    out[GVK_EXTENSION] = gvk or gvk_entry(kind.group, kind.version, kind.kind)
    return out


@dataclass(frozen=True)
class _KindPaths:
    """The names a kind's paths and operations are made of."""

    prefix: str  # /api/v1 or /apis/GROUP/VERSION
    collection: str
    item: str
    namespaced: str  # "Namespaced" in operation ids of a namespaced kind
    obj: str  # the definitions of the object and its list
    obj_list: str
    scope_params: list[Json]
    item_params: list[Json]

    @classmethod
    def of(cls, kind: Kind) -> _KindPaths:
        prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
        scope = "/namespaces/{namespace}" if kind.namespaced else ""
        collection = f"{prefix}{scope}/{kind.plural}"
        scope_params = [_NAMESPACE] if kind.namespaced else []
        return cls(
            prefix=prefix,
            collection=collection,
            item=f"{collection}/{{name}}",
            namespaced="Namespaced" if kind.namespaced else "",
            obj=definition_name(kind.cls),
            obj_list=definition_name(list_model(kind)),
            scope_params=scope_params,
            item_params=[_NAME, *scope_params, _PRETTY],
        )


def _kind_paths(kind: Kind) -> Iterator[tuple[str, Json]]:
    p = _KindPaths.of(kind)
    yield _collection_path(kind, p)
    yield _item_path(kind, p)
    yield from _subresource_paths(kind, p)
    if kind.namespaced:
        yield _all_namespaces_path(kind, p)


def _collection_path(kind: Kind, p: _KindPaths) -> tuple[str, Json]:
    return (
        p.collection,
        {
            "get": _operation(
                kind,
                "list",
                "list",
                f"list or watch objects of kind {kind.kind}",
                f"{p.namespaced}{kind.kind}",
                parameters=_LIST_PARAMS,
                responses=_responses(p.obj_list, "200"),
                produces=_WATCH_PRODUCES,
            ),
            "post": _operation(
                kind,
                "create",
                "post",
                f"create a {kind.kind}",
                f"{p.namespaced}{kind.kind}",
                parameters=[_body(p.obj), *_WRITE_PARAMS],
                responses=_responses(p.obj, "200", "201", "202"),
            ),
            "delete": _operation(
                kind,
                "delete",
                "deletecollection",
                f"delete collection of {kind.kind}",
                f"Collection{p.namespaced}{kind.kind}",
                parameters=[_body(f"{META}.DeleteOptions", required=False), *_DELETE_PARAMS, *_LIST_PARAMS[1:-1]],
                responses=_responses(f"{META}.Status", "200"),
            ),
            "parameters": [*p.scope_params, _PRETTY],
        },
    )


def _item_path(kind: Kind, p: _KindPaths) -> tuple[str, Json]:
    return (
        p.item,
        {
            "get": _operation(
                kind,
                "read",
                "get",
                f"read the specified {kind.kind}",
                f"{p.namespaced}{kind.kind}",
                responses=_responses(p.obj, "200"),
            ),
            "put": _operation(
                kind,
                "replace",
                "put",
                f"replace the specified {kind.kind}",
                f"{p.namespaced}{kind.kind}",
                parameters=[_body(p.obj), *_WRITE_PARAMS],
                responses=_responses(p.obj, "200", "201"),
            ),
            "delete": _operation(
                kind,
                "delete",
                "delete",
                f"delete a {kind.kind}",
                f"{p.namespaced}{kind.kind}",
                parameters=[_body(f"{META}.DeleteOptions", required=False), *_DELETE_PARAMS],
                responses=_responses(p.obj, "200", "202"),
            ),
            "patch": _patch_operation(
                kind, f"partially update the specified {kind.kind}", f"{p.namespaced}{kind.kind}", p.obj
            ),
            "parameters": p.item_params,
        },
    )


def _subresource_paths(kind: Kind, p: _KindPaths) -> Iterator[tuple[str, Json]]:
    for sub in kind.subresources:
        word = sub.capitalize()
        if sub == "status":
            yield (
                f"{p.item}/status",
                {
                    "get": _operation(
                        kind,
                        "read",
                        "get",
                        f"read status of the specified {kind.kind}",
                        f"{p.namespaced}{kind.kind}Status",
                        responses=_responses(p.obj, "200"),
                    ),
                    "put": _operation(
                        kind,
                        "replace",
                        "put",
                        f"replace status of the specified {kind.kind}",
                        f"{p.namespaced}{kind.kind}Status",
                        parameters=[_body(p.obj), *_WRITE_PARAMS],
                        responses=_responses(p.obj, "200", "201"),
                    ),
                    "patch": _patch_operation(
                        kind,
                        f"partially update status of the specified {kind.kind}",
                        f"{p.namespaced}{kind.kind}Status",
                        p.obj,
                    ),
                    "parameters": p.item_params,
                },
            )
            continue
        found = subresource_model(sub)
        if found is None:
            continue
        model, gvk = found
        sub_obj = definition_name(model)
        yield (
            f"{p.item}/{sub}",
            {
                "post": _operation(
                    kind,
                    "create",
                    "post",
                    f"create {sub} of a {kind.kind}",
                    f"{p.namespaced}{kind.kind}{word}",
                    gvk=gvk,
                    parameters=[_body(sub_obj), *_WRITE_PARAMS],
                    responses=_responses(sub_obj, "200", "201", "202"),
                ),
                "parameters": p.item_params,
            },
        )


def _all_namespaces_path(kind: Kind, p: _KindPaths) -> tuple[str, Json]:
    return (
        f"{p.prefix}/{kind.plural}",
        {
            "get": _operation(
                kind,
                "list",
                "list",
                f"list or watch objects of kind {kind.kind}",
                f"{kind.kind}ForAllNamespaces",
                parameters=_LIST_PARAMS,
                responses=_responses(p.obj_list, "200"),
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
    return gnostic.document(swagger_v2())
