"""Kubernetes objects in protobuf, as kube-apiserver writes them, to and from their JSON shape
(plain dicts, lists and scalars, as `msgspec.to_builtins` makes them and the API server's JSON
path reads them). The wire is the `protobuf` library's (upb, in C, over `messages`); this module
maps its messages to and from the JSON shape.

Fields are written in number order (map entries by key); a field with a `None` value is left out, as a nil pointer is.
Reading, a field's zero value is dropped where its Go field is a value with `omitempty`, as Go's
JSON encoder drops it (a decoded object then prints as its JSON twin), and kept where it is a
pointer or always written. Messages that stand for a JSON scalar (times, quantities,
int-or-strings, durations, raw JSON, the CRD schema's either-or types) convert to that scalar.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec
from google.protobuf.message import DecodeError, Message

from kubesched.cluster.protobuf import messages
from kubesched.cluster.protobuf import schema as s
from kubesched.cluster.protobuf.durations import format_duration, parse_duration


class ProtobufError(ValueError):
    """Bytes that are not the message they are read as, or data that cannot be written as one."""


# How a field is read and written.
SCALAR, BYTES, MESSAGE, SCALARS, BYTES_LIST, MESSAGES, SCALAR_MAP, BYTES_MAP, MESSAGE_MAP, INLINE = range(10)
_ZERO = {"string": "", "bytes": b"", "bool": False, "double": 0.0, "float": 0.0}


@dataclass(frozen=True, slots=True)
class _Field:
    json: str
    name: str  # the message class's field
    how: int
    type: str  # a scalar type, or a message's full name
    keep_zero: bool


@dataclass(frozen=True, slots=True)
class _Plan:
    """One message's fields: by number for reading, by JSON name for writing."""

    by_number: dict[int, _Field]
    by_json: dict[str, _Field]
    inline: tuple[_Field, ...]  # fields holding a message whose JSON keys are its parent's
    inlined: dict[str, _Field]  # a JSON key of an inlined message -> the field that holds it
    list_of: str  # a message whose JSON form is the bare list of its one field: that field's JSON name


def _how(f: s.Field) -> int:
    scalar = f.type in _SCALAR_TYPES
    if f.inline:
        return INLINE
    if f.map_key:
        return BYTES_MAP if f.type == "bytes" else SCALAR_MAP if scalar else MESSAGE_MAP
    if f.repeated:
        return BYTES_LIST if f.type == "bytes" else SCALARS if scalar else MESSAGES
    return BYTES if f.type == "bytes" else SCALAR if scalar else MESSAGE


_SCALAR_TYPES = frozenset({"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float"})


@functools.cache
def _plan(name: str) -> _Plan:
    msg = s.message(name)
    fields = [_Field(f.json, messages.field_name(f.number), _how(f), f.type, f.keep_zero) for f in msg.fields]
    inlined = {key: f for f in fields if f.how == INLINE for key in s.message(f.type).json_names}
    return _Plan(
        by_number={f.number: mine for f, mine in zip(msg.fields, fields, strict=True)},
        by_json={f.json: f for f in fields if f.how != INLINE},
        inline=tuple(f for f in fields if f.how == INLINE),
        inlined=inlined,
        list_of=msg.fields[0].json if msg.is_list else "",
    )


# -- writing --------------------------------------------------------------------------------------


def encode(name: str, data: Any) -> bytes:
    """The message `name` (a full protobuf name) with the content of `data`, its JSON shape."""
    try:
        return _build(name, data).SerializeToString(deterministic=True)
    except (TypeError, ValueError) as e:
        if isinstance(e, ProtobufError):
            raise
        raise ProtobufError(f"{name}: {e}") from None


def _build(name: str, data: Any) -> Message:
    return messages.message_class(name)(**_fields(name, data))


