"""`CycleState`: data plugins share within one scheduling attempt (never across attempts)."""

from __future__ import annotations

from typing import Any, Protocol


class StateData(Protocol):
    def clone(self) -> StateData: ...


class CycleState:
    """Keyed per-attempt data (PreFilter computes, Filter reads), plus the plugins the cycle skips.
    `clone()` copies every entry through its own `clone()`, so preemption can simulate removing
    pods without touching the real cycle's state."""

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, object] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def read(self, key: str) -> Any:  # Any: the type its writer stored, which the reader knows
        """The data stored under `key`; KeyError if nothing was written."""
        return self._data[key]

    def get(self, key: str) -> Any | None:  # Any: as `read`'s
        return self._data.get(key)

    def write(self, key: str, value: object) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState()
        c._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        return c
