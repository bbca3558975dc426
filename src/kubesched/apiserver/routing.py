"""Resource URLs to what they address: kind, namespace, name, subresource."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubesched.cluster.errors import NotFound
from kubesched.cluster.kinds import KINDS, Kind

NAMESPACE_SUBRESOURCES = ("status", "finalize")
LEGACY_BINDINGS = "bindings"  # POST /api/v1/namespaces/{ns}/bindings


@dataclass(frozen=True)
class Target:
    """What a resource URL addresses. `name` None means the collection."""

    kind: Kind
    namespace: str | None
    name: str | None = None
    subresource: str | None = None
    watch_path: bool = False  # the deprecated /watch/ prefix


class Routes:
    """The served kinds by URL: built-in ones and those of established CustomResourceDefinitions."""

    def __init__(self, kinds: Iterable[Kind]) -> None:
        self.by_path: dict[tuple[str, str, str], Kind] = {}
        self.group_versions: dict[tuple[str, str], list[Kind]] = {}
        for kind in kinds:
            self.by_path[(kind.group, kind.version, kind.plural)] = kind
            self.group_versions.setdefault((kind.group, kind.version), []).append(kind)

    def kind(self, group: str, version: str, plural: str, path: str) -> Kind:
        kind = self.by_path.get((group, version, plural))
        if kind is None:
            raise NotFound("the server could not find the requested resource", name=path)
        return kind

    def parse(self, path: str) -> Target | None:
        return parse(path, self)


BUILT_IN = Routes(KINDS.values())


def parse(path: str, routes: Routes = BUILT_IN) -> Target | None:
    """The target of `path`, or None when it is not a resource URL (discovery and the like).
    An unknown resource is NotFound."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api" and parts[1] == "v1":
        group, version, rest = "", "v1", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if not rest:
        return None
    if (group, version) not in routes.group_versions:
        raise NotFound("the server could not find the requested resource", name=path)
    watch = rest[0] == "watch"
    if watch:
        rest = rest[1:]
    namespace: str | None = None
    core_namespace_subresource = group == "" and len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES
    if rest and rest[0] == "namespaces" and len(rest) >= 3 and not core_namespace_subresource:
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise NotFound("the server could not find the requested resource", name=path)
    if namespace is not None and rest[0] == LEGACY_BINDINGS and len(rest) == 1:
        return Target(kind=routes.kind("", "v1", "pods", path), namespace=namespace, subresource="binding")
    kind = routes.kind(group, version, rest[0], path)
    if namespace is not None and not kind.namespaced:
        raise NotFound("the server could not find the requested resource", name=path)
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if sub is not None and sub not in kind.subresources:
        raise NotFound("the server could not find the requested resource", name=path)
    if name is not None and kind.namespaced and namespace is None:
        raise NotFound("the server could not find the requested resource", name=path)
    return Target(kind=kind, namespace=namespace, name=name, subresource=sub, watch_path=watch)
