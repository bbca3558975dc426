"""The OpenAPI documents kubectl reads: Swagger 2.0 (JSON and gnostic protobuf) and OpenAPI 3.0 per group-version.

kubectl needs them for three things. Client-side validation looks a kind's schema up by the
`x-kubernetes-group-version-kind` of its definition. Before validating it asks whether the server
validates fields itself: it looks for the `fieldValidation` query parameter among the parameters of
the PATCH operation whose `x-kubernetes-group-version-kind` names the kind, and when it is there it
leaves validation to the server. `kubectl apply` builds strategic merge patches from the
`x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` of list fields, and only does so
when the kind's PATCH operation consumes `application/strategic-merge-patch+json`.

The schemas come from the lightkube models of the served kinds. Three things the models lose are put
back by the tables below: the value types of maps (the models type every map as a plain `dict`), the
patch strategies of lists, and descriptions, which are read from the models' docstrings.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib
import inspect
import json
import re
import struct
import sys
import typing
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from kubesched.cluster.definitions import MAP_VALUES, META, definition_name, model_of, short_name
from kubesched.cluster.kinds import KINDS, Kind

Json = dict[str, Any]

K8S_VERSION = "v1.36.2"
V2_PROTOBUF_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
"""What kubectl sends as Accept for `/openapi/v2` when it wants `swagger_v2_protobuf()`."""

_META = META
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
TIME = f"{_META}.Time"
MICRO_TIME = f"{_META}.MicroTime"
FIELDS_V1 = f"{_META}.FieldsV1"
PATCH = f"{_META}.Patch"
RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"

# Names the models use for types that are not structs, by the last part of the annotation.
_ALIASES = {
    "Quantity": QUANTITY,
    "IntOrString": INT_OR_STRING,
    "Time": TIME,
    "MicroTime": MICRO_TIME,
    "FieldsV1": FIELDS_V1,
    "RawExtension": RAW_EXTENSION,
    "Patch": PATCH,
}

_SCALAR_DEFINITIONS: dict[str, Json] = {
    QUANTITY: {
        "description": "A fixed-point number with an optional binary (Ki, Mi, ...) or decimal (m, k, M, ...) "
        "suffix or exponent, such as `100m`, `1.5Gi` or `2e3`. Serialized as a string; plain numbers are "
        "accepted on input.",
        "type": "string",
    },
    INT_OR_STRING: {
        "description": "A value that is either an integer or a string, such as a port number or a port name, "
        "or a count or a percentage.",
        "type": "string",
        "format": "int-or-string",
    },
    TIME: {
        "description": "A timestamp in RFC 3339 form with second precision, such as `2024-01-02T03:04:05Z`.",
        "type": "string",
        "format": "date-time",
    },
    MICRO_TIME: {
        "description": "A timestamp in RFC 3339 form with microsecond precision.",
        "type": "string",
        "format": "date-time",
    },
    FIELDS_V1: {
        "description": "The set of fields a manager owns, as a JSON trie of `f:`, `k:`, `v:` and `i:` keys.",
        "type": "object",
    },
    RAW_EXTENSION: {
        "description": "An embedded object of any kind, carried as JSON.",
        "type": "object",
    },
    PATCH: {
        "description": "The body of a PATCH request: a JSON patch, a JSON merge patch, a strategic merge patch "
        "or an apply configuration, as its Content-Type says.",
        "type": "object",
    },
}

# How strategic merge patches treat fields: (patch strategy, merge key, list map keys). Lists
# keyed by a merge key are merged item by item; `merge` without a key merges lists as sets.
_Patch = tuple[str, str, tuple[str, ...]]


def _by(key: str, *more: str, strategy: str = "merge") -> _Patch:
    return (strategy, key, (key, *more))


_CONDITIONS = {"conditions": _by("type")}
_CONTAINER = {
    "ports": _by("containerPort", "protocol"),
    "env": _by("name"),
    "volumeMounts": _by("mountPath"),
    "volumeDevices": _by("devicePath"),
}
_PATCH_STRATEGIES: dict[str, dict[str, _Patch]] = {
    "meta.v1.ObjectMeta": {"finalizers": ("merge", "", ()), "ownerReferences": _by("uid")},
    "core.v1.PodSpec": {
        "containers": _by("name"),
        "initContainers": _by("name"),
        "ephemeralContainers": _by("name"),
        "volumes": _by("name", strategy="merge,retainKeys"),
        "imagePullSecrets": _by("name"),
        "hostAliases": _by("ip"),
        "topologySpreadConstraints": _by("topologyKey", "whenUnsatisfiable"),
        "resourceClaims": _by("name", strategy="merge,retainKeys"),
        "schedulingGates": _by("name"),
        "evictionResponders": _by("name"),
    },
    "core.v1.Container": _CONTAINER,
    "core.v1.EphemeralContainer": _CONTAINER,
    "core.v1.ContainerStatus": {"volumeMounts": _by("mountPath"), "allocatedResourcesStatus": _by("name")},
    "core.v1.PodStatus": {
        **_CONDITIONS,
        "podIPs": _by("ip"),
        "hostIPs": ("merge", "ip", ()),
        "resourceClaimStatuses": _by("name", strategy="merge,retainKeys"),
        "nodeAllocatableResourceClaimStatuses": _by("resourceClaimName"),
    },
    "core.v1.PodVolumeHealth": {"healthConditions": _by("status", "reason")},
    "core.v1.NodeAllocatableResourceClaimStatus": {"mapping": _by("name"), "overhead": _by("name")},
    "core.v1.NodeSpec": {"podCIDRs": ("merge", "", ())},
    "core.v1.NodeStatus": {**_CONDITIONS, "addresses": _by("type")},
    "core.v1.NamespaceStatus": _CONDITIONS,
    "core.v1.PersistentVolumeClaimStatus": _CONDITIONS,
    "core.v1.ReplicationControllerStatus": _CONDITIONS,
    "core.v1.ServiceSpec": {"ports": _by("port", "protocol")},
    "core.v1.ServiceStatus": _CONDITIONS,
    "core.v1.VolumeHealthStatus": {"healthConditions": _by("status", "reason")},
    "apps.v1.DeploymentSpec": {"strategy": ("retainKeys", "", ())},
    "apps.v1.DeploymentStatus": _CONDITIONS,
    "apps.v1.ReplicaSetStatus": _CONDITIONS,
    "apps.v1.StatefulSetStatus": _CONDITIONS,
    "policy.v1.PodDisruptionBudgetSpec": {"selector": ("replace", "", ())},
    "policy.v1.PodDisruptionBudgetStatus": _CONDITIONS,
    "resource.v1.ResourceClaimStatus": {"reservedFor": _by("uid")},
    "storage.v1.CSINodeSpec": {"drivers": _by("name")},
    "storage.v1.CSINodeStatus": {"storageHealth": _by("name")},
}

# Lists that server-side apply merges but strategic merge patches replace whole: () for a set,
# else the keys of a map. (Lists in neither table are atomic.)
_LIST_TYPES: dict[str, dict[str, tuple[str, ...]]] = {
    "core.v1.ContainerRestartRuleOnExitCodes": {"values": ()},
    "core.v1.NodeAllocatableResourceClaimStatus": {"containers": ()},
    "core.v1.NodePodPreemptionPolicy": {"disableResizePreemption": ()},
    "core.v1.PodStatus": {"volumeHealth": ("name",)},
    "core.v1.ResourceRequirements": {"claims": ("name",)},
    "core.v1.ResourceStatus": {"resources": ("resourceID",)},
    "core.v1.VolumeMount": {"bindMountOptions": ()},
    "resource.v1.AllocatedDeviceStatus": {"conditions": ("type",)},
    "resource.v1.DeviceRequestAllocationResult": {"skipNodeOperations": ()},
    "resource.v1.ResourceClaimStatus": {"devices": ("driver", "device", "pool", "shareID")},
    "resource.v1.ResourceSliceSpec": {"skipNodeOperations": ()},
    "storage.v1.CSIDriverSpec": {"volumeLifecycleModes": ()},
}

_GVK = "x-kubernetes-group-version-kind"
_ACTION = "x-kubernetes-action"
_REF_V2 = "#/definitions/"
_REF_V3 = "#/components/schemas/"


# -- definitions ---------------------------------------------------------------------------------


def _ref(name: str) -> Json:
    return {"$ref": _REF_V2 + name}


def _split_generic(text: str) -> tuple[str, str] | None:
    """`List[X]` -> ("List", "X"); None for a plain name."""
    if not text.endswith("]") or "[" not in text:
        return None
    head, _, inner = text.partition("[")
    return head.strip(), inner[:-1].strip()


def _description(doc: str | None) -> tuple[str, dict[str, str]]:
    """The class description and the field descriptions from a lightkube model docstring."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    head, _, params = text.partition("**parameters**")
    fields: dict[str, str] = {}
    name = ""
    lines: list[str] = []
    for raw in params.splitlines():
        line = raw.strip()
        match = re.match(r"\* \*\*(\w+)\*\* ``[^`]*`` - ?(.*)", line)
        if match:
            if name:
                fields[name] = _join(lines)
            name, lines = match.group(1), [match.group(2)]
        elif name:
            lines.append(line)
    if name:
        fields[name] = _join(lines)
    return _join(head.splitlines()), fields


