"""Reading the documents whatif keeps objects as (decoded JSON: mappings with string keys, lists,
strings, numbers). Each reader gives a field as what it has to be, or a TypeError naming the field
when it holds something else; a missing field reads as empty (`section`, `items`) or is a KeyError
(`metadata`, `document_name`)."""

from __future__ import annotations

from collections.abc import Mapping


def mapping(value: object, what: str) -> dict[str, object]:
    """`value`, a mapping; TypeError naming `what` when it is something else."""
    if not isinstance(value, dict):
        raise TypeError(f"{what}: expected a mapping, got {type(value).__name__}")
    return value


def listed(value: object, what: str) -> list[object]:
    """`value`, a list; TypeError naming `what` when it is something else."""
    if not isinstance(value, list):
        raise TypeError(f"{what}: expected a list, got {type(value).__name__}")
    return value


def string(value: object, what: str) -> str:
    """`value`, a string; TypeError naming `what` when it is something else."""
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a string, got {type(value).__name__}")
    return value


def section(document: Mapping[str, object], key: str) -> dict[str, object]:
    """`document.get(key) or {}`: the mapping at `key` (a new empty one, not stored, when the field
    is missing or empty)."""
    value = document.get(key)
    return mapping(value, key) if value else {}


def entry(document: dict[str, object], key: str) -> dict[str, object]:
    """`document.setdefault(key, {})`: the mapping at `key`, stored when it was missing."""
    return mapping(document.setdefault(key, {}), key)


def items(document: Mapping[str, object], key: str) -> list[object]:
    """`document.get(key) or []`: the list at `key` (empty when the field is missing or empty)."""
    value = document.get(key)
    return listed(value, key) if value else []


def mappings(document: Mapping[str, object], key: str) -> list[dict[str, object]]:
    """The list at `key` (as `items`), each item a mapping."""
    return [mapping(item, f"{key}[{i}]") for i, item in enumerate(items(document, key))]


def metadata(document: Mapping[str, object]) -> dict[str, object]:
    """`document["metadata"]`: an object's metadata (KeyError when it has none)."""
    return mapping(document["metadata"], "metadata")


def document_name(document: Mapping[str, object]) -> str:
    """`document["metadata"]["name"]`: an object's name (KeyError when it has none)."""
    return string(metadata(document)["name"], "metadata.name")


def document_namespace(document: Mapping[str, object]) -> str | None:
    """`document["metadata"].get("namespace")`: an object's namespace (None when it names none)."""
    value = metadata(document).get("namespace")
    return None if value is None else string(value, "metadata.namespace")
