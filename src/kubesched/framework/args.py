"""Plugin arguments: decoded strictly into the plugin's args type, defaults applied.

An args type is a msgspec Struct or a dataclass whose field names (after any `rename`) are the
configuration's. Decoding refuses an unknown field and a value of the wrong type, naming the field.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Protocol, TypeVar, runtime_checkable

import msgspec

A = TypeVar("A")


class ArgsError(ValueError):
    """Arguments that do not decode: the args type, the offending field's path ("" for the whole)
    and what is wrong with it."""

    def __init__(self, args_type: str, field: str, message: str) -> None:
        super().__init__(f"{args_type}.{field}: {message}" if field else f"{args_type}: {message}")
        self.args_type = args_type
        self.field = field
        self.detail = message


@runtime_checkable
class ValidatingArgs(Protocol):
    """An args type may validate its decoded values: raise ValueError naming each invalid field
    under `path` (the arguments' place in the configuration)."""

    def validate(self, path: str = "") -> None: ...


def field_names(cls: type[object]) -> set[str] | None:
    """The names an args type accepts in configurations (None: not a Struct or dataclass)."""
    if isinstance(cls, type) and issubclass(cls, msgspec.Struct):
        return {f.encode_name for f in msgspec.structs.fields(cls)}
    if dataclasses.is_dataclass(cls):
        return {f.name for f in dataclasses.fields(cls)}
    return None


def decode_args(args: object, cls: type[A]) -> A:
    """`cls` from None (its defaults), an instance of it, or its JSON-shaped mapping."""
    if args is None:
        return cls()
    if isinstance(args, cls):
        return args
    if isinstance(args, Mapping):
        known = field_names(cls)
        if known is not None:
            unknown = sorted(str(k) for k in args if k not in known)
            if unknown:
                raise ArgsError(cls.__name__, "", f"unknown field `{unknown[0]}` (known: {', '.join(sorted(known))})")
    try:
        return msgspec.convert(args, cls, strict=False)
    except msgspec.ValidationError as err:
        text = str(err)
        match = re.search(r" - at `\$\.?([^`]*)`$", text)
        if match:
            raise ArgsError(cls.__name__, match.group(1), text[: match.start()]) from None
        raise ArgsError(cls.__name__, "", text) from None
