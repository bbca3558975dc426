"""List continue tokens: the list's resourceVersion and the last key returned, opaque to clients."""

from __future__ import annotations

import base64
import json

from kubesched.cluster.errors import BadRequest


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
