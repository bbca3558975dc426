"""Kubernetes objects in protobuf, as kube-apiserver writes them, to and from their JSON shape
(plain dicts, lists and scalars, as `msgspec.to_builtins` makes them and the API server's JSON
path reads them). The wire itself is compiled (`_wire`), driven by the schema's tables.

Fields are written in number order, map entries by key; a field with a `None` value is left out,
as a nil pointer is, and a message inlined in JSON is written from its parent's keys. Reading, a
field's zero value is dropped where its Go field is a value with `omitempty`, as Go's JSON encoder
drops it (a decoded object then prints as its JSON twin), and kept where it is a pointer or always
written; a field the schema does not know is skipped. Messages that stand for a JSON scalar (times,
quantities, int-or-strings, durations, raw JSON, the CRD schema's either-or types) convert to that
scalar.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable
from datetime import UTC, datetime

import msgspec

from kubesched.storage.protobuf import _wire
from kubesched.storage.protobuf import schema as s
from kubesched.storage.protobuf._wire import ProtobufError
from kubesched.storage.protobuf.durations import format_duration, parse_duration

_SPECIAL_KINDS = {
    s.TIME: "time",
    s.MICRO_TIME: "micro_time",
    s.DURATION: "duration",
    s.QUANTITY: "quantity",
    s.INT_OR_STRING: "int_or_string",
    s.RAW_EXTENSION: "raw",
    s.FIELDS_V1: "raw",
    s.EXTENSIONS_JSON: "raw",
    s.SCHEMA_OR_ARRAY: "or_array",
    s.SCHEMA_OR_BOOL: "or_bool",
    s.SCHEMA_OR_STRINGS: "or_strings",
}


def _time_parts(data: str | datetime) -> tuple[int, int]:
    if isinstance(data, str):
        stamp = datetime.fromisoformat(data)
        stamp = stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)
    else:
        stamp = data
    return int(stamp.timestamp() // 1), stamp.microsecond * 1000


def _raw_json(data: bytes) -> object:
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        raise ProtobufError("raw JSON that does not parse") from None


def _b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode()


_CALLBACKS: dict[str, Callable[..., object]] = {
    "b64encode": _b64encode,
    "b64decode": base64.b64decode,
    "format_duration": format_duration,
    "parse_duration": parse_duration,
    "raw_json": _raw_json,
    "raw_bytes": msgspec.json.encode,
    "time_parts": _time_parts,
}


@functools.cache
def _tables() -> dict[str, _wire.Message]:
    return _wire.build(s.data(), _SPECIAL_KINDS, f"{s.EXTENSIONS}.JSONSchemaProps", _CALLBACKS)


def message(name: str) -> _wire.Message:
    """The tables of the message `name` (a full protobuf name); KeyError naming one the schema lacks."""
    try:
        return _tables()[name]
    except KeyError:
        raise KeyError(name) from None


def encode(name: str, data: object) -> bytes:
    """The message `name` with the content of `data`: its JSON shape, or a model (a msgspec
    Struct) read as `msgspec.to_builtins` would read it."""
    return _wire.encode(message(name), data)


def decode(
    name: str, buf: bytes, start: int = 0, end: int | None = None, *, into: dict[str, object] | None = None
) -> object:
    """The JSON shape of the message `name` in `buf[start:end]` (added to `into` when given)."""
    return _wire.decode(message(name), buf, start, end, into)


__all__ = ["ProtobufError", "decode", "encode"]
