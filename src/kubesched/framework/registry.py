"""The plugin registry: plugin names to factories, the type of their arguments, and where they come from."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.framework.interface import Plugin

# (decoded args or None, handle) -> plugin.
# Any: args of the type the plugin registered, which its factory names
Factory = Callable[[Any, "Handle"], "Plugin"]
IN_TREE = "in-tree"


@dataclass(frozen=True)
class PluginSpec:
    """What a plugin package exports for one plugin: its factory, the type of its arguments
    (a msgspec Struct or a dataclass with upstream-style camelCase names; None: no arguments) and,
    for `--plugin`, its name (an entry point's name is the plugin's)."""

    factory: Factory
    args_type: type[object] | None = None
    name: str = ""


@dataclass(frozen=True)
class Registration:
    factory: Factory
    args_type: type[object] | None = None
    source: str = IN_TREE  # "in-tree", "<distribution> <version>" or "--plugin <module:attr>"


class RegistryError(ValueError):
    """Two plugins by one name."""


class Registry:
    """Maps plugin names to how to build them. Registering a name twice is an error naming both sources."""

    def __init__(self) -> None:
        self._entries: dict[str, Registration] = {}

    def register(
        self, name: str, factory: Factory, args_type: type[object] | None = None, *, source: str = IN_TREE
    ) -> None:
        existing = self._entries.get(name)
        if existing is not None:
            raise RegistryError(f'a plugin named "{name}" already exists ({existing.source}; again from {source})')
        self._entries[name] = Registration(factory, args_type, source)

    def merge(self, other: Registry) -> None:
        """Add every plugin of `other` (out-of-tree plugins); a clash is an error."""
        for name, entry in other._entries.items():
            self.register(name, entry.factory, entry.args_type, source=entry.source)

    def get(self, name: str) -> Registration | None:
        return self._entries.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)
