"""Go duration strings (`15s`, `1m30s`, `500ms`), as KubeSchedulerConfiguration writes them."""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds; ValueError for anything Go's `time.ParseDuration` would refuse."""
    body = text.lstrip("+-")
    sign = -1.0 if text.startswith("-") else 1.0
    if body == "0":
        return 0.0
    position, total = 0, 0.0
    while position < len(body):
        match = _PART.match(body, position)
        if match is None:
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not body:
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total