def _join(lines: Iterable[str]) -> str:
    """Unwrap docstring lines: wrapped lines join with a space, blank lines separate paragraphs."""
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        line = line.strip()
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join(" ".join(p) for p in paragraphs if p)


class _Builder:
    """Walks the models from the served kinds, writing one definition per struct it reaches."""

    def __init__(self) -> None:
        self.definitions: dict[str, Json] = {}
        self.pending: list[type[Any]] = []
        self.unknown_maps: list[str] = []
        self.gvks: dict[str, list[Json]] = {}

    def add(self, cls: type[Any], gvks: list[Json] | None = None) -> str:
        name = definition_name(cls)
        if name not in self.definitions:
            self.definitions[name] = {}  # reserved; filled by drain()
            self.pending.append(model_of(cls))
        if gvks:
            self.gvks.setdefault(name, []).extend(gvks)
        return name

    def drain(self) -> None:
        while self.pending:
            model = self.pending.pop()
            self.definitions[definition_name(model)] = self._struct(model)

    def _struct(self, model: type[Any]) -> Json:
        name = definition_name(model)
        short = short_name(name)
        description, field_docs = _description(model.__doc__)
        annotations: dict[str, Any] = {}
        for base in reversed(model.__mro__):
            annotations.update(getattr(base, "__annotations__", {}))
        module = sys.modules[model.__module__]
        fields: tuple[str, ...] = model.__struct_fields__
        encoded: tuple[str, ...] = model.__struct_encode_fields__
        defaults: tuple[Any, ...] = model.__struct_defaults__
        first_default = len(fields) - len(defaults)
        properties: dict[str, Json] = {}
        required: list[str] = []
        for index, (attr, key) in enumerate(zip(fields, encoded, strict=True)):
            where = f"{short}.{key}"
            schema = self._type(str(annotations[attr]), module, where)
            doc = field_docs.get(attr) or field_docs.get(key)
            if doc:
                schema = {"description": doc, **schema}
            strategy = _PATCH_STRATEGIES.get(short, {}).get(key)
            if strategy:
                schema.update(_patch_extensions(strategy, is_list=schema.get("type") == "array"))
            list_keys = _LIST_TYPES.get(short, {}).get(key)
            if list_keys is not None:
                schema.update(_list_extensions(list_keys))
            properties[key] = schema
            if index < first_default:
                required.append(key)
        out: Json = {}
        if description:
            out["description"] = description
        out["type"] = "object"
        out["properties"] = dict(sorted(properties.items()))
        if required:
            out["required"] = required
        gvks = self.gvks.get(name)
        if gvks:
            out[_GVK] = gvks
        return out

    def _type(self, annotation: str, module: Any, where: str) -> Json:
        generic = _split_generic(annotation)
        if generic:
            head, inner = generic
            if head == "Optional":
                return self._type(inner, module, where)
            if head == "List":
                return {"type": "array", "items": self._type(inner, module, where)}
            if head == "Dict":
                value = inner.split(",", 1)[1].strip()
                return {"type": "object", "additionalProperties": self._type(value, module, where)}
            raise TypeError(f"{where}: cannot describe {annotation!r}")
        if annotation in ("dict", "Dict"):
            definition, _, field = where.rpartition(".")
            value_type = MAP_VALUES.get(definition, {}).get(field)
            if value_type is None:
                self.unknown_maps.append(where)
                return {"type": "object"}
            return {"type": "object", "additionalProperties": self._type(value_type, module, where)}
        scalar = {"str": "string", "int": "integer", "bool": "boolean"}.get(annotation)
        if scalar:
            return {"type": scalar}
        if annotation == "float":
            return {"type": "number", "format": "double"}
        if annotation == "bytes":
            return {"type": "string", "format": "byte"}
        leaf = annotation.rsplit(".", 1)[-1]
        if leaf in _ALIASES:
            return _ref(_ALIASES[leaf])
        if "." in annotation:
            mod_name, _, attr = annotation.rpartition(".")
            target = getattr(importlib.import_module(f"lightkube.models.{mod_name}"), attr)
        else:
            target = getattr(module, annotation)
        if isinstance(target, type) and issubclass(target, msgspec.Struct):
            return _ref(self.add(target))
        if target is Any:
            return {}
        if target is dict or target is typing.Dict:  # noqa: UP006 - an alias lightkube defines (e.g. the CRD status subresource)
            return {"type": "object"}
        raise TypeError(f"{where}: cannot describe {annotation!r}")


