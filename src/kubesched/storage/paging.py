"""Lists in pages: a table's objects in key order, a page at a time, and the continue tokens
(the list's resourceVersion and the last key returned, opaque to clients)."""

from __future__ import annotations

import base64
import bisect
import json
from collections.abc import Callable, Mapping

from kubesched.api.objects import Served
from kubesched.cluster.errors import BadRequest
from kubesched.cluster.protocol import ListResult

Key = tuple[str, str]


def encode_continue(rv: int, last: tuple[str, str]) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": list(last)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        ns, name = data["start"]
        return int(data["rv"]), (str(ns), str(name))
    except (ValueError, KeyError, TypeError) as e:
        raise BadRequest(f"continue key is not valid: {e}") from None


def page(
    table: Mapping[Key, Served],
    *,
    matches: Callable[[Served], bool],
    convert: Callable[[Served], Served] | None,
    rv: int,
    limit: int,
    continue_token: str | None,
) -> ListResult[Served]:
    """The matching objects in key order: all, or with `limit` one page, and `continue_token` from
    the previous page resumes after its last key (items read as they are now, the page keeping
    the first page's resourceVersion)."""
    keys = sorted(table)
    if continue_token:
        rv, after = decode_continue(continue_token)
        keys = keys[bisect.bisect_right(keys, after) :]
    items: list[Served] = []
    for i, k in enumerate(keys):
        obj = convert(table[k]) if convert else table[k]
        if not matches(obj):
            continue
        if limit and len(items) == limit:
            rest = sum(1 for j in keys[i:] if matches(convert(table[j]) if convert else table[j]))
            return ListResult(items, str(rv), encode_continue(rv, keys[i - 1]), rest)
        items.append(obj)
    return ListResult(items, str(rv))
