"""The OpenAPI definitions of the served kinds: one schema per struct the lightkube models reach,
with what the models lose put back — the value types of maps (the models type every map as a plain
`dict`), how lists merge (patch strategies and merge keys for strategic merge patches, list types
and keys for server-side apply) and descriptions, read from the models' docstrings.

The API server's documents are built from these definitions (`apiserver.openapi`), and server-side
apply walks them to know which lists merge by key and which are replaced whole.
"""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
import re
import sys
import typing
from collections.abc import Iterable
from typing import Any

import msgspec

from kubesched.api.objects import Model
from kubesched.cluster.kinds import KINDS, Kind
from kubesched.storage.definitions import MAP_VALUES, META, definition_name, model_of, short_name

Json = dict[str, Any]  # Any: an OpenAPI document, read key by key as its shape is published

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
    "core.v1.ServiceAccount": {"secrets": _by("name")},
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

# Structs and map fields server-side apply treats as one value (`x-kubernetes-map-type: atomic`):
# a configuration that sets any part of one owns and replaces all of it.
_ATOMIC_STRUCTS = frozenset(
    {
        "core.v1.ConfigMapKeySelector",
        "core.v1.EndpointAddress",
        "core.v1.EndpointPort",
        "core.v1.FileKeySelector",
        "core.v1.LocalObjectReference",
        "core.v1.NodeSelector",
        "core.v1.NodeSelectorTerm",
        "core.v1.ObjectFieldSelector",
        "core.v1.ObjectReference",
        "core.v1.ResourceFieldSelector",
        "core.v1.ScopeSelector",
        "core.v1.SecretKeySelector",
        "core.v1.SecretReference",
        "core.v1.TopologySelectorTerm",
        "core.v1.TypedLocalObjectReference",
        "meta.v1.LabelSelector",
        "meta.v1.OwnerReference",
        "rbac.v1.RoleRef",
        "rbac.v1.Subject",
    }
)
_ATOMIC_MAPS: dict[str, frozenset[str]] = {
    "core.v1.PodSpec": frozenset({"nodeSelector"}),
    "core.v1.ReplicationControllerSpec": frozenset({"selector"}),
    "core.v1.ServiceSpec": frozenset({"selector"}),
}
_GRANULAR_FIELDS: dict[str, frozenset[str]] = {  # fields of an atomic struct type that are not atomic here
    "core.v1.PersistentVolumeSpec": frozenset({"claimRef"}),
}
MAP_TYPE = "x-kubernetes-map-type"

# Defaults of list-map key fields, which server-side apply fills in to match an item that leaves
# the key out with the defaulted item stored (a port without `protocol` is the TCP one).
_KEY_DEFAULTS: dict[str, dict[str, str]] = {
    "core.v1.ContainerPort": {"protocol": "TCP"},
    "core.v1.ServicePort": {"protocol": "TCP"},
}

GVK_EXTENSION = "x-kubernetes-group-version-kind"
REF_V2 = "#/definitions/"
REF_V3 = "#/components/schemas/"


# -- definitions ---------------------------------------------------------------------------------


def ref(name: str) -> Json:
    return {"$ref": REF_V2 + name}


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
        self.pending: list[type[Model]] = []
        self.unknown_maps: list[str] = []
        self.gvks: dict[str, list[Json]] = {}

    def add(self, cls: type[Model], gvks: list[Json] | None = None) -> str:
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

    def _struct(self, model: type[Model]) -> Json:
        name = definition_name(model)
        short = short_name(name)
        description, field_docs = _description(model.__doc__)
        annotations: dict[str, object] = {}
        for base in reversed(model.__mro__):
            annotations.update(getattr(base, "__annotations__", {}))
        module = sys.modules[model.__module__]
        fields: tuple[str, ...] = model.__struct_fields__
        encoded: tuple[str, ...] = model.__struct_encode_fields__
        defaults: tuple[object, ...] = model.__struct_defaults__
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
            if key in _ATOMIC_MAPS.get(short, ()):
                schema[MAP_TYPE] = "atomic"
            elif key in _GRANULAR_FIELDS.get(short, ()):
                schema[MAP_TYPE] = "granular"
            if key in _KEY_DEFAULTS.get(short, {}):
                schema["default"] = _KEY_DEFAULTS[short][key]
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
            out[GVK_EXTENSION] = gvks
        if short in _ATOMIC_STRUCTS:
            out[MAP_TYPE] = "atomic"
        return out

    def _type(self, annotation: str, module: object, where: str) -> Json:
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
            return ref(_ALIASES[leaf])
        if "." in annotation:
            mod_name, _, attr = annotation.rpartition(".")
            target = getattr(importlib.import_module(f"lightkube.models.{mod_name}"), attr)
        else:
            target = getattr(module, annotation)
        if isinstance(target, type) and issubclass(target, msgspec.Struct):
            return ref(self.add(target))
        if target is Any:  # Any: a field lightkube leaves untyped, which takes any value
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


def gvk_entry(group: str, version: str, kind: str) -> Json:
    return {"group": group, "version": version, "kind": kind}


def group_versions() -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for kind in KINDS.values():
        seen[(kind.group, kind.version)] = None
    return list(seen)


def list_model(kind: Kind) -> type[Model]:
    model = model_of(kind.cls)
    return getattr(sys.modules[model.__module__], f"{kind.kind}List")  # type: ignore[no-any-return]


def subresource_model(sub: str) -> tuple[type[Model], Json] | None:
    from lightkube.models import core_v1, policy_v1

    if sub == "binding":
        return core_v1.Binding, gvk_entry("", "v1", "Binding")
    if sub == "eviction":
        return policy_v1.Eviction, gvk_entry("policy", "v1", "Eviction")
    return None


@functools.cache
def _definitions() -> tuple[dict[str, Json], tuple[str, ...]]:
    from lightkube.models import meta_v1

    builder = _Builder()
    for kind in KINDS.values():
        builder.add(kind.cls, [gvk_entry(kind.group, kind.version, kind.kind)])
        builder.add(list_model(kind), [gvk_entry(kind.group, kind.version, f"{kind.kind}List")])
        for sub in kind.subresources:
            found = subresource_model(sub)
            if found:
                builder.add(found[0], [found[1]])
    every_gv = [gvk_entry(group, version, "") for group, version in group_versions()]
    builder.add(meta_v1.Status, [gvk_entry("", "v1", "Status")])
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
