"""Checking a plugin against the protocols it declares, once, when its profile is built.

A plugin declares a point (or a hook: batch methods, extensions, queue keys) by subclassing its
protocol. Conformance means: every method of every declared protocol is implemented by the plugin
(not inherited from the protocol's stub), takes the protocol's positional parameters, and is a
coroutine function exactly where the protocol's is; no public method's name is a near miss of a
protocol method's. What fails is a `ConformanceError` naming the plugin and what is wrong.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard, TypeVar

from kubesched.framework.interface import HOOK_PROTOCOLS, POINT_PROTOCOLS, ExtensionPoint

P = TypeVar("P")

_ALL_PROTOCOLS: tuple[type[object], ...] = (*POINT_PROTOCOLS.values(), *HOOK_PROTOCOLS)


class ConformanceError(ValueError):
    """A plugin that does not implement what it declares."""


def _own_methods(proto: type[object]) -> dict[str, Callable[..., object]]:
    return {k: v for k, v in vars(proto).items() if callable(v) and not k.startswith("_")}


# method name -> (the protocol that defines it, its stub)
PROTOCOL_METHODS: dict[str, tuple[type[object], Callable[..., object]]] = {
    name: (proto, fn) for proto in _ALL_PROTOCOLS for name, fn in _own_methods(proto).items()
}


def declares(plugin: object, proto: type[P]) -> TypeGuard[P]:
    """Whether the plugin's class declares `proto` (subclasses it)."""
    return proto in type(plugin).__mro__


def declared_points(plugin: object) -> list[ExtensionPoint]:
    return [point for point, proto in POINT_PROTOCOLS.items() if declares(plugin, proto)]


def _is_protocol(cls: type[object]) -> bool:
    return bool(getattr(cls, "_is_protocol", False))


def _positional(fn: Callable[..., object], *, bound: bool) -> tuple[int, int, bool]:
    """(required, maximum, takes *args) positional parameters, `self` excluded."""
    params = list(inspect.signature(fn).parameters.values())
    if not bound and params:
        params = params[1:]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(1 for p in positional if p.default is p.empty)
    star = any(p.kind == p.VAR_POSITIONAL for p in params)
    required_keyword = [p.name for p in params if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    if required_keyword:
        return -1, -1, star
    return required, len(positional), star


def _signature_text(name: str, stub: Callable[..., object]) -> str:
    params = list(inspect.signature(stub).parameters)[1:]
    prefix = "async " if inspect.iscoroutinefunction(stub) else ""
    return f"{prefix}def {name}(self, {', '.join(params)})" if params else f"{prefix}def {name}(self)"


@dataclass(frozen=True)
class Problem:
    method: str
    text: str


def problems(plugin: object) -> list[Problem]:
    """Everything that keeps `plugin` from conforming to what it declares (empty: it conforms)."""
    cls = type(plugin)
    name = getattr(cls, "name", None)
    out: list[Problem] = []
    explained: set[str] = set()  # near misses already named as the missing method's misspelling
    if not isinstance(name, str) or not name:
        out.append(Problem("name", "has no `name` (a non-empty string class attribute)"))
    for method, (proto, stub) in PROTOCOL_METHODS.items():
        if not declares(plugin, proto):
            continue
        owner = next((c for c in cls.__mro__ if method in vars(c)), None)
        if owner is None or _is_protocol(owner):
            hint = _near_miss_of(cls, method)
            explained.add(hint)
            extra = f' (it has "{hint}": a misspelling?)' if hint else ""
            out.append(Problem(method, f"declares {proto.__name__} but does not implement {method}{extra}"))
            continue
        impl = getattr(plugin, method)
        if not callable(impl):
            out.append(Problem(method, f"{method} is not a method"))
            continue
        want_async = inspect.iscoroutinefunction(stub)
        if inspect.iscoroutinefunction(impl) != want_async:
            kind = "a coroutine function (async def)" if want_async else "a plain function (not async)"
            out.append(Problem(method, f"{method} must be {kind}: {_signature_text(method, stub)}"))
            continue
        wanted, _, _ = _positional(stub, bound=False)
        try:
            required, maximum, star = _positional(impl, bound=True)
        except (TypeError, ValueError):
            continue  # a builtin or C callable: nothing to inspect
        if required < 0 or not (required <= wanted and (star or maximum >= wanted)):
            got = str(inspect.signature(impl))
            out.append(Problem(method, f"{method}{got} does not take {_signature_text(method, stub)}"))
    known = set(PROTOCOL_METHODS)
    for attr in dir(cls):
        if attr.startswith("_") or attr in known or attr in explained or not callable(getattr(cls, attr, None)):
            continue
        close = difflib.get_close_matches(attr, known, n=1, cutoff=0.85)
        if close:
            out.append(Problem(attr, f'has a method "{attr}": did you mean "{close[0]}"?'))
    return out


def _near_miss_of(cls: type[object], method: str) -> str:
    names = [a for a in dir(cls) if not a.startswith("_") and a != method]
    close = difflib.get_close_matches(method, names, n=1, cutoff=0.85)
    return close[0] if close else ""


def check(plugin: object, label: str) -> None:
    """Raise `ConformanceError` listing every problem of `plugin` (`label` names it)."""
    found = problems(plugin)
    if found:
        raise ConformanceError(f'plugin "{label}" ' + "; ".join(p.text for p in found))
