"""The plugin API's surface as text: every public name of every tier of `kubesched.plugin`, with
the signature of each function, each class's public members and their signatures, each constant's
value. `docs/plugin-api.txt` holds it as released; a test compares the live surface with it.

    .venv/bin/python tools/plugin_surface.py          # print the surface
    .venv/bin/python tools/plugin_surface.py --write  # write docs/plugin-api.txt (an intended change)
"""

from __future__ import annotations

import enum
import importlib
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TIERS = (
    "kubesched.plugin",
    "kubesched.plugin.batch",
    "kubesched.plugin.handle",
    "kubesched.plugin.resources",
    "kubesched.plugin.cluster",
    "kubesched.plugin.registry",
    "kubesched.plugin.events",
    "kubesched.plugin.preemption",
    "kubesched.plugin.testing",
    "kubesched.plugin.controllers",
)
SNAPSHOT = Path(__file__).parents[1] / "docs" / "plugin-api.txt"


def _signature(obj: Any) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _ours(cls: type) -> list[type]:
    """`cls` and the classes it inherits from that kubesched defines (their members are its API)."""
    return [c for c in cls.__mro__ if c.__module__.startswith("kubesched")]


def _members(cls: type) -> Iterator[str]:
    if issubclass(cls, enum.Enum):
        for member in cls:
            yield f"    {member.name} = {member.value!r}"
        return
    seen: set[str] = set()
    for owner in _ours(cls):
        for name, value in list(vars(owner).items()):
            if name in seen or (name.startswith("_") and name != "__init__"):
                continue
            seen.add(name)
            if name == "__init__":
                continue  # its signature is the class's
            if isinstance(value, property):
                yield f"    {name}: property"
            elif isinstance(value, staticmethod | classmethod):
                yield f"    {name}{_signature(value.__func__)} [{type(value).__name__}]"
            elif inspect.isfunction(value):
                yield f"    {name}{_signature(value)}"
            elif name in inspect.get_annotations(owner):
                continue  # a field: shown in the signature
            elif inspect.ismemberdescriptor(value):
                yield f"    {name}: attribute"
            elif not callable(value):
                yield f"    {name} = {value!r}"
    for name, annotation in inspect.get_annotations(cls).items():
        if not name.startswith("_") and name not in seen:
            yield f"    {name}: {annotation}"


def _describe(name: str, obj: Any) -> Iterator[str]:
    if inspect.ismodule(obj):
        yield f"module {name}"
    elif inspect.isclass(obj):
        bases = ", ".join(b.__name__ for b in obj.__bases__ if b is not object)
        plain = not _is_protocol(obj) and not issubclass(obj, enum.Enum)
        yield f"class {name}({bases}){_signature(obj) if plain else ''}"
        yield from sorted(set(_members(obj)))
    elif inspect.isfunction(obj) or inspect.isbuiltin(obj):
        yield f"def {name}{_signature(obj)}"
    elif callable(obj):
        yield f"{name}: {type(obj).__name__}{_signature(obj)}"
    else:
        yield f"{name} = {obj!r}"


def _is_protocol(cls: type) -> bool:
    return bool(getattr(cls, "_is_protocol", False))


def surface() -> str:
    lines: list[str] = []
    for tier in TIERS:
        module = importlib.import_module(tier)
        lines.append(f"[{tier}]")
        for name in sorted(module.__all__):
            lines += _describe(name, getattr(module, name))
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    text = surface()
    if sys.argv[1:] == ["--write"]:
        SNAPSHOT.write_text(text)
        print(f"wrote {SNAPSHOT}")
    else:
        print(text)


if __name__ == "__main__":
    main()
