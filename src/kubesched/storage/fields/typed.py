"""Objects walked by their schema, as server-side apply needs them: the set of fields a value
sets, the fields two values differ in, the merge of an apply configuration into a live object,
and removing fields.

A schema is OpenAPI as the API server publishes it: structs (`properties`), maps
(`additionalProperties`, granular unless `x-kubernetes-map-type: atomic`), lists (atomic unless
`x-kubernetes-list-type` is `set` or `map` with `x-kubernetes-list-map-keys`) and scalars. Schemas
that say nothing (`{}`, `x-kubernetes-preserve-unknown-fields`) are read from the value: objects
as granular maps, lists as atomic. Values are plain JSON data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, overload

import msgspec

from kubesched.storage.fields import paths
from kubesched.storage.fields.paths import Element, Path

Json = dict[str, Any]  # Any: an OpenAPI schema, read key by key as the published documents shape it
_Gone = dict[Element, "_Gone | Literal[True]"]  # the paths to remove, as a trie (True: all below)

SCALAR, STRUCT, MAP, LIST, UNTYPED = "scalar", "struct", "map", "list", "untyped"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()  # a field that is absent (JSON null is a value)

REF_PREFIXES = ("#/definitions/", "#/components/schemas/")
_WHOLES_KEPT = 256


@dataclass(eq=False, slots=True)
class Type:
    """One node of a schema, resolved. Children are resolved on first use (schemas recurse)."""

    form: str
    atomic: bool = False
    list_type: str = "atomic"
    keys: tuple[str, ...] = ()
    _schema: Json = field(default_factory=dict)
    _types: Types | None = None
    _children: dict[str, Type] = field(default_factory=dict)
    _defaults: dict[str, object] | None = None  # a list map's key fields' defaults
    _wholes: dict[bytes, frozenset[Path]] = field(default_factory=dict)  # see `paths_under`
    leaf: bool = field(init=False)  # walked as one value whatever it holds

    def __post_init__(self) -> None:
        self.leaf = self.atomic or self.form == SCALAR

    def child(self, name: str) -> Type:
        """The type of a struct's field or of a map's or list's element (`""`)."""
        found = self._children.get(name)
        if found is None:
            found = self._children[name] = self._resolve_child(name)
        return found

    def _resolve_child(self, name: str) -> Type:
        assert self._types is not None
        s = self._schema
        if self.form == LIST:
            return self._types.of(s.get("items") or {})
        if self.form == STRUCT and name in s.get("properties", {}):
            return self._types.of(s["properties"][name])
        extra = s.get("additionalProperties")
        return self._types.of(extra if isinstance(extra, Mapping) else {})

    def declares(self, name: str) -> bool:
        return self.form == STRUCT and name in self._schema.get("properties", {})

    def element(self, item: object) -> Element:
        """The path element of one item of this list (a key field the item leaves out taken at
        its schema's default)."""
        if self.list_type == "map" and isinstance(item, dict):
            defaults = self._key_defaults()
            if any(k not in item for k in defaults):
                item = {**defaults, **item}
            return paths.key(item, self.keys)
        return paths.value(item)

    def paths_under(self, v: object, at: Path) -> Iterable[Path]:
        """Every path of a value present on one side of a comparison only, at `at`. A value's
        paths do not depend on its scalars' values alone, but the objects one template stamps out
        repeat whole subtrees byte for byte: those are walked once (a bounded table per type)."""
        seen = _bytes_of(v) if isinstance(v, dict) and len(v) >= 2 else None
        if seen is None:
            out: set[Path] = set()
            _whole(self, v, at, out)
            return out
        relative = self._wholes.get(seen)
        if relative is None:
            walked: set[Path] = set()
            _whole(self, v, (), walked)
            relative = frozenset(walked)
            if len(self._wholes) >= _WHOLES_KEPT:
                del self._wholes[next(iter(self._wholes))]
            self._wholes[seen] = relative
        if not at:
            return relative
        found = [at + p for p in relative]
        found.append(at)
        return found

    def _key_defaults(self) -> dict[str, object]:
        if self._defaults is None:
            item = self.child("")
            props = item._schema.get("properties", {}) if item.form == STRUCT else {}
            self._defaults = {k: props[k]["default"] for k in self.keys if "default" in props.get(k, {})}
        return self._defaults


def _bytes_of(v: dict[str, object]) -> bytes | None:
    try:
        return msgspec.json.encode(v)
    except (msgspec.EncodeError, TypeError, OverflowError):
        return None  # a value JSON cannot hold: walked every time


