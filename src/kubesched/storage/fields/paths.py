"""Field paths and sets of them, as server-side apply records ownership.

A path is a tuple of elements; an element names a struct field or map key (`f:`), a list item by
its key fields (`k:`), a set item by its value (`v:`) or a list item by position (`i:`). A field set
is a plain `frozenset` of paths. Its wire form, `FieldsV1`, is a trie of those element strings in
which `"."` marks a path that is itself in the set and also has descendants in it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import NamedTuple

FIELD, KEY, VALUE, INDEX = 0, 1, 2, 3  # the element kinds, in the order paths sort by


class Element(NamedTuple):
    """One step of a path. `text` is the element's FieldsV1 spelling without its prefix: the field
    name, the key fields as a JSON object (fields sorted by name), the value as JSON, or the index."""

    kind: int
    text: str

    def __str__(self) -> str:
        if self.kind == FIELD:
            return "." + self.text
        if self.kind == KEY:
            fields = json.loads(self.text)
            return "[" + ",".join(f"{k}={_shown(v)}" for k, v in fields.items()) + "]"
        if self.kind == VALUE:
            return f"[={_shown(json.loads(self.text))}]"
        return f"[{self.text}]"


Path = tuple[Element, ...]
FieldSet = frozenset[Path]
EMPTY: FieldSet = frozenset()
FieldsV1 = dict[str, "FieldsV1"]  # the wire form: element spellings (and MEMBER) down to empty objects
Json = None | bool | int | float | str | list["Json"] | dict[str, "Json"]  # a value as JSON decodes it
_Trie = dict[Element, "_Trie"]
_Order = tuple[int, int | str | tuple[object, ...]]  # an element's place among its siblings

MEMBER = "."  # the FieldsV1 key of a path that is in the set and has descendants in it
_PREFIXES = {"f": FIELD, "k": KEY, "v": VALUE, "i": INDEX}
_SPELLING = {FIELD: "f:", KEY: "k:", VALUE: "v:", INDEX: "i:"}


def canonical(value: object) -> str:
    """A value as the compact JSON that key and value elements carry."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


@functools.lru_cache(maxsize=16384)
def field(name: str) -> Element:
    return Element(FIELD, name)


def key(item: Mapping[str, object], names: Iterable[str]) -> Element:
    """The element of a list-map item: the item's values of the list's key fields."""
    return Element(KEY, canonical({n: item[n] for n in sorted(names) if n in item}))


def value(item: object) -> Element:
    return Element(VALUE, canonical(item))


def index(n: int) -> Element:
    return Element(INDEX, str(n))


def make(*steps: str) -> Path:
    """A path of field names (`make("spec", "replicas")`)."""
    return tuple(field(s) for s in steps)


def path_string(path: Path) -> str:
    """A path as conflicts print it: `.spec.containers[name="app"].image`."""
    return "".join(str(e) for e in path)


def _shown(v: object) -> str:
    return json.dumps(v, ensure_ascii=False) if isinstance(v, str) else canonical(v)


@functools.lru_cache(maxsize=65536)
def _element_order(e: Element) -> _Order:
    if e.kind == INDEX:
        return (e.kind, int(e.text))
    if e.kind == FIELD:
        return (e.kind, e.text)
    return (e.kind, _json_order(json.loads(e.text)))