def _fields(name: str, data: Any) -> dict[str, Any]:
    """The keyword arguments that make the message `name` hold `data` (nested messages as dicts)."""
    special = _TO_FIELDS.get(name)
    if special is not None:
        return special(data)
    plan = _plan(name)
    if plan.list_of:
        data = {plan.list_of: data}
    if not isinstance(data, dict):
        raise ProtobufError(f"{name}: expected an object, got {type(data).__name__}")
    out: dict[str, Any] = {}
    inline: dict[_Field, dict[str, Any]] | None = None
    for key, value in data.items():
        f = plan.by_json.get(key)
        if f is None:
            holder = plan.inlined.get(key)
            if holder is not None:
                inline = inline if inline is not None else {}
                inline.setdefault(holder, {})[key] = value
            continue  # a key the schema does not know is not written
        if value is None:
            continue
        how = f.how
        if how == SCALAR:
            out[f.name] = value
        elif how == MESSAGE:
            out[f.name] = _fields(f.type, value)
        elif how == MESSAGES:
            out[f.name] = [_fields(f.type, item) for item in value]
        elif how == SCALARS:
            out[f.name] = value
        elif how == SCALAR_MAP:
            out[f.name] = {k: _ZERO.get(f.type, 0) if v is None else v for k, v in value.items()}
        elif how == MESSAGE_MAP:
            out[f.name] = {k: {} if v is None else _fields(f.type, v) for k, v in value.items()}
        elif how == BYTES:
            out[f.name] = _bytes(value)
        elif how == BYTES_LIST:
            out[f.name] = [_bytes(item) for item in value]
        else:
            out[f.name] = {k: b"" if v is None else _bytes(v) for k, v in value.items()}
    for holder in plan.inline:  # written even when it holds nothing, as Go writes an embedded struct
        out[holder.name] = _fields(holder.type, (inline or {}).get(holder, {}))
    return out


def _bytes(value: Any) -> bytes:
    return base64.b64decode(value) if isinstance(value, str) else bytes(value)


# -- reading --------------------------------------------------------------------------------------


def decode(name: str, data: bytes) -> Any:
    """The JSON shape of the message `name` in `data`."""
    try:
        msg = messages.message_class(name).FromString(data)
    except DecodeError:
        raise ProtobufError(f"the bytes are not a protobuf {name.rpartition('.')[2]}") from None
    return _json(name, msg)


def _zero(value: Any) -> bool:
    return value == "" or value is False or (value == 0 and not isinstance(value, bool))


def _json(name: str, msg: Any) -> Any:
    return (_READERS.get(name) or _reader(name))(msg)


_READERS: dict[str, Callable[[Any], Any]] = {}


def _reader(name: str) -> Callable[[Any], Any]:
    """The function that gives a message of `name` its JSON shape (made once per message)."""
    special = _FROM_MESSAGE.get(name)
    if special is not None:
        _READERS[name] = special
        return special
    plan = _plan(name)
    by_number = plan.by_number
    list_of = plan.list_of
    readers = _READERS

    def read(msg: Any) -> Any:
        out: dict[str, Any] = {}
        for fd, value in msg.ListFields():
            f = by_number[fd.number]
            how = f.how
            if how == SCALAR:
                if not f.keep_zero and (value == "" or value is False or (value == 0 and value is not True)):
                    continue
                out[f.json] = value
                continue
            if how == MESSAGE:
                item = (readers.get(f.type) or _reader(f.type))(value)
                if item is None or (not f.keep_zero and _zero(item)):
                    continue
                out[f.json] = item
            elif how == MESSAGES:
                sub = readers.get(f.type) or _reader(f.type)
                out[f.json] = [sub(v) for v in value]
            elif how == SCALARS:
                out[f.json] = list(value)
            elif how == SCALAR_MAP:
                out[f.json] = dict(value)
            elif how == MESSAGE_MAP:
                sub = readers.get(f.type) or _reader(f.type)
                out[f.json] = {k: sub(v) for k, v in value.items()}
            elif how == INLINE:
                out.update((readers.get(f.type) or _reader(f.type))(value))
            elif how == BYTES:
                out[f.json] = base64.b64encode(value).decode()
            elif how == BYTES_LIST:
                out[f.json] = [base64.b64encode(v).decode() for v in value]
            else:
                out[f.json] = {k: base64.b64encode(v).decode() for k, v in value.items()}
        return out.get(list_of, []) if list_of else out

    _READERS[name] = read
    return read


# -- messages that are JSON scalars ---------------------------------------------------------------