class Types:
    """The types of one schema document (`definitions` resolve `$ref`s)."""

    def __init__(self, definitions: Mapping[str, Json], *, overrides: Mapping[str, Json] | None = None) -> None:
        self._definitions = definitions
        self._overrides = dict(overrides or {})  # root property name -> schema, e.g. a CRD's metadata
        self._cache: dict[int, tuple[Json, Type]] = {}
        self._named: dict[str, Type] = {}

    def named(self, name: str) -> Type:
        found = self._named.get(name)
        if found is None:
            found = self._named[name] = self.of({"$ref": REF_PREFIXES[0] + name})
        return found

    def root(self, schema: Json) -> Type:
        """The type of a document whose top-level fields may be replaced by `overrides`."""
        if self._overrides:
            props = {**schema.get("properties", {}), **self._overrides}
            schema = {**schema, "type": "object", "properties": props}
        return self.of(schema)

    def of(self, schema: Mapping[str, object]) -> Type:
        hit = self._cache.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        resolved = self._resolve(schema)
        made = self._make(resolved, schema)
        self._cache[id(schema)] = (dict(schema) if not isinstance(schema, dict) else schema, made)
        return made

    def _resolve(self, schema: Mapping[str, object]) -> Json:
        seen = 0
        node: Mapping[str, Any] = schema  # Any: read as Json is
        while True:
            ref = node.get("$ref")
            if ref is None and len(node.get("allOf", ())) == 1:
                ref = node["allOf"][0].get("$ref")
            if not isinstance(ref, str) or seen > 32:
                return dict(node)
            name = next((ref[len(p) :] for p in REF_PREFIXES if ref.startswith(p)), ref)
            target = self._definitions.get(name)
            if target is None:
                return {}
            merged = {**target, **{k: v for k, v in node.items() if k not in ("$ref", "allOf")}}
            node, seen = merged, seen + 1

    def _make(self, s: Json, original: Mapping[str, object]) -> Type:
        map_atomic = (s.get("x-kubernetes-map-type") or original.get("x-kubernetes-map-type")) == "atomic"
        kind = s.get("type")
        if kind == "array":
            list_type = s.get("x-kubernetes-list-type", "atomic")
            keys = tuple(s.get("x-kubernetes-list-map-keys") or ())
            return Type(LIST, atomic=list_type == "atomic", list_type=list_type, keys=keys, _schema=s, _types=self)
        if "properties" in s:
            return Type(STRUCT, atomic=map_atomic, _schema=s, _types=self)
        if isinstance(s.get("additionalProperties"), Mapping):
            return Type(MAP, atomic=map_atomic, _schema=s, _types=self)
        if kind in ("string", "integer", "number", "boolean") or "format" in s:
            return Type(SCALAR, _schema=s, _types=self)
        return Type(UNTYPED, atomic=map_atomic, _schema=s, _types=self)


# -- the fields a value sets --------------------------------------------------------------------


def field_set(t: Type, v: object) -> frozenset[Path]:
    """The fields an apply configuration `v` sets: its leaves, each map entry and list item, and
    empty or null struct fields. Atomic lists and maps count as one leaf."""
    out: set[Path] = set()
    _collect(t, v, (), out)
    return frozenset(out)


def _collect(t: Type, v: object, at: Path, out: set[Path]) -> None:
    if not t.leaf:  # a value is walked by its fields (a dict, unless a list is due) or its items
        if isinstance(v, dict) and t.form != LIST:
            for name, child in v.items():
                here = (*at, paths.field(name))
                _collect(t.child(name), child, here, out)
                if not t.declares(name) or child is None or (isinstance(child, dict) and not child):
                    out.add(here)
            return
        if isinstance(v, list) and t.form == LIST:
            element = t.child("")
            for item in v:
                here = (*at, t.element(item))
                _collect(element, item, here, out)
                out.add(here)
            return
    if at:
        out.add(at)


# -- comparing ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Comparison:
    """The fields in which a new value differs from an old one."""

    removed: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    added: set[Path] = field(default_factory=set)

    def changed(self) -> frozenset[Path]:
        return frozenset(self.modified | self.added)

    def same(self) -> bool:
        return not (self.removed or self.modified or self.added)


def compare(t: Type, old: object, new: object) -> Comparison:
    out = Comparison()
    _compare(t, old, new, (), out)
    return out


def _whole(t: Type, v: object, at: Path, out: set[Path]) -> None:
    """Every path of `v` (present on one side only): what a comparison finds added or removed."""
    if not t.leaf:  # a value is walked by its fields (a dict, unless a list is due) or its items
        if isinstance(v, dict) and t.form != LIST:
            for name, child in v.items():
                _whole(t.child(name), child, (*at, paths.field(name)), out)
        elif isinstance(v, list) and t.form == LIST:
            element = t.child("")
            for e, item in {t.element(i): i for i in v}.items():
                _whole(element, item, (*at, e), out)
    if at:
        out.add(at)


