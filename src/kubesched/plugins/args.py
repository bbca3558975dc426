"""Plugin arguments as the framework hands them over: None, an instance, or a JSON-shaped mapping."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

A = TypeVar("A")


def decode_args(args: Any, cls: type[A]) -> A:
    """`cls` from None (its defaults), an instance of it, or its JSON-shaped mapping."""
    if args is None:
        return cls()
    if isinstance(args, cls):
        return args
    try:
        return msgspec.convert(args, cls)
    except msgspec.ValidationError as err:
        raise ValueError(f"args are not of type {cls.__name__}: {err}") from None
