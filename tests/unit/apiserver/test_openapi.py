"""The OpenAPI documents: upstream's names and extensions, kubectl's fieldValidation check, the protobuf."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from kubesched.apiserver import openapi
from kubesched.cluster.kinds import KINDS, Kind
from kubesched.storage import schemas
from kubesched.storage.definitions import definition_name

CORE = "io.k8s.api.core.v1"
META = "io.k8s.apimachinery.pkg.apis.meta.v1"


def _prefix(kind: Kind) -> str:
    return f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"


def _item_path(kind: Kind) -> str:
    scope = "/namespaces/{namespace}" if kind.namespaced else ""
    return f"{_prefix(kind)}{scope}/{kind.plural}/{{name}}"


def _gvk(kind: Kind) -> dict[str, str]:
    return {"group": kind.group, "version": kind.version, "kind": kind.kind}


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        for value in node.values():
            found |= _refs(value)
        return found
    if isinstance(node, list):
        return set().union(*(_refs(item) for item in node)) if node else set()
    return set()


# -- definitions ---------------------------------------------------------------------------------


def test_pod_definition_matches_upstream() -> None:
    pod = schemas.definitions()[f"{CORE}.Pod"]
    assert pod["type"] == "object"
    assert set(pod["properties"]) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert pod["properties"]["apiVersion"]["type"] == "string"
    assert pod["properties"]["metadata"]["$ref"] == f"#/definitions/{META}.ObjectMeta"
    assert pod["properties"]["spec"]["$ref"] == f"#/definitions/{CORE}.PodSpec"
    assert pod["properties"]["status"]["$ref"] == f"#/definitions/{CORE}.PodStatus"
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "version": "v1", "kind": "Pod"}]
    assert "required" not in pod
    assert pod["description"].startswith("Pod is a collection of containers")


def test_required_fields_are_those_without_a_default() -> None:
    container = schemas.definitions()[f"{CORE}.Container"]
    assert container["required"] == ["name"]
    assert schemas.definitions()[f"{CORE}.ContainerPort"]["required"] == ["containerPort"]
    assert schemas.definitions()[f"{CORE}.PodList"]["required"] == ["items"]


@pytest.mark.parametrize(
    ("definition", "field", "strategy", "merge_key"),
    [
        ("PodSpec", "containers", "merge", "name"),
        ("PodSpec", "initContainers", "merge", "name"),
        ("PodSpec", "ephemeralContainers", "merge", "name"),
        ("PodSpec", "volumes", "merge,retainKeys", "name"),
        ("PodSpec", "imagePullSecrets", "merge", "name"),
        ("PodSpec", "hostAliases", "merge", "ip"),
        ("Container", "ports", "merge", "containerPort"),
        ("Container", "env", "merge", "name"),
        ("Container", "volumeMounts", "merge", "mountPath"),
        ("PodStatus", "conditions", "merge", "type"),
        ("NodeStatus", "conditions", "merge", "type"),
        ("NodeStatus", "addresses", "merge", "type"),
    ],
)
def test_lists_carry_upstream_patch_strategies(definition: str, field: str, strategy: str, merge_key: str) -> None:
    schema = schemas.definitions()[f"{CORE}.{definition}"]["properties"][field]
    assert schema["type"] == "array"
    assert schema["x-kubernetes-patch-strategy"] == strategy
    assert schema["x-kubernetes-patch-merge-key"] == merge_key
    assert schema["x-kubernetes-list-type"] == "map"
    assert schema["x-kubernetes-list-map-keys"][0] == merge_key


def test_meta_and_unkeyed_patch_strategies() -> None:
    meta = schemas.definitions()[f"{META}.ObjectMeta"]["properties"]
    assert meta["ownerReferences"]["x-kubernetes-patch-merge-key"] == "uid"
    assert meta["finalizers"]["x-kubernetes-patch-strategy"] == "merge"
    assert "x-kubernetes-patch-merge-key" not in meta["finalizers"]
    assert meta["labels"] == {
        "description": meta["labels"]["description"],
        "type": "object",
        "additionalProperties": {"type": "string"},
    }
    taints = schemas.definitions()[f"{CORE}.NodeSpec"]["properties"]["taints"]
    assert "x-kubernetes-patch-strategy" not in taints  # upstream replaces the taint list whole
    strategy = schemas.definitions()["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"]
    assert strategy["x-kubernetes-patch-strategy"] == "retainKeys"


def test_scalar_types_follow_upstream() -> None:
    defs = schemas.definitions()
    assert defs[schemas.QUANTITY]["type"] == "string"
    assert "format" not in defs[schemas.QUANTITY]
    assert (defs[schemas.INT_OR_STRING]["type"], defs[schemas.INT_OR_STRING]["format"]) == ("string", "int-or-string")
    assert (defs[schemas.TIME]["type"], defs[schemas.TIME]["format"]) == ("string", "date-time")
    limits = defs[f"{CORE}.ResourceRequirements"]["properties"]["limits"]
    assert limits["additionalProperties"] == {"$ref": f"#/definitions/{schemas.QUANTITY}"}
    target = defs[f"{CORE}.ServicePort"]["properties"]["targetPort"]
    assert target["$ref"] == f"#/definitions/{schemas.INT_OR_STRING}"
    renew = defs["io.k8s.api.coordination.v1.LeaseSpec"]["properties"]["renewTime"]
    assert renew["$ref"] == f"#/definitions/{schemas.MICRO_TIME}"
    created = defs[f"{META}.ObjectMeta"]["properties"]["creationTimestamp"]
    assert created["$ref"] == f"#/definitions/{schemas.TIME}"


def test_every_map_field_has_a_known_value_type() -> None:
    assert schemas.unknown_maps() == ()


def test_every_served_kind_and_its_list_has_a_definition_with_its_gvk() -> None:
    defs = schemas.definitions()
    shared = {"io.k8s.api.policy.v1.PodDisruptionBudget"}  # policy/v1beta1's too: the same fields
    for kind in KINDS.values():
        name = definition_name(kind.cls)
        gvks = defs[name]["x-kubernetes-group-version-kind"]
        list_gvks = defs[f"{name}List"]["x-kubernetes-group-version-kind"]
        assert gvks == [_gvk(kind)] if name not in shared else _gvk(kind) in gvks, name
        list_gvk = {**_gvk(kind), "kind": f"{kind.kind}List"}
        assert list_gvks == [list_gvk] if name not in shared else list_gvk in list_gvks, name
    pdb = defs["io.k8s.api.policy.v1.PodDisruptionBudget"]
    assert [g["version"] for g in pdb["x-kubernetes-group-version-kind"]] == ["v1", "v1beta1"]


def test_every_reference_resolves() -> None:
    document = openapi.swagger_v2()
    for ref in _refs(document):
        assert ref.startswith("#/definitions/")
        assert ref.removeprefix("#/definitions/") in document["definitions"], ref


# -- paths ---------------------------------------------------------------------------------------


def test_every_served_kind_has_a_patch_operation_with_field_validation() -> None:
    paths = openapi.swagger_v2()["paths"]
    for kind in KINDS.values():
        item = paths[_item_path(kind)]
        patch = item["patch"]
        assert patch["x-kubernetes-group-version-kind"] == _gvk(kind)
        assert patch["x-kubernetes-action"] == "patch"
        assert "application/strategic-merge-patch+json" in patch["consumes"]
        field_validation = [p for p in patch["parameters"] if p["name"] == "fieldValidation"]
        assert field_validation == [
            {
                "name": "fieldValidation",
                "in": "query",
                "description": field_validation[0]["description"],
                "type": "string",
                "uniqueItems": True,
            }
        ]
        assert {p["name"] for p in item["parameters"]} >= {"name", "pretty"}
        assert item["get"]["x-kubernetes-action"] == "get"


def test_pod_paths_cover_collection_subresources_and_all_namespaces() -> None:
    paths = openapi.swagger_v2()["paths"]
    collection = paths["/api/v1/namespaces/{namespace}/pods"]
    assert collection["get"]["operationId"] == "listCoreV1NamespacedPod"
    assert collection["post"]["x-kubernetes-action"] == "post"
    assert collection["delete"]["x-kubernetes-action"] == "deletecollection"
    assert paths["/api/v1/pods"]["get"]["operationId"] == "listCoreV1PodForAllNamespaces"
    status_patch = paths["/api/v1/namespaces/{namespace}/pods/{name}/status"]["patch"]
    assert "fieldValidation" in {p["name"] for p in status_patch["parameters"]}
    binding = paths["/api/v1/namespaces/{namespace}/pods/{name}/binding"]["post"]
    assert binding["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "Binding"}
    eviction = paths["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"]
    assert eviction["x-kubernetes-group-version-kind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    assert "/api/v1/nodes/{name}" in paths
    assert "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status" in paths


def test_documents_are_built_once() -> None:
    assert openapi.swagger_v2() is openapi.swagger_v2()
    assert openapi.swagger_v2_protobuf() is openapi.swagger_v2_protobuf()
    assert json.loads(openapi.swagger_v2_json()) == openapi.swagger_v2()
    assert openapi.swagger_v2()["swagger"] == "2.0"
    assert openapi.swagger_v2()["info"] == {"title": "Kubernetes", "version": "v1.36.2"}


# -- protobuf ------------------------------------------------------------------------------------

Field = tuple[int, int, Any]


def _varint(buf: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(buf: bytes) -> list[Field]:
    """(field number, wire type, value) of each field of a message: ints for varints, bytes otherwise."""
    out: list[Field] = []
    at = 0
    while at < len(buf):
        key, at = _varint(buf, at)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, at = _varint(buf, at)
        elif wire == 1:
            value, at = buf[at : at + 8], at + 8
        elif wire == 2:
            length, at = _varint(buf, at)
            value, at = buf[at : at + length], at + length
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.append((number, wire, value))
    assert at == len(buf)
    return out


def _one(buf: bytes, number: int) -> Any:
    values = [v for n, _, v in _fields(buf) if n == number]
    assert len(values) == 1, (number, len(values))
    return values[0]


def _all(buf: bytes, number: int) -> list[Any]:
    return [v for n, _, v in _fields(buf) if n == number]


def _named(buf: bytes, number: int) -> dict[str, bytes]:
    """A repeated Named* field as name -> value message."""
    return {_one(entry, 1).decode(): _one(entry, 2) for entry in _all(buf, number)}


def _extensions(buf: bytes, number: int) -> dict[str, Any]:
    """Vendor extensions: NamedAny whose Any holds the value as YAML (here JSON, which is YAML)."""
    return {name: json.loads(_one(any_, 2)) for name, any_ in _named(buf, number).items()}


def test_protobuf_document_fields_in_order() -> None:
    document = openapi.swagger_v2_protobuf()
    top = _fields(document)
    assert [number for number, _, _ in top] == [1, 2, 8, 9]
    assert all(wire == 2 for _, wire, _ in top)
    assert document.startswith(b"\x0a\x032.0\x12")
    assert _one(document, 1) == b"2.0"
    info = _one(document, 2)
    assert (_one(info, 1), _one(info, 2)) == (b"Kubernetes", b"v1.36.2")


def test_protobuf_round_trips_definitions_and_paths() -> None:
    document = openapi.swagger_v2_protobuf()
    swagger = openapi.swagger_v2()
    definitions = _named(_one(document, 9), 1)
    assert list(definitions) == list(swagger["definitions"])
    paths = _named(_one(document, 8), 2)
    assert list(paths) == list(swagger["paths"])

    pod = definitions[f"{CORE}.Pod"]
    assert _all(_one(pod, 22), 1) == [b"object"]  # type
    assert _extensions(pod, 31) == {"x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Pod"}]}
    properties = _named(_one(pod, 25), 1)
    assert sorted(properties) == ["apiVersion", "kind", "metadata", "spec", "status"]
    assert _one(properties["spec"], 1) == f"#/definitions/{CORE}.PodSpec".encode()

    containers = _named(_one(definitions[f"{CORE}.PodSpec"], 25), 1)["containers"]
    extensions = _extensions(containers, 31)
    assert extensions["x-kubernetes-patch-strategy"] == "merge"
    assert extensions["x-kubernetes-patch-merge-key"] == "name"
    items = _one(_one(containers, 23), 1)
    assert _one(items, 1) == f"#/definitions/{CORE}.Container".encode()


def test_protobuf_patch_operation_declares_field_validation() -> None:
    paths = _named(_one(openapi.swagger_v2_protobuf(), 8), 2)
    patch = _one(paths["/api/v1/namespaces/{namespace}/pods/{name}"], 8)
    assert _extensions(patch, 13)["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert b"application/strategic-merge-patch+json" in _all(patch, 7)
    query_names = []
    for item in _all(patch, 8):  # ParametersItem -> Parameter -> NonBodyParameter -> QueryParameterSubSchema
        parameter = _one(item, 1)
        non_body = _all(parameter, 2)
        if non_body:
            query = _one(non_body[0], 3)
            query_names.append(_one(query, 4).decode())
            if _one(query, 4) == b"fieldValidation":
                assert (_one(query, 2), _one(query, 6), _one(query, 20)) == (b"query", b"string", 1)
    assert "fieldValidation" in query_names


# -- OpenAPI v3 ----------------------------------------------------------------------------------


def test_v3_discovery_lists_every_group_version_with_a_stable_hash() -> None:
    paths = openapi.openapi_v3_paths()["paths"]
    for gv in (
        "api/v1",
        "apis/apps/v1",
        "apis/policy/v1",
        "apis/scheduling.k8s.io/v1",
        "apis/coordination.k8s.io/v1",
        "apis/events.k8s.io/v1",
        "apis/resource.k8s.io/v1",
        "apis/storage.k8s.io/v1",
    ):
        body = openapi.openapi_v3_group_version_json(gv)
        assert body is not None
        digest = hashlib.sha512(body).hexdigest().upper()
        assert paths[gv] == {"serverRelativeURL": f"/openapi/v3/{gv}?hash={digest}"}
        assert json.loads(body) == openapi.openapi_v3_group_version(gv)


@pytest.mark.parametrize("gv", sorted(openapi.openapi_v3_paths()["paths"]))
def test_v3_group_version_document_is_self_contained(gv: str) -> None:
    document = openapi.openapi_v3_group_version(gv)
    assert document is not None
    assert document["openapi"] == "3.0.0"
    schemas = document["components"]["schemas"]
    for ref in _refs(document):
        assert ref.startswith("#/components/schemas/"), ref
        assert ref.removeprefix("#/components/schemas/") in schemas, ref
    assert all(path.startswith(f"/{gv}/") for path in document["paths"])


def test_v3_patch_operations_declare_field_validation_and_strategic_merge() -> None:
    for kind in KINDS.values():
        gv = f"apis/{kind.group}/{kind.version}" if kind.group else f"api/{kind.version}"
        document = openapi.openapi_v3_group_version(gv)
        assert document is not None
        patch = document["paths"][_item_path(kind)]["patch"]
        assert patch["x-kubernetes-group-version-kind"] == _gvk(kind)
        names = {p["name"] for p in patch["parameters"]}
        assert "fieldValidation" in names
        assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
        name = definition_name(kind.cls)
        assert _gvk(kind) in document["components"]["schemas"][name]["x-kubernetes-group-version-kind"]


def test_v3_references_with_siblings_are_wrapped_in_all_of() -> None:
    document = openapi.openapi_v3_group_version("/api/v1/")
    assert document is not None
    spec = document["components"]["schemas"][f"{CORE}.Pod"]["properties"]["spec"]
    assert spec["allOf"] == [{"$ref": f"#/components/schemas/{CORE}.PodSpec"}]
    assert "description" in spec


def test_v3_unknown_group_version_is_none() -> None:
    assert openapi.openapi_v3_group_version("apis/autoscaling/v1") is None
    assert openapi.openapi_v3_group_version_json("apis/autoscaling/v1") is None
