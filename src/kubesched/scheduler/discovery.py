"""Where plugins come from: the in-tree set, installed distributions that declare entry points in
the group `kubesched.plugins`, and modules named on the command line (`--plugin module:attr`).

An entry point's name is the plugin's name in configurations; its value `module:attr` names a
factory `(args, handle) -> plugin` (a plugin class taking those two is one) or a `PluginSpec`
(factory and args type). A `--plugin` object carries its names itself: a `PluginSpec` with a name,
a plugin class (its `name`), or a list of them. Every failure is a `PluginLoadError` naming the source.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, cast

from kubesched.framework.registry import PluginSpec, Registry, RegistryError
from kubesched.plugins.registry import in_tree_registry

if TYPE_CHECKING:
    from kubesched.clock import Clock
    from kubesched.cluster import Cluster

ENTRY_POINT_GROUP = "kubesched.plugins"


class PluginLoadError(ValueError):
    """A plugin that cannot be loaded; the message names where it was to come from."""


def _as_spec(obj: object, where: str) -> PluginSpec:
    if isinstance(obj, PluginSpec):
        return obj
    if callable(obj):
        return PluginSpec(obj, getattr(obj, "args_type", None), getattr(obj, "name", ""))
    raise PluginLoadError(f"{where}: expected a plugin factory or a PluginSpec, got {type(obj).__name__}")


def load_object(value: str, where: str) -> object:
    """The object `module:attr` (or `file.py:attr`) names; PluginLoadError starting with `where`."""
    module_name, _, attr = value.rpartition(":")
    if not module_name or not attr:
        raise PluginLoadError(f"{where}: expected module:attr or file.py:attr, got {value!r}")
    try:
        module = _from_file(module_name) if module_name.endswith(".py") else importlib.import_module(module_name)
    except Exception as e:
        raise PluginLoadError(f"{where}: cannot import {module_name}: {type(e).__name__}: {e}") from None
    try:
        obj: object = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise PluginLoadError(f"{where}: module {module_name} has no attribute {attr}") from None
    return obj


_FROM_FILES: set[str] = set()  # module names this process imported from files (they may be reloaded)


def _from_file(path: str) -> ModuleType:
    """The module a Python file holds, imported under its file name (`nosundays.py` → `nosundays`);
    never over a module of that name imported otherwise (`--plugin ./json.py:x` does not replace
    the standard library's `json`)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no such file {path}")
    loaded = sys.modules.get(file.stem)
    if loaded is not None and file.stem not in _FROM_FILES:
        raise ImportError(f"a module named {file.stem} is already imported ({getattr(loaded, '__file__', None)})")
    spec = importlib.util.spec_from_file_location(file.stem, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module  # dataclasses and type hints look their module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[file.stem]
        raise
    _FROM_FILES.add(file.stem)
    return module


def _source(ep: metadata.EntryPoint) -> str:
    """The distribution (name and version) that declares `ep`, as messages name it."""
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else f"entry point {ep.value}"


def discovered(group: str = ENTRY_POINT_GROUP) -> Registry:
    """The plugins installed distributions declare under `group`."""
    registry = Registry()
    for ep in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
        source = _source(ep)
        where = f'plugin "{ep.name}" ({source})'
        spec = _as_spec(load_object(ep.value, where), where)
        try:
            registry.register(ep.name, spec.factory, spec.args_type, source=source)
        except RegistryError as e:
            raise PluginLoadError(str(e)) from None
    return registry


def from_module(value: str) -> Registry:
    """The plugins `--plugin module:attr` names (the working directory is importable), or
    `--plugin path/to/file.py:attr` (the file imported as a module of its own name)."""
    where = f"--plugin {value}"
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        obj = load_object(value, where)
    finally:
        if added:
            sys.path.remove(cwd)
    items: Iterable[object] = obj if isinstance(obj, list | tuple) else (obj,)
    registry = Registry()
    for item in items:
        spec = _as_spec(item, where)
        if not spec.name:
            raise PluginLoadError(
                f"{where}: cannot tell the plugin's name (give a PluginSpec a name, or a class a `name`)"
            )
        try:
            registry.register(spec.name, spec.factory, spec.args_type, source=where)
        except RegistryError as e:
            raise PluginLoadError(str(e)) from None
    return registry


def plugin_registry(modules: Sequence[str] = (), *, entry_points: bool = True) -> Registry:
    """The in-tree plugins, merged with the installed ones and those of `modules`; a name
    registered twice is a `PluginLoadError` naming both sources."""
    registry = in_tree_registry()
    sources = [discovered()] if entry_points else []
    sources += [from_module(m) for m in modules]
    for extra in sources:
        try:
            registry.merge(extra)
        except RegistryError as e:
            raise PluginLoadError(str(e)) from None
    return registry


CONTROLLERS_GROUP = "kubesched.controllers"


class Controller(Protocol):
    """What a controller factory builds: `run()` works until cancelled."""

    def run(self) -> Awaitable[None]: ...


ControllerFactory = Callable[["Cluster", "Clock"], Controller]


@dataclass(frozen=True)
class ControllerEntry:
    """A controller an installed package declares: its name, where it comes from, its factory
    `(cluster, clock) -> controller with async run()`."""

    name: str
    source: str
    factory: ControllerFactory


def controllers(group: str = CONTROLLERS_GROUP) -> list[ControllerEntry]:
    """The controllers installed distributions declare under `group`."""
    out = []
    for ep in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
        source = _source(ep)
        factory = load_object(ep.value, f'controller "{ep.name}" ({source})')
        if not callable(factory):
            raise PluginLoadError(f'controller "{ep.name}" ({source}): {ep.value} is not a factory')
        # a factory as the group's contract has it: what it builds is only ever asked to run()
        out.append(ControllerEntry(ep.name, source, cast(ControllerFactory, factory)))
    return out
