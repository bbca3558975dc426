"""Who owns which fields of an object, and the two writes that change it, as kube-apiserver's
field manager keeps `metadata.managedFields`.

An *Update* (create, update, patch) gives its manager the fields it changed and takes them from
everyone else. An *Apply* (server-side apply) makes the applier own exactly the fields of its
configuration: a field another manager owns and the configuration changes is a conflict (409)
unless forced, which moves the field to the applier; a field the applier set before, left out now
and owned by no one else is removed from the object.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from lightkube.models import meta_v1

from kubesched.cluster.errors import ApplyConflict
from kubesched.storage.fields import paths, typed
from kubesched.storage.fields.paths import EMPTY, FieldSet, Path
from kubesched.storage.fields.typed import MISSING, Type

APPLY, UPDATE = "Apply", "Update"
OPERATIONS = (APPLY, UPDATE)
FIELDS_V1 = "FieldsV1"
BEFORE_FIRST_APPLY = "before-first-apply"  # owns what an object held when it was first applied to
UNKNOWN_MANAGER = "unknown"  # an Update with neither fieldManager nor User-Agent
MAX_MANAGER_LENGTH = 128
KUBECTL = "kubectl"  # the applier that takes over from, and keeps up, kubectl's client-side apply
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# Fields no manager owns: the server sets them (removed from sets one by one, not with their
# descendants: labels and annotations under `metadata` stay owned).
STRIPPED: FieldSet = frozenset(
    {
        paths.make("apiVersion"),
        paths.make("kind"),
        paths.make("metadata"),
        *(
            paths.make("metadata", name)
            for name in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        ),
    }
)


class Manager(NamedTuple):
    """A manager's identity: appliers are one manager whatever API version they apply with."""

    name: str
    operation: str
    api_version: str = ""  # for Update managers only
    subresource: str = ""

    def __str__(self) -> str:
        shown = json.dumps(self.name)
        if self.subresource:
            shown += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == UPDATE:
            shown += f" using {self.api_version}"
        return shown


def updater(name: str, api_version: str, subresource: str = "") -> Manager:
    return Manager(name or UNKNOWN_MANAGER, UPDATE, api_version, subresource)


def applier(name: str, subresource: str = "") -> Manager:
    return Manager(name, APPLY, "", subresource)


@dataclass(frozen=True, slots=True)
class Owned:
    """The fields one manager owns, at the API version it wrote them, and when it last changed them."""

    fields: FieldSet
    api_version: str
    time: datetime | None = None


Managed = dict[Manager, Owned]


def manager_from_user_agent(user_agent: str) -> str:
    """The manager of an Update that names none: the User-Agent up to its first `/`, printable
    characters only, at most 128 of them."""
    name = "".join(c for c in user_agent.split("/", 1)[0] if c.isprintable())
    return name[:MAX_MANAGER_LENGTH]


# -- managedFields ------------------------------------------------------------------------------


class ManagedFieldsError(ValueError):
    """managedFields that cannot be read."""


def is_reset(entries: list[meta_v1.ManagedFieldsEntry] | None) -> bool:
    """Whether a request's managedFields ask for them to be cleared: `[]` or `[{}]`."""
    if entries is None:
        return False
    return not entries or (len(entries) == 1 and entries[0] == meta_v1.ManagedFieldsEntry())


def decode(entries: Iterable[meta_v1.ManagedFieldsEntry] | None) -> Managed:
    managed: Managed = {}
    for i, entry in enumerate(entries or ()):
        if entry.operation not in OPERATIONS:
            raise ManagedFieldsError(f"managedFields[{i}]: operation must be Apply or Update")
        if entry.fieldsType not in (None, FIELDS_V1):
            raise ManagedFieldsError(f"managedFields[{i}]: fieldsType must be FieldsV1")
        try:
            fields = paths.from_fields_v1(entry.fieldsV1 or {})
        except paths.FieldsError as e:
            raise ManagedFieldsError(f"managedFields[{i}]: {e}") from None
        version = entry.apiVersion or ""
        key = Manager(
            entry.manager or "",
            entry.operation,
            version if entry.operation == UPDATE else "",
            entry.subresource or "",
        )
        before = managed.get(key)
        managed[key] = Owned(fields | (before.fields if before else EMPTY), version, entry.time)
    return managed