def _patch_extensions(strategy: _Patch, *, is_list: bool) -> Json:
    patch, merge_key, map_keys = strategy
    out: Json = {}
    if is_list:
        if map_keys:
            out["x-kubernetes-list-map-keys"] = list(map_keys)
            out["x-kubernetes-list-type"] = "map"
        else:
            out["x-kubernetes-list-type"] = "atomic" if merge_key else "set"
    if merge_key:
        out["x-kubernetes-patch-merge-key"] = merge_key
    out["x-kubernetes-patch-strategy"] = patch
    return out


def _list_extensions(keys: tuple[str, ...]) -> Json:
    if keys:
        return {"x-kubernetes-list-map-keys": list(keys), "x-kubernetes-list-type": "map"}
    return {"x-kubernetes-list-type": "set"}


def _gvk(group: str, version: str, kind: str) -> Json:
    return {"group": group, "version": version, "kind": kind}


def _group_versions() -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for kind in KINDS.values():
        seen[(kind.group, kind.version)] = None
    return list(seen)


def _list_model(kind: Kind) -> type[Any]:
    model = model_of(kind.cls)
    return getattr(sys.modules[model.__module__], f"{kind.kind}List")  # type: ignore[no-any-return]


def _subresource_model(sub: str) -> tuple[type[Any], Json] | None:
    from lightkube.models import core_v1, policy_v1

    if sub == "binding":
        return core_v1.Binding, _gvk("", "v1", "Binding")
    if sub == "eviction":
        return policy_v1.Eviction, _gvk("policy", "v1", "Eviction")
    return None


