"""The plugin registry: plugin names to factories (and the type of their arguments)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kubesched.framework.interface import Handle

Factory = Callable[[Any, Handle], Any]  # (args, handle) -> plugin


@dataclass(frozen=True)
class Registration:
    factory: Factory
    args_type: type[Any] | None = None  # a msgspec Struct with upstream's field names, or None for no args


class Registry:
    """Maps plugin names to how to build them. Registering a name twice is an error."""

    def __init__(self) -> None:
        self._entries: dict[str, Registration] = {}

    def register(self, name: str, factory: Factory, args_type: type[Any] | None = None) -> None:
        if name in self._entries:
            raise ValueError(f"a plugin named {name} already exists")
        self._entries[name] = Registration(factory, args_type)

    def merge(self, other: Registry) -> None:
        """Add every plugin of `other` (out-of-tree plugins); a clash is an error."""
        for name, entry in other._entries.items():
            self.register(name, entry.factory, entry.args_type)

    def get(self, name: str) -> Registration | None:
        return self._entries.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)