def encode(managed: Managed) -> list[meta_v1.ManagedFieldsEntry] | None:
    """managedFields in kube-apiserver's order: appliers first, then by time, manager, version."""
    entries = [
        meta_v1.ManagedFieldsEntry(
            manager=key.name,
            operation=key.operation,
            apiVersion=owned.api_version,
            time=owned.time,
            fieldsType=FIELDS_V1,
            fieldsV1=paths.to_fields_v1(owned.fields),
            subresource=key.subresource or None,
        )
        for key, owned in managed.items()
        if owned.fields
    ]
    entries.sort(
        key=lambda e: (
            e.operation,
            int(e.time.timestamp()) if e.time else 0,
            e.manager,
            e.apiVersion,
            e.subresource or "",
        )
    )
    return entries or None


# -- the writes ---------------------------------------------------------------------------------


_SERVER_SET = frozenset(p[1].text for p in STRIPPED if len(p) == 2)  # metadata's stripped fields


def _comparable(v: object, top: frozenset[str]) -> object:
    """`v` without the top-level fields `top` and the metadata no manager owns (neither is walked)."""
    if not isinstance(v, Mapping):
        return v
    out = {k: x for k, x in v.items() if k not in top}
    meta = out.get("metadata")
    if isinstance(meta, Mapping):
        out["metadata"] = {k: x for k, x in meta.items() if k not in _SERVER_SET}
    return out


def _diff(root: Type, old: object, new: object, ignored: FieldSet) -> typed.Comparison:
    top = frozenset(p[0].text for p in ignored if len(p) == 1 and p[0].kind == paths.FIELD)
    ignored = frozenset(p for p in ignored if len(p) != 1 or p[0].kind != paths.FIELD)
    before = MISSING if isinstance(old, Mapping) and not old else _comparable(old, top)  # a create
    diff = typed.compare(root, before, _comparable(new, top))
    if ignored:
        for part in (diff.removed, diff.modified, diff.added):
            kept = paths.recursive_difference(frozenset(part), ignored)
            part.intersection_update(kept)
    return diff


def update(
    root: Type,
    live: Mapping[str, object],
    new: Mapping[str, object],
    managed: Managed,
    manager: Manager,
    *,
    ignored: FieldSet = EMPTY,
    now: datetime,
) -> Managed:
    """Ownership after an Update from `live` to `new` (both without managedFields): the manager
    gains the fields it changed, everyone loses those and the fields it removed."""
    diff = _diff(root, live, new, ignored)
    if diff.same():
        return dict(managed)
    changed = diff.changed()
    out: Managed = {}
    for key, owned in managed.items():
        rest = owned.fields - changed - diff.removed
        if rest:
            out[key] = Owned(rest, owned.api_version, owned.time)
    mine = changed - STRIPPED  # the comparison left the ignored fields out already
    if mine:
        before = out.get(manager)
        out[manager] = Owned(mine | (before.fields if before else EMPTY), manager.api_version, now)
    return out


@dataclass(frozen=True, slots=True)
class Applied:
    """An Apply's outcome: the object (plain data) and its new ownership."""

    obj: dict[str, object]
    managed: Managed
    changed: bool


def apply(
    root: Type,
    live: Mapping[str, object] | None,
    config: Mapping[str, object],
    managed: Managed,
    manager: Manager,
    *,
    api_version: str,
    force: bool,
    ignored: FieldSet = EMPTY,
    now: datetime,
) -> Applied:
    """Apply `config` to `live` (None: the object does not exist yet) for `manager`. Raises
    ApplyConflict when the configuration changes fields other managers own and `force` is off."""
    base: dict[str, object] = dict(live) if live is not None else {}
    if not managed and live is not None:  # owned until now by no one: by "before-first-apply"
        first = updater(BEFORE_FIRST_APPLY, api_version, manager.subresource)
        managed = update(root, {}, base, {}, first, ignored=ignored, now=now)
    merged = typed.merge(root, base, dict(config))
    config_fields = paths.recursive_difference(typed.field_set(root, config), ignored)
    mine = config_fields - STRIPPED
    before = managed.get(manager)
    others = {k: v for k, v in managed.items() if k != manager}
    if before is not None:  # the configuration's own metadata (its name) counts as owned here
        owned_now = [config_fields, *(o.fields for o in others.values())]
        merged = _prune(root, merged, before.fields, owned_now)
    diff = _diff(root, base, merged, ignored)
    changed = diff.changed()
    conflicts = {k: o.fields & changed for k, o in others.items() if o.fields & changed}
    if conflicts and not force:
        allowed = _last_applied_fields(root, base) if manager.name == KUBECTL else EMPTY
        left = {k: c - allowed for k, c in conflicts.items() if c - allowed}
        if left:
            raise conflict_error(left)
    if manager.name == KUBECTL:
        merged = _with_last_applied(merged, config)
    out: Managed = {}
    for key, owned in others.items():
        rest = owned.fields - conflicts.get(key, EMPTY) - diff.removed
        if rest:
            out[key] = Owned(rest, owned.api_version, owned.time)
    object_changed = merged != base
    if mine:
        time = now if object_changed or before is None else before.time
        out[manager] = Owned(mine, api_version, time)
    return Applied(merged, out, object_changed)


