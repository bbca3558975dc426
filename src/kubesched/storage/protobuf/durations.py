"""Go's `time.Duration` text, as metav1.Duration reads and writes it in JSON ("1h0m0s", "1.5s",
"500ms"), to and from nanoseconds."""

from __future__ import annotations

import re

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_PART = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)")


def _fraction(value: int, digits: int) -> tuple[str, int]:
    """The fraction of `value` / 10**digits without trailing zeros ("" when none), and the rest."""
    whole, frac = divmod(value, 10**digits)
    text = f"{frac:0{digits}d}".rstrip("0")
    return (f".{text}" if text else ""), whole


def format_duration(nanos: int) -> str:
    """As Go's Duration.String."""
    sign = "-" if nanos < 0 else ""
    u = abs(nanos)
    if u == 0:
        return "0s"
    if u < 1_000:
        return f"{sign}{u}ns"
    if u < 1_000_000:
        frac, whole = _fraction(u, 3)
        return f"{sign}{whole}{frac}µs"
    if u < 1_000_000_000:
        frac, whole = _fraction(u, 6)
        return f"{sign}{whole}{frac}ms"
    frac, seconds = _fraction(u, 9)
    minutes, seconds = divmod(seconds, 60)
    text = f"{seconds}{frac}s"
    if minutes:
        hours, minutes = divmod(minutes, 60)
        text = f"{minutes}m{text}"
        if hours:
            text = f"{hours}h{text}"
    return sign + text


def parse_duration(text: str) -> int:
    """As Go's time.ParseDuration; ValueError for what it refuses."""
    rest = text
    sign = 1
    if rest[:1] in "+-" and rest:
        sign, rest = (-1 if rest[0] == "-" else 1), rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ValueError(f'time: invalid duration "{text}"')
    total, pos = 0, 0
    while pos < len(rest):
        m = _PART.match(rest, pos)
        if m is None or not (m.group(1) or m.group(2)):
            raise ValueError(f'time: invalid duration "{text}"')
        whole, frac, unit = m.group(1) or "0", m.group(2) or "", m.group(3)
        scale = _UNITS[unit]
        total += int(whole) * scale + (int(frac) * scale // 10 ** len(frac) if frac else 0)
        pos = m.end()
    return sign * total
