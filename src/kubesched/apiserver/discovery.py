"""Discovery documents: /version, /api, /apis and each group-version's resource list."""

from __future__ import annotations

import re

from kubesched.apiserver import reviews
from kubesched.apiserver.jsontypes import JsonObject
from kubesched.apiserver.routing import BUILT_IN, Routes
from kubesched.cluster.kinds import VERBS, Kind

SERVER_VERSION = {
    "major": "1",
    "minor": "36",
    "gitVersion": "v1.36.2-kubesched",
    "gitCommit": "",
    "gitTreeState": "clean",
    "buildDate": "2026-06-12T00:00:00Z",
    "goVersion": "python",
    "compiler": "kubesched",
    "platform": "linux/amd64",
}

_SUBRESOURCE_VERBS = {"status": ["get", "patch", "update"], "binding": ["create"], "eviction": ["create"]}
_SUBRESOURCE_KINDS = {"binding": ("", "", "Binding"), "eviction": ("policy", "v1", "Eviction")}


def api_versions(server_address: str) -> JsonObject:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


_REVIEWS = reviews.discovery_resources()  # create-only resources, served outside the kinds


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes' version order, highest first when sorted: GA, then beta, then alpha, each by
    number (v2 before v1, v1beta2 before v1beta1)."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if match is None:
        return (3, 0, 0)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0))


def _groups(routes: Routes) -> list[JsonObject]:
    """The named groups, each with its versions, preferred first."""
    versions: dict[str, list[str]] = {}
    for group, version in {g for g in [*routes.group_versions, *_REVIEWS] if g[0]}:
        versions.setdefault(group, []).append(version)
    groups: list[JsonObject] = []
    for group in sorted(versions):
        listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in sorted(versions[group], key=version_priority)]
        groups.append({"name": group, "versions": listed, "preferredVersion": listed[0]})
    return groups


def api_groups(routes: Routes = BUILT_IN) -> JsonObject:
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": _groups(routes)}


def api_group(group: str, routes: Routes = BUILT_IN) -> JsonObject | None:
    for g in _groups(routes):
        if g["name"] == group:
            return {"kind": "APIGroup", "apiVersion": "v1", **g}
    return None


def _resource(kind: Kind) -> JsonObject:
    entry: JsonObject = {
        "name": kind.plural,
        "singularName": kind.singular,
        "namespaced": kind.namespaced,
        "kind": kind.kind,
        "verbs": list(VERBS),
    }
    if kind.short_names:
        entry["shortNames"] = list(kind.short_names)
    if kind.categories:
        entry["categories"] = list(kind.categories)
    return entry


def _subresource(kind: Kind, sub: str) -> JsonObject:
    entry: JsonObject = {
        "name": f"{kind.plural}/{sub}",
        "singularName": "",
        "namespaced": kind.namespaced,
        "kind": kind.kind,
        "verbs": _SUBRESOURCE_VERBS.get(sub, ["get"]),
    }
    if sub in _SUBRESOURCE_KINDS:
        group, version, sub_kind = _SUBRESOURCE_KINDS[sub]
        entry["kind"] = sub_kind
        if group:
            entry["group"], entry["version"] = group, version
    return entry


def resource_list(group: str, version: str, routes: Routes = BUILT_IN) -> JsonObject | None:
    kinds = routes.group_versions.get((group, version))
    extra = _REVIEWS.get((group, version), [])
    if kinds is None and not extra:
        return None
    resources: list[JsonObject] = []
    for kind in sorted(kinds or (), key=lambda k: k.plural):
        resources.append(_resource(kind))
        resources += [_subresource(kind, sub) for sub in kind.subresources]
    resources = sorted([*resources, *extra], key=lambda r: str(r["name"])) if extra else resources
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