def _last_applied_fields(root: Type, live: Mapping[str, object]) -> FieldSet:
    """The fields of the live object's client-side apply annotation: kubectl's server-side apply
    may take them over from the client-side manager without a conflict."""
    meta = live.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    text = annotations.get(LAST_APPLIED) if isinstance(annotations, Mapping) else None
    try:
        last = json.loads(text) if isinstance(text, str) and text else None
    except ValueError:
        return EMPTY
    return typed.field_set(root, last) if isinstance(last, dict) else EMPTY


def _with_last_applied(merged: dict[str, object], config: Mapping[str, object]) -> dict[str, object]:
    """`merged` with its client-side apply annotation, if it has one, set to what was applied."""
    meta = merged.get("metadata")
    if not isinstance(meta, Mapping):
        return merged
    annotations = meta.get("annotations")
    if not isinstance(annotations, Mapping) or LAST_APPLIED not in annotations:
        return merged
    applied = json.loads(json.dumps(config))
    applied_annotations = (applied.get("metadata") or {}).get("annotations")
    if isinstance(applied_annotations, dict):
        applied_annotations.pop(LAST_APPLIED, None)
        if not applied_annotations:
            del applied["metadata"]["annotations"]
    value = json.dumps(applied, separators=(",", ":"), sort_keys=True)
    metadata = {**meta, "annotations": {**annotations, LAST_APPLIED: value}}
    return {**merged, "metadata": metadata}


def _prune(root: Type, merged: dict[str, object], last: FieldSet, owned_now: list[FieldSet]) -> dict[str, object]:
    """`merged` without what the applier owned before and no one owns now (a field, or a struct
    left with nothing anyone owns)."""
    owned: set[Path] = set()
    for fields in owned_now:
        owned |= paths.with_prefixes(fields)
    candidates = {p for p in paths.with_prefixes(last) if p in last or p[-1].kind == paths.FIELD} - STRIPPED
    gone = paths.outermost(candidates - owned)
    if not gone:
        return merged
    return typed.remove(root, merged, gone)


def conflict_error(conflicts: Mapping[Manager, FieldSet]) -> ApplyConflict:
    """The 409 an Apply gets, worded as kube-apiserver words it."""
    found = [(key, path) for key in sorted(conflicts) for path in paths.ordered(conflicts[key])]
    causes = [
        {"type": "FieldManagerConflict", "message": f"conflict with {key}", "field": paths.path_string(path)}
        for key, path in found
    ]
    if len(found) == 1:
        key, path = found[0]
        return ApplyConflict(f"Apply failed with 1 conflict: conflict with {key}: {paths.path_string(path)}", causes)
    lines = []
    for key in sorted(conflicts):
        lines.append(f"conflicts with {key}:")
        lines.extend(f"- {paths.path_string(p)}" for p in paths.ordered(conflicts[key]))
    return ApplyConflict(f"Apply failed with {len(found)} conflicts: " + "\n".join(lines), causes)


__all__ = [
    "APPLY",
    "MISSING",
    "UPDATE",
    "Applied",
    "Managed",
    "ManagedFieldsError",
    "Manager",
    "Owned",
    "applier",
    "apply",
    "decode",
    "encode",
    "is_reset",
    "manager_from_user_agent",
    "update",
    "updater",
]
