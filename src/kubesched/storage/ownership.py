"""The store's field manager: `metadata.managedFields` kept on the writes that name a manager,
and server-side apply, over `storage.fields` and each kind's schema."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import msgspec
from lightkube.models import meta_v1

from kubesched.api.objects import Served, meta_of
from kubesched.cluster.kinds import Kind
from kubesched.storage import schemas
from kubesched.storage.definitions import META, definition_name
from kubesched.storage.fields import managers, paths, typed
from kubesched.storage.fields.managers import Applied, Managed, Manager
from kubesched.storage.fields.paths import EMPTY, FieldSet
from kubesched.storage.plain import from_plain

_STATUS: FieldSet = frozenset({paths.make("status")})
_SPEC: FieldSet = frozenset({paths.make("spec")})


@functools.cache
def _builtin_types() -> typed.Types:
    return typed.Types(schemas.definitions())


@functools.cache
def _custom_types() -> typed.Types:
    """Custom resources: their own schema, with the metadata every object has."""
    return typed.Types(
        schemas.definitions(),
        overrides={
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": schemas.ref(f"{META}.ObjectMeta"),
        },
    )


def plain(obj: object) -> dict[str, object]:
    """An object as JSON data, without its managedFields."""
    data: dict[str, object] = msgspec.to_builtins(obj)
    meta = data.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        data["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return data


class Ownership:
    """Field ownership for one store. `custom_schemas` is the store's own table of custom kinds'
    openAPIV3Schemas (read at each use, so a kind served later is known)."""

    def __init__(self, custom_schemas: Mapping[type[Served], dict[str, object]]) -> None:
        self._custom_schemas = custom_schemas
        self._roots: dict[int, tuple[dict[str, object], typed.Type]] = {}
        self._names: dict[type[Served], str] = {}  # built-in kinds' definition names

    def root(self, kind: Kind) -> typed.Type:
        custom = self._custom_schemas.get(kind.cls)
        if custom is None:
            name = self._names.get(kind.cls)
            if name is None:
                name = self._names[kind.cls] = definition_name(kind.cls)
            return _builtin_types().named(name)
        hit = self._roots.get(id(custom))
        if hit is None or hit[0] is not custom:
            hit = self._roots[id(custom)] = (custom, _custom_types().root(custom))
        return hit[1]

    @staticmethod
    def ignored(kind: Kind, subresource: str | None) -> FieldSet:
        """The fields a write through this endpoint does not own: the status through the main
        resource of a kind with a status subresource, the spec through the status subresource."""
        if subresource == "status":
            return _SPEC
        return _STATUS if kind.has_status else EMPTY

    def track(
        self,
        kind: Kind,
        before: Any | None,  # Any: a stored object, its metadata set
        after: Any,  # Any: the store's own copy of one, its metadata set
        *,
        manager: str,
        subresource: str | None,
        now: datetime,
    ) -> None:
        """Set `after`'s managedFields for an Update by `manager` from `before` (None: a create).
        The request's own managedFields are taken when it sets them (`[]` clears them), except
        through a subresource; otherwise the live object's are kept."""
        requested = after.metadata.managedFields
        live_entries = before.metadata.managedFields if before is not None else None
        if subresource:
            base = _decoded(live_entries)
        elif managers.is_reset(requested):
            base = {}
        else:
            base = _decoded(requested) or _decoded(live_entries)
        who = managers.updater(manager, kind.api_version, subresource or "")
        managed = managers.update(
            self.root(kind),
            plain(before) if before is not None else {},
            plain(after),
            base,
            who,
            ignored=self.ignored(kind, subresource),
            now=now,
        )
        after.metadata.managedFields = managers.encode(managed)

    def apply(
        self,
        kind: Kind,
        live: Served | None,
        config: Mapping[str, object],
        *,
        manager: str,
        force: bool,
        subresource: str | None,
        now: datetime,
    ) -> Applied:
        managed: Managed = _decoded(meta_of(live).managedFields) if live is not None else {}
        return managers.apply(
            self.root(kind),
            plain(live) if live is not None else None,
            config,
            managed,
            managers.applier(manager, subresource or ""),
            api_version=kind.api_version,
            force=force,
            ignored=self.ignored(kind, subresource),
            now=now,
        )

    def applied(
        self,
        kind: Kind,
        live: Served | None,
        config: dict[str, Any],  # Any: as check_apply_config passed it, its metadata a map
        *,
        name: str,
        namespace: str,
        manager: str,
        force: bool,
        sub: str | None,
        now: datetime,
    ) -> Served:
        """The object an apply configuration (checked, plain data) makes of `live` (None: of
        nothing yet), named `name` (in `namespace`, for a namespaced kind), with the managedFields
        the apply leaves."""
        meta = config.setdefault("metadata", {})
        meta["name"] = name
        if kind.namespaced:
            meta["namespace"] = namespace
        result = self.apply(kind, live, config, manager=manager, force=force, subresource=sub, now=now)
        new = from_plain(kind.cls, result.obj, "the apply configuration could not be applied")
        meta_of(new).managedFields = managers.encode(result.managed) or []  # [] clears them
        return new

    def written(
        self,
        kind: Kind,
        current: Any | None,  # Any: as `track`'s `before`
        new: Any,  # Any: as `track`'s `after`
        *,
        manager: str | None,
        subresource: str | None,
        now: datetime,
    ) -> None:
        """Set a write's managedFields: recorded for `manager`; else kept from the live object
        when the write leaves them out, and cleared when it sets `[]`."""
        if manager is not None:
            self.track(kind, current, new, manager=manager, subresource=subresource, now=now)
            return
        meta = new.metadata
        if meta.managedFields is None and current is not None:
            meta.managedFields = current.metadata.managedFields
        elif managers.is_reset(meta.managedFields):
            meta.managedFields = None


def _decoded(entries: Iterable[meta_v1.ManagedFieldsEntry] | None) -> Managed:
    """Entries read, or none when they cannot be (as kube-apiserver starts over from nothing)."""
    try:
        return managers.decode(entries)
    except managers.ManagedFieldsError:
        return {}


__all__ = ["Manager", "Ownership", "plain"]