@functools.cache
def _definitions() -> tuple[dict[str, Json], tuple[str, ...]]:
    from lightkube.models import meta_v1

    builder = _Builder()
    for kind in KINDS.values():
        builder.add(kind.cls, [_gvk(kind.group, kind.version, kind.kind)])
        builder.add(_list_model(kind), [_gvk(kind.group, kind.version, f"{kind.kind}List")])
        for sub in kind.subresources:
            found = _subresource_model(sub)
            if found:
                builder.add(found[0], [found[1]])
    every_gv = [_gvk(group, version, "") for group, version in _group_versions()]
    builder.add(meta_v1.Status, [_gvk("", "v1", "Status")])
    builder.add(meta_v1.DeleteOptions, [{**gv, "kind": "DeleteOptions"} for gv in every_gv])
    builder.add(meta_v1.WatchEvent, [{**gv, "kind": "WatchEvent"} for gv in every_gv])
    builder.drain()
    definitions = {**builder.definitions, **copy.deepcopy(_SCALAR_DEFINITIONS)}
    return dict(sorted(definitions.items())), tuple(builder.unknown_maps)


def definitions() -> dict[str, Json]:
    """Swagger 2.0 `definitions` for every served kind, its list, and what they reach."""
    return _definitions()[0]


def unknown_maps() -> tuple[str, ...]:
    """Map fields whose value type the tables do not give (described as free-form objects)."""
    return _definitions()[1]


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
    return {"name": "body", "in": "body", "required": required, "schema": _ref(schema)}


def _responses(schema: str, *codes: str) -> Json:
    text = {"200": "OK", "201": "Created", "202": "Accepted"}
    out: Json = {code: {"description": text[code], "schema": _ref(schema)} for code in codes}
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
    out[_GVK] = gvk or _gvk(kind.group, kind.version, kind.kind)
    return out


def _kind_paths(kind: Kind) -> Iterator[tuple[str, Json]]:
    prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    scope = "/namespaces/{namespace}" if kind.namespaced else ""
    namespaced = "Namespaced" if kind.namespaced else ""
    obj = definition_name(kind.cls)
    obj_list = definition_name(_list_model(kind))
    status = f"{_META}.Status"
    delete_options = f"{_META}.DeleteOptions"
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
        found = _subresource_model(sub)
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
    ref = {"$ref": _REF_V3 + reference.removeprefix(_REF_V2)}
    if not out:
        return ref
    return {"allOf": [ref], **out}


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
    out[_GVK] = op[_GVK]
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
    for group, version in sorted(_group_versions()):
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
