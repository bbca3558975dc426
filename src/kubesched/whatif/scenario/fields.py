"""Reading a scenario file's values: each reader takes the value and where it is in the file
(`steps[2].assert.within`) and gives a typed value or a ScenarioError naming that place."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TypeVar

from kubesched.config.duration import parse_duration

T = TypeVar("T")


class ScenarioError(ValueError):
    """A scenario file that cannot be run, in one line naming the file and the field at fault."""


def mapping(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, Mapping):
        raise ScenarioError(f"{where}: expected a mapping, got {_shown(value)}")
    return {str(k): v for k, v in value.items()}


def sequence(value: object, where: str) -> list[object]:
    if not isinstance(value, list):
        raise ScenarioError(f"{where}: expected a list, got {_shown(value)}")
    return value


def each(value: object, where: str, read: Callable[[object, str], T]) -> list[T]:
    """Each item of a list read by `read`, with its place (`where[i]`)."""
    return [read(item, f"{where}[{i}]") for i, item in enumerate(sequence(value, where))]


def text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ScenarioError(f"{where}: expected a non-empty string, got {_shown(value)}")
    return value


def integer(value: object, where: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{where}: expected an integer, got {_shown(value)}")
    if value < minimum:
        raise ScenarioError(f"{where}: must be at least {minimum}, got {value}")
    return value


def boolean(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise ScenarioError(f"{where}: expected true or false, got {_shown(value)}")
    return value


def duration(value: object, where: str) -> float:
    """Seconds from a number or a Go duration (`500ms`, `1m30s`); never negative."""
    if isinstance(value, bool):
        raise ScenarioError(f"{where}: expected a duration such as 5s or 500ms, got {_shown(value)}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            seconds = parse_duration(value)
        except ValueError as e:
            raise ScenarioError(f"{where}: {e}") from None
    else:
        raise ScenarioError(f"{where}: expected a duration such as 5s or 500ms, got {_shown(value)}")
    if seconds < 0 or not math.isfinite(seconds):
        raise ScenarioError(f"{where}: must be a finite duration of at least 0s, got {value}")
    return seconds


def labels(value: object, where: str) -> dict[str, str]:
    """A map of label keys to values (numbers and booleans as YAML wrote them are refused)."""
    out = {}
    for key, item in mapping(value, where).items():
        if not isinstance(item, str):
            raise ScenarioError(f"{where}.{key}: a label value is a string; quote it ({_shown(item)})")
        out[key] = item
    return out


def only(fields: Mapping[str, object], allowed: set[str] | frozenset[str], where: str) -> None:
    """A ScenarioError for the first field not in `allowed`, naming those that are."""
    for key in fields:
        if key not in allowed:
            raise ScenarioError(f"{where}: unknown field {key!r} (known: {', '.join(sorted(allowed))})")


def _shown(value: object) -> str:
    if value is None:
        return "nothing"
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."