def _stamp(text: str) -> datetime:
    stamp = datetime.fromisoformat(text)
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def _time_fields(data: Any) -> dict[str, Any]:
    stamp = _stamp(data) if isinstance(data, str) else data
    return {"f1": int(stamp.timestamp() // 1), "f2": stamp.microsecond * 1000}


def _time(micro: bool) -> Callable[[Any], Any]:
    def read(msg: Any) -> Any:
        seconds, nanos = msg.f1, msg.f2
        if seconds == 0 and nanos == 0:
            return None  # Go's zero time: null in JSON
        stamp = datetime.fromtimestamp(seconds, UTC)
        if micro:
            return stamp.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
        return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")

    return read


def _int_or_string_fields(data: Any) -> dict[str, Any]:
    if isinstance(data, str):
        return {"f1": 1, "f2": 0, "f3": data}
    return {"f1": 0, "f2": int(data), "f3": ""}


def _int_or_string(msg: Any) -> Any:
    return msg.f3 if msg.f1 == 1 else msg.f2


def _duration_fields(data: Any) -> dict[str, Any]:
    return {"f1": parse_duration(data) if isinstance(data, str) else int(data)}


def _raw_fields(data: Any) -> dict[str, Any]:
    return {"f1": msgspec.json.encode(data)}


def _raw(msg: Any) -> Any:
    if not msg.f1:
        return None
    try:
        return msgspec.json.decode(msg.f1)
    except msgspec.DecodeError:
        raise ProtobufError("raw JSON that does not parse") from None


_PROPS = f"{s.EXTENSIONS}.JSONSchemaProps"


def _or_array_fields(data: Any) -> dict[str, Any]:
    if isinstance(data, list):
        return {"f2": [_fields(_PROPS, item) for item in data]}
    return {"f1": _fields(_PROPS, data)}


def _or_array(msg: Any) -> Any:
    if msg.f2:
        return [_json(_PROPS, item) for item in msg.f2]
    return _json(_PROPS, msg.f1) if msg.HasField("f1") else None


def _or_bool_fields(data: Any) -> dict[str, Any]:
    if isinstance(data, bool):
        return {"f1": data}
    return {"f1": True, "f2": _fields(_PROPS, data)}


def _or_bool(msg: Any) -> Any:
    return _json(_PROPS, msg.f2) if msg.HasField("f2") else msg.f1


def _or_strings_fields(data: Any) -> dict[str, Any]:
    if isinstance(data, list):
        return {"f2": list(data)}
    return {"f1": _fields(_PROPS, data)}


def _or_strings(msg: Any) -> Any:
    if msg.f2:
        return list(msg.f2)
    return _json(_PROPS, msg.f1) if msg.HasField("f1") else None


_TO_FIELDS: dict[str, Callable[[Any], dict[str, Any]]] = {
    s.TIME: _time_fields,
    s.MICRO_TIME: _time_fields,
    s.DURATION: _duration_fields,
    s.QUANTITY: lambda data: {"f1": str(data)},
    s.INT_OR_STRING: _int_or_string_fields,
    s.RAW_EXTENSION: _raw_fields,
    s.FIELDS_V1: _raw_fields,
    s.EXTENSIONS_JSON: _raw_fields,
    s.SCHEMA_OR_ARRAY: _or_array_fields,
    s.SCHEMA_OR_BOOL: _or_bool_fields,
    s.SCHEMA_OR_STRINGS: _or_strings_fields,
}

_FROM_MESSAGE: dict[str, Callable[[Any], Any]] = {
    s.TIME: _time(micro=False),
    s.MICRO_TIME: _time(micro=True),
    s.DURATION: lambda msg: format_duration(msg.f1),
    s.QUANTITY: lambda msg: msg.f1,
    s.INT_OR_STRING: _int_or_string,
    s.RAW_EXTENSION: _raw,
    s.FIELDS_V1: _raw,
    s.EXTENSIONS_JSON: _raw,
    s.SCHEMA_OR_ARRAY: _or_array,
    s.SCHEMA_OR_BOOL: _or_bool,
    s.SCHEMA_OR_STRINGS: _or_strings,
}