def _json_order(v: Json) -> tuple[object, ...]:
    """Values ordered null < booleans < numbers < strings < lists < maps."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, v)
    if isinstance(v, int | float):
        return (2, v)
    if isinstance(v, str):
        return (3, v)
    if isinstance(v, list):
        return (4, tuple(_json_order(x) for x in v))
    return (5, tuple((k, _json_order(x)) for k, x in sorted(v.items())))


def sort_key(path: Path) -> tuple[tuple[int, _Order], ...]:
    """Paths in the order a set lists them: at each level, the paths ending there before the ones
    that go deeper, and each group by element."""
    last = len(path) - 1
    return tuple((0 if i == last else 1, _element_order(e)) for i, e in enumerate(path))


def ordered(paths: Iterable[Path]) -> list[Path]:
    return sorted(paths, key=sort_key)


def prefixes(path: Path) -> Iterable[Path]:
    """The proper prefixes of a path, shortest first (the empty root excluded)."""
    return (path[:n] for n in range(1, len(path)))


def with_prefixes(paths: Iterable[Path]) -> set[Path]:
    out: set[Path] = set()
    for p in paths:
        out.add(p)
        out.update(prefixes(p))
    return out


def recursive_difference(paths: FieldSet, removed: Iterable[Path]) -> FieldSet:
    """`paths` without every path in `removed` and everything under them."""
    gone = frozenset(removed)
    if not gone:
        return paths
    lengths = sorted({len(g) for g in gone})
    return frozenset(p for p in paths if not any(p[:n] in gone for n in lengths if n <= len(p)))


def outermost(paths: Iterable[Path]) -> list[Path]:
    """The paths of a set that have no proper prefix in it."""
    every = frozenset(paths)
    return [p for p in every if not any(q in every for q in prefixes(p))]


# -- FieldsV1 ------------------------------------------------------------------------------------


def to_fields_v1(paths: Iterable[Path]) -> FieldsV1:
    """A field set in its wire form (shared between equal sets: never changed in place)."""
    return _wire(paths if isinstance(paths, frozenset) else frozenset(paths))


@functools.lru_cache(maxsize=1024)
def _wire(paths: FieldSet) -> FieldsV1:
    root: _Trie = {}
    members: set[int] = set()
    for path in paths:
        node = root
        for e in path:
            child = node.get(e)
            if child is None:
                child = node[e] = {}
            node = child
        members.add(id(node))
    return _encode(root, members)


@functools.lru_cache(maxsize=16384)
def _spelled(e: Element) -> str:
    return _SPELLING[e.kind] + e.text


def _encode(node: _Trie, members: set[int]) -> FieldsV1:
    if not node:
        return {}
    out: FieldsV1 = {MEMBER: {}} if id(node) in members else {}
    for e in sorted(node, key=_element_order) if len(node) > 1 else node:
        out[_spelled(e)] = _encode(node[e], members)
    return out


class FieldsError(ValueError):
    """A FieldsV1 document that is not a field set."""


def from_fields_v1(data: object) -> FieldSet:
    """The field set of a FieldsV1 document (FieldsError when it is not one)."""
    if not isinstance(data, Mapping):
        raise FieldsError("FieldsV1 must be a JSON object")
    out: set[Path] = set()
    _decode(data, (), out)
    return frozenset(out)


def _decode(node: Mapping[str, object], at: Path, out: set[Path]) -> None:
    for spelled, child in node.items():
        if spelled == MEMBER:
            if at:
                out.add(at)
            continue
        path = (*at, parse_element(spelled))
        if not isinstance(child, Mapping):
            raise FieldsError(f"expected an object under {spelled!r}")
        if child:
            _decode(child, path, out)
        else:
            out.add(path)


def parse_element(spelled: str) -> Element:
    prefix, sep, text = spelled.partition(":")
    kind = _PREFIXES.get(prefix)
    if not sep or kind is None:
        raise FieldsError(f"unknown path element {spelled!r}")
    if kind in (KEY, VALUE):
        try:
            parsed = json.loads(text)
        except ValueError:
            raise FieldsError(f"invalid JSON in path element {spelled!r}") from None
        if kind == KEY and not isinstance(parsed, dict):
            raise FieldsError(f"a key element must hold a JSON object: {spelled!r}")
        return Element(kind, canonical(parsed))
    if kind == INDEX and not text.isdigit():
        raise FieldsError(f"an index element must hold a number: {spelled!r}")
    return Element(kind, text)
