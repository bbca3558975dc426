"""The vendored golden corpus, and its compact pods and nodes as the plugins' unit tests read them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
from lightkube.resources import core_v1

from kubesched.cache import NodeInfo, PodInfo

CORPUS = Path(__file__).resolve().parent / "golden" / "corpus"


def golden_pod(compact: dict[str, Any]) -> PodInfo:
    """A compact golden pod as the API server stores it (requests default to limits)."""
    spec = copy.deepcopy(compact.get("spec") or {})
    containers = spec.setdefault("containers", [{"name": "c", "image": "registry.k8s.io/pause:3.10"}])
    first = containers[0].setdefault("resources", {})
    for key in ("requests", "limits"):
        first[key] = {**(first.get(key) or {}), **(compact.get(key) or {})}
    for c in [*spec.get("initContainers", []), *containers]:
        res = c.get("resources") or {}
        res["requests"] = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        c["resources"] = res
    spec["nodeName"] = compact.get("nodeName")
    meta = {"name": compact["name"], "namespace": compact.get("namespace", "default"), "uid": compact["name"]}
    return PodInfo(msgspec.convert({"metadata": meta, "spec": spec}, core_v1.Pod))


def golden_nodes(data: dict[str, Any]) -> dict[str, NodeInfo]:
    nodes: dict[str, NodeInfo] = {}
    for n in data.get("nodes") or []:
        status = {"allocatable": {"pods": "110", **(n.get("allocatable") or {})}}
        nodes[n["name"]] = NodeInfo(msgspec.convert({"metadata": {"name": n["name"]}, "status": status}, core_v1.Node))
    for p in data.get("pods") or []:
        nodes[p["nodeName"]].add_pod(golden_pod(p))
    return nodes