def _compare(t: Type, old: object, new: object, at: Path, out: Comparison) -> None:
    if old is MISSING or new is MISSING:
        if new is not MISSING:
            out.added.update(t.paths_under(new, at))
        elif old is not MISSING:
            out.removed.update(t.paths_under(old, at))
        return
    if old == new:
        return  # nothing differs below (the equality is checked in C, the walk is not)
    if not t.leaf:  # two values of one shape (unequal, so not both empty) are walked
        if isinstance(new, dict) and isinstance(old, dict) and t.form != LIST:
            for name in {**old, **new}:
                _compare(t.child(name), old.get(name, MISSING), new.get(name, MISSING), (*at, paths.field(name)), out)
            return
        if isinstance(new, list) and isinstance(old, list) and t.form == LIST:
            element = t.child("")
            left_items = {t.element(i): i for i in old}
            right_items = {t.element(i): i for i in new}
            for e in {**left_items, **right_items}:
                _compare(element, left_items.get(e, MISSING), right_items.get(e, MISSING), (*at, e), out)
            return
    out.modified.add(at)  # a scalar, a change of shape, or null against an empty value


# -- merging ------------------------------------------------------------------------------------


@overload
def merge(t: Type, live: object, config: dict[str, object]) -> dict[str, object]: ...


@overload
def merge(t: Type, live: object, config: object) -> object: ...


def merge(t: Type, live: object, config: object) -> object:
    """`config` merged into `live`: structs and granular maps field by field, list maps and sets
    item by item (live-only items keep their places, shared items follow the configuration's
    order), anything else replaced by the configuration's value."""
    if config is MISSING:
        return live
    if live is MISSING or live is None or config is None or t.leaf:
        return config
    if isinstance(config, dict):
        if t.form == LIST or not isinstance(live, dict):
            return config
        out = dict(live)
        for name, v in config.items():
            out[name] = merge(t.child(name), live.get(name, MISSING), v)
        return out
    if isinstance(config, list) and t.form == LIST and isinstance(live, list):
        return _merge_items(t, live, config)
    return config


def _merge_items(t: Type, live: list[object], config: list[object]) -> list[object]:
    element = t.child("")
    left = [(t.element(i), i) for i in live]
    right = [(t.element(i), i) for i in config]
    left_of = dict(left)
    right_of = dict(right)
    shared = [e for e, _ in right if e in left_of]
    out: list[object] = []
    taken: set[Element] = set()
    li = ri = 0

    def next_shared() -> Element | None:
        while shared and shared[0] in taken:
            shared.pop(0)
        return shared[0] if shared else None

    def take(e: Element) -> None:
        taken.add(e)
        out.append(merge(element, left_of.get(e, MISSING), right_of[e]))

    while li < len(left) or ri < len(right):
        if li < len(left):
            e = left[li][0]
            if ri < len(right) and right[ri][0] == e:  # the same item under both cursors
                take(e)
                li, ri = li + 1, ri + 1
                continue
            if e not in right_of:  # only live has it: it keeps its place
                out.append(left[li][1])
                li += 1
                continue
            wanted = next_shared()
            if e in taken or (ri < len(right) and wanted is not None and wanted != e):
                li += 1  # merged already, or merged later where the configuration puts it
                continue
        if ri < len(right):
            e = right[ri][0]
            if e not in taken:
                take(e)
            ri += 1
    return out


# -- removing -----------------------------------------------------------------------------------


@overload
def remove(t: Type, v: dict[str, object], gone: Iterable[Path]) -> dict[str, object]: ...


@overload
def remove(t: Type, v: object, gone: Iterable[Path]) -> object: ...


def remove(t: Type, v: object, gone: Iterable[Path]) -> object:
    """`v` without the fields at `gone` (each with everything under it)."""
    trie: _Gone = {}
    for p in gone:
        node = trie
        for e in p[:-1]:
            child = node.setdefault(e, {})
            if child is True:
                break
            node = child
        else:
            node[p[-1]] = True
    return _remove(t, v, trie) if trie else v


def _remove(t: Type, v: object, trie: _Gone) -> object:
    if t.leaf:
        return v
    if isinstance(v, dict) and t.form != LIST:
        out = {}
        for name, child in v.items():
            sub = trie.get(paths.field(name))
            if sub is True:
                continue
            out[name] = _remove(t.child(name), child, sub) if sub else child
        return out
    if isinstance(v, list) and t.form == LIST:
        element = t.child("")
        kept = []
        for item in v:
            sub = trie.get(t.element(item))
            if sub is True:
                continue
            kept.append(_remove(element, item, sub) if sub else item)
        return kept
    return v
