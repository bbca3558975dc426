"""Patches on plain JSON values: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and
strategic merge patch for the fields kubectl patches on built-in kinds."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

MERGE = "merge"
JSON = "json"
STRATEGIC = "strategic"
APPLY = "apply"  # server-side apply: the store's `apply`, not a patch of plain values

CONTENT_TYPES = {
    "application/merge-patch+json": MERGE,
    "application/json-patch+json": JSON,
    "application/strategic-merge-patch+json": STRATEGIC,
    "application/apply-patch+yaml": APPLY,
}


class PatchError(ValueError):
    """The patch is malformed or does not apply to the object."""


def apply_patch(kind: str, target: object, patch: object, patch_type: str) -> object:
    """Apply a patch of `patch_type` to `target` (a JSON value of an object of `kind`)."""
    if patch_type == MERGE:
        if not isinstance(patch, Mapping):
            raise PatchError("a merge patch must be a JSON object")
        return merge_patch(target, patch)
    if patch_type == JSON:
        return json_patch(target, patch)
    if patch_type == STRATEGIC:
        if not isinstance(patch, Mapping):
            raise PatchError("a strategic merge patch must be a JSON object")
        return strategic_merge(target, patch, kind=kind, path="")
    raise PatchError(f"unsupported patch type {patch_type!r}")


# Any: the patch itself where it is not an object (a dict where it is), as callers' documents take it
def merge_patch(target: object, patch: object) -> Any:
    """Apply `patch` to `target`: objects merge key by key, null deletes, anything else replaces."""
    if not isinstance(patch, Mapping):
        return patch
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# -- JSON patch --------------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[object], token: str, *, insert: bool) -> int:
    if insert and token == "-":
        return len(container)
    if not token.isdigit():
        raise PatchError(f"invalid array index {token!r}")
    i = int(token)
    if i > len(container) or (not insert and i == len(container)):
        raise PatchError(f"array index {i} out of bounds")
    return i


def _parent(doc: object, tokens: list[str]) -> object:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, insert=False)]
        else:
            raise PatchError(f"path not found: /{'/'.join(tokens)}")
    return node


def _get(doc: object, tokens: list[str]) -> object:
    if not tokens:
        return doc
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path not found: /{'/'.join(tokens)}")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, insert=False)]
    raise PatchError(f"path not found: /{'/'.join(tokens)}")


def _remove(doc: object, tokens: list[str]) -> object:
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, insert=False))
    raise PatchError(f"path not found: /{'/'.join(tokens)}")


def _add(doc: object, tokens: list[str], value: object) -> object:
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, insert=True), value)
    else:
        raise PatchError(f"path not found: /{'/'.join(tokens)}")
    return doc


def json_patch(target: object, operations: object) -> object:
    """Apply RFC 6902 operations (add, remove, replace, move, copy, test) to a copy of `target`."""
    if not isinstance(operations, Sequence) or isinstance(operations, str | bytes):
        raise PatchError("a JSON patch must be a JSON array of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, Mapping) or "op" not in op or "path" not in op:
            raise PatchError("each JSON patch operation needs 'op' and 'path'")
        kind, tokens = op["op"], _pointer(op["path"])
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"operation {kind!r} needs a 'value'")
        if kind == "add":
            doc = _add(doc, tokens, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, tokens)
        elif kind == "replace":
            _get(doc, tokens)
            if tokens:
                _remove(doc, tokens)
            doc = _add(doc, tokens, copy.deepcopy(op["value"]))
        elif kind in ("move", "copy"):
            source = _pointer(op.get("from", ""))
            value = _remove(doc, source) if kind == "move" else copy.deepcopy(_get(doc, source))
            doc = _add(doc, tokens, value)
        elif kind == "test":
            if _get(doc, tokens) != op["value"]:
                raise PatchError(f"test failed at {op['path']}")
        else:
            raise PatchError(f"unknown JSON patch operation {kind!r}")
    return doc


# -- strategic merge patch -----------------------------------------------------------------------

# Lists that merge by a key instead of being replaced, by field name (as built-in kinds declare
# them); "" marks lists of scalars that merge as sets.
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "volumes": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "conditions": "type",
    "addresses": "type",
    "ownerReferences": "uid",
    "schedulingGates": "name",
    "resourceClaims": "name",
    "topologySpreadConstraints": "topologyKey",
    "finalizers": "",
}


def _merge_key(kind: str, path: str, field: str) -> str | None:
    if field == "ports":
        return "port" if kind == "Service" and path == ".spec" else "containerPort"
    return _MERGE_KEYS.get(field)


# Any: the patch's values, read as the directives and values they stand for (as kube-apiserver reads them)
def strategic_merge(target: object, patch: Mapping[str, Any], *, kind: str, path: str) -> dict[str, object] | None:
    """Apply a strategic merge patch: maps merge, lists with a merge key merge by that key, and
    the `$patch`, `$retainKeys`, `$deleteFromPrimitiveList/` and `$setElementOrder/` directives apply."""
    if patch.get("$patch") == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result: dict[str, Any] = dict(target) if isinstance(target, Mapping) else {}  # Any: as the patch's
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            result[field] = [v for v in result.get(field) or [] if v not in value]
            continue
        if value is None:
            result.pop(key, None)
            continue
        current = result.get(key)
        sub = f"{path}.{key}"
        if isinstance(value, Mapping):
            merged = strategic_merge(current, value, kind=kind, path=sub)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _merge_list(current, value, _merge_key(kind, path, key), kind=kind, path=sub)
        else:
            result[key] = value
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    for key, order in patch.items():
        if key.startswith("$setElementOrder/") and isinstance(order, list):
            field = key.split("/", 1)[1]
            result[field] = _reorder(result.get(field) or [], order, _merge_key(kind, path, field))
    return result


def _merge_list(current: object, patch: list[object], key: str | None, *, kind: str, path: str) -> list[object]:
    if key is None or not isinstance(current, list):
        return [v for v in patch if not (isinstance(v, Mapping) and v.get("$patch") == "delete")]
    if key == "":
        return [*current, *(v for v in patch if v not in current)]
    if any(isinstance(v, Mapping) and v.get("$patch") == "replace" for v in patch):
        return [v for v in patch if not (isinstance(v, Mapping) and "$patch" in v)]
    result = list(current)
    for item in patch:
        if not isinstance(item, Mapping) or key not in item:
            raise PatchError(f"map in list {path} does not contain its merge key {key!r}")
        at = next((i for i, v in enumerate(result) if isinstance(v, Mapping) and v.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if at is not None:
                del result[at]
        elif at is None:
            result.append({k: v for k, v in item.items() if k != "$patch"})
        else:
            result[at] = strategic_merge(result[at], item, kind=kind, path=path)
    return result


def _reorder(items: list[object], order: list[object], key: str | None) -> list[object]:
    def ident(v: object) -> object:
        return v.get(key) if key and isinstance(v, Mapping) else v

    rank = {ident(o): i for i, o in enumerate(order)}
    return sorted(items, key=lambda v: rank.get(ident(v), len(rank)))
