"""Kubernetes objects in protobuf, as kube-apiserver writes them, to and from their JSON shape
(plain dicts, lists and scalars, as `msgspec.to_builtins` makes them and the API server's JSON
path reads them).

Fields are written in number order; a field with a `None` value is left out, as a nil pointer is.
Reading, a field's zero value is dropped where its Go field is a value with `omitempty`, as Go's
JSON encoder drops it (a decoded object then prints as its JSON twin), and kept where it is a
pointer or always written. Messages that stand for a JSON scalar (times, quantities,
int-or-strings, durations, raw JSON, the CRD schema's either-or types) convert to that scalar.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec

from kubesched.cluster.protobuf import schema as s
from kubesched.cluster.protobuf.durations import format_duration, parse_duration

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_VARINT_TYPES = frozenset({"bool", "int32", "int64", "uint32", "uint64"})
_WIRE = {"double": FIXED64, "float": FIXED32, **dict.fromkeys(_VARINT_TYPES, VARINT)}


class ProtobufError(ValueError):
    """Bytes that are not the message they are read as."""


# -- writing --------------------------------------------------------------------------------------


def _put_varint(out: bytearray, value: int) -> None:
    if value < 0:
        value += 1 << 64
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def put_bytes(out: bytearray, number: int, data: bytes | bytearray) -> None:
    _put_varint(out, (number << 3) | LENGTH)
    _put_varint(out, len(data))
    out += data


def _put_scalar(out: bytearray, number: int, type_: str, value: Any) -> None:
    if type_ == "string":
        put_bytes(out, number, str(value).encode())
    elif type_ in _VARINT_TYPES:
        _put_varint(out, number << 3)
        _put_varint(out, int(value))
    elif type_ == "bytes":
        put_bytes(out, number, base64.b64decode(value) if isinstance(value, str) else bytes(value))
    elif type_ == "double":
        _put_varint(out, (number << 3) | FIXED64)
        out += struct.pack("<d", float(value))
    elif type_ == "float":
        _put_varint(out, (number << 3) | FIXED32)
        out += struct.pack("<f", float(value))
    else:
        raise ProtobufError(f"no scalar type {type_}")


def _put_value(out: bytearray, number: int, type_: str, value: Any) -> None:
    if type_ in _WIRE or type_ in ("string", "bytes"):
        _put_scalar(out, number, type_, value)
    else:
        put_bytes(out, number, encode(type_, value))


def encode(name: str, data: Any) -> bytes:
    """The message `name` (a full protobuf name) with the content of `data`, its JSON shape."""
    special = _ENCODE_SPECIAL.get(name)
    if special is not None:
        return special(data)
    msg = s.message(name)
    if msg.is_list:
        (only,) = msg.fields
        data = {only.json: data}
    if not isinstance(data, dict):
        raise ProtobufError(f"{name}: expected an object, got {type(data).__name__}")
    out = bytearray()
    for f in msg.fields:
        if f.inline:
            sub = s.message(f.type)
            put_bytes(out, f.number, encode(f.type, {k: data[k] for k in sub.json_names if k in data}))
            continue
        value = data.get(f.json)
        if value is None:
            continue
        if f.map_key:
            for key in sorted(value):
                entry = bytearray()
                _put_scalar(entry, 1, f.map_key, key)
                if value[key] is not None:
                    _put_value(entry, 2, f.type, value[key])
                elif f.type not in _WIRE and f.type not in ("string", "bytes"):
                    put_bytes(entry, 2, b"")  # a zero message value is written, as Go writes it
                put_bytes(out, f.number, entry)
        elif f.repeated:
            for item in value:
                _put_value(out, f.number, f.type, item)
        else:
            _put_value(out, f.number, f.type, value)
    return bytes(out)


# -- reading --------------------------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    byte = buf[pos]
    if byte < 0x80:
        return byte, pos + 1
    result, shift = byte & 0x7F, 7
    while True:
        pos += 1
        byte = buf[pos]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos + 1
        shift += 7


def read_fields(buf: bytes, start: int, end: int) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) of each field: an int, or (start, end) of a length-delimited one."""
    found: list[tuple[int, int, Any]] = []
    pos = start
    value: Any
    try:
        while pos < end:
            key, pos = _varint(buf, pos)
            wire = key & 7
            if wire == VARINT:
                value, pos = _varint(buf, pos)
            elif wire == LENGTH:
                length, pos = _varint(buf, pos)
                value = (pos, pos + length)
                pos += length
            elif wire == FIXED64:
                value, pos = buf[pos : pos + 8], pos + 8
            elif wire == FIXED32:
                value, pos = buf[pos : pos + 4], pos + 4
            else:
                raise ProtobufError(f"wire type {wire} is not supported")
            found.append((key >> 3, wire, value))
    except IndexError:
        raise ProtobufError("message ends inside a field") from None
    if pos != end:
        raise ProtobufError("message ends inside a field")
    return found


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(buf: bytes, type_: str, wire: int, value: Any) -> Any:
    if type_ == "string":
        return buf[value[0] : value[1]].decode(errors="replace")
    if type_ == "bool":
        return value != 0
    if type_ in ("int32", "int64"):
        return _signed(value)
    if type_ in ("uint32", "uint64"):
        return value
    if type_ == "bytes":
        return base64.b64encode(buf[value[0] : value[1]]).decode()
    if type_ == "double":
        return struct.unpack("<d", value)[0]
    if type_ == "float":
        return struct.unpack("<f", value)[0]
    raise ProtobufError(f"no scalar type {type_}")


def _packed(buf: bytes, type_: str, span: tuple[int, int]) -> list[Any]:
    """The items of a packed repeated scalar field."""
    items, pos = [], span[0]
    while pos < span[1]:
        if type_ in _VARINT_TYPES:
            value, pos = _varint(buf, pos)
            items.append(_scalar(buf, type_, VARINT, value))
        else:
            width = 8 if type_ == "double" else 4
            items.append(_scalar(buf, type_, FIXED64, buf[pos : pos + width]))
            pos += width
    return items


def _zero(value: Any) -> bool:
    return value == "" or value is False or (value == 0 and not isinstance(value, bool))


def _read_value(buf: bytes, type_: str, wire: int, value: Any) -> Any:
    if type_ in _WIRE or type_ in ("string", "bytes"):
        return _scalar(buf, type_, wire, value)
    if wire != LENGTH:
        raise ProtobufError(f"{type_}: expected a message")
    return decode(type_, buf, value[0], value[1])


def decode(name: str, buf: bytes, start: int = 0, end: int | None = None) -> Any:
    """The JSON shape of the message `name` in `buf[start:end]`."""
    end = len(buf) if end is None else end
    special = _DECODE_SPECIAL.get(name)
    if special is not None:
        return special(buf, read_fields(buf, start, end))
    msg = s.message(name)
    out: dict[str, Any] = {}
    for number, wire, value in read_fields(buf, start, end):
        f = msg.by_number.get(number)
        if f is None:
            continue  # a field this schema does not know: skipped, as proto2 readers skip it
        if f.inline:
            out.update(decode(f.type, buf, value[0], value[1]))
        elif f.map_key:
            entry = {n: (w, v) for n, w, v in read_fields(buf, value[0], value[1])}
            key = _scalar(buf, f.map_key, *entry[1]) if 1 in entry else _scalar(buf, f.map_key, VARINT, 0)
            item = _read_value(buf, f.type, *entry[2]) if 2 in entry else None
            out.setdefault(f.json, {})[key] = item
        elif f.repeated:
            items = out.setdefault(f.json, [])
            if wire == LENGTH and (f.type in _WIRE):
                items += _packed(buf, f.type, value)
            else:
                items.append(_read_value(buf, f.type, wire, value))
        else:
            item = _read_value(buf, f.type, wire, value)
            if item is None or (not f.keep_zero and _zero(item)):
                out.pop(f.json, None)
            else:
                out[f.json] = item
    if msg.is_list:
        return out.get(msg.fields[0].json, [])
    return out


# -- messages that are JSON scalars ---------------------------------------------------------------


def _ints(fields: list[tuple[int, int, Any]]) -> dict[int, int]:
    return {n: v for n, w, v in fields if w == VARINT}


def _spans(fields: list[tuple[int, int, Any]]) -> dict[int, tuple[int, int]]:
    return {n: v for n, w, v in fields if w == LENGTH}


def _stamp(text: str) -> datetime:
    stamp = datetime.fromisoformat(text)
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def _encode_time(data: Any) -> bytes:
    stamp = _stamp(data) if isinstance(data, str) else data
    seconds = int(stamp.timestamp() // 1)
    out = bytearray()
    _put_scalar(out, 1, "int64", seconds)
    _put_scalar(out, 2, "int32", stamp.microsecond * 1000)
    return bytes(out)


def _decode_time(micro: bool) -> Callable[[bytes, list[tuple[int, int, Any]]], Any]:
    def read(buf: bytes, fields: list[tuple[int, int, Any]]) -> Any:
        ints = _ints(fields)
        seconds, nanos = _signed(ints.get(1, 0)), ints.get(2, 0)
        if seconds == 0 and nanos == 0:
            return None  # Go's zero time: null in JSON
        stamp = datetime.fromtimestamp(seconds, UTC)
        if micro:
            return stamp.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
        return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")

    return read


def _one_string(data: Any) -> bytes:
    out = bytearray()
    _put_scalar(out, 1, "string", str(data))
    return bytes(out)


def _read_one_string(buf: bytes, fields: list[tuple[int, int, Any]]) -> str:
    span = _spans(fields).get(1)
    return buf[span[0] : span[1]].decode() if span else ""


def _encode_int_or_string(data: Any) -> bytes:
    out = bytearray()
    if isinstance(data, str):
        _put_scalar(out, 1, "int64", 1)
        _put_scalar(out, 2, "int32", 0)
        _put_scalar(out, 3, "string", data)
    else:
        _put_scalar(out, 1, "int64", 0)
        _put_scalar(out, 2, "int32", int(data))
        _put_scalar(out, 3, "string", "")
    return bytes(out)


def _decode_int_or_string(buf: bytes, fields: list[tuple[int, int, Any]]) -> Any:
    ints = _ints(fields)
    if ints.get(1, 0) == 1:
        return _read_one_string(buf, [(1, w, v) for n, w, v in fields if n == 3])
    return _signed(ints.get(2, 0))


def _encode_duration(data: Any) -> bytes:
    out = bytearray()
    _put_scalar(out, 1, "int64", parse_duration(data) if isinstance(data, str) else int(data))
    return bytes(out)


def _decode_duration(buf: bytes, fields: list[tuple[int, int, Any]]) -> str:
    return format_duration(_signed(_ints(fields).get(1, 0)))


def _encode_raw(data: Any) -> bytes:
    out = bytearray()
    put_bytes(out, 1, msgspec.json.encode(data))
    return bytes(out)


def _decode_raw(buf: bytes, fields: list[tuple[int, int, Any]]) -> Any:
    span = _spans(fields).get(1)
    if span is None or span[0] == span[1]:
        return None
    try:
        return msgspec.json.decode(buf[span[0] : span[1]])
    except msgspec.DecodeError:
        raise ProtobufError("raw JSON that does not parse") from None


_PROPS = f"{s.EXTENSIONS}.JSONSchemaProps"


def _encode_or_array(data: Any) -> bytes:
    out = bytearray()
    if isinstance(data, list):
        for item in data:
            put_bytes(out, 2, encode(_PROPS, item))
    else:
        put_bytes(out, 1, encode(_PROPS, data))
    return bytes(out)


def _decode_or_array(buf: bytes, fields: list[tuple[int, int, Any]]) -> Any:
    items = [decode(_PROPS, buf, *v) for n, w, v in fields if n == 2]
    if items:
        return items
    span = _spans(fields).get(1)
    return decode(_PROPS, buf, *span) if span else None


def _encode_or_bool(data: Any) -> bytes:
    out = bytearray()
    if isinstance(data, bool):
        _put_scalar(out, 1, "bool", data)
    else:
        _put_scalar(out, 1, "bool", True)
        put_bytes(out, 2, encode(_PROPS, data))
    return bytes(out)


def _decode_or_bool(buf: bytes, fields: list[tuple[int, int, Any]]) -> Any:
    span = _spans(fields).get(2)
    if span is not None:
        return decode(_PROPS, buf, *span)
    return _ints(fields).get(1, 0) != 0


def _encode_or_strings(data: Any) -> bytes:
    out = bytearray()
    if isinstance(data, list):
        for item in data:
            _put_scalar(out, 2, "string", item)
    else:
        put_bytes(out, 1, encode(_PROPS, data))
    return bytes(out)


def _decode_or_strings(buf: bytes, fields: list[tuple[int, int, Any]]) -> Any:
    items = [buf[v[0] : v[1]].decode() for n, w, v in fields if n == 2]
    if items:
        return items
    span = _spans(fields).get(1)
    return decode(_PROPS, buf, *span) if span else None


_ENCODE_SPECIAL: dict[str, Callable[[Any], bytes]] = {
    s.TIME: _encode_time,
    s.MICRO_TIME: _encode_time,
    s.DURATION: _encode_duration,
    s.QUANTITY: _one_string,
    s.INT_OR_STRING: _encode_int_or_string,
    s.RAW_EXTENSION: _encode_raw,
    s.FIELDS_V1: _encode_raw,
    s.EXTENSIONS_JSON: _encode_raw,
    s.SCHEMA_OR_ARRAY: _encode_or_array,
    s.SCHEMA_OR_BOOL: _encode_or_bool,
    s.SCHEMA_OR_STRINGS: _encode_or_strings,
}

_DECODE_SPECIAL: dict[str, Callable[[bytes, list[tuple[int, int, Any]]], Any]] = {
    s.TIME: _decode_time(micro=False),
    s.MICRO_TIME: _decode_time(micro=True),
    s.DURATION: _decode_duration,
    s.QUANTITY: _read_one_string,
    s.INT_OR_STRING: _decode_int_or_string,
    s.RAW_EXTENSION: _decode_raw,
    s.FIELDS_V1: _decode_raw,
    s.EXTENSIONS_JSON: _decode_raw,
    s.SCHEMA_OR_ARRAY: _decode_or_array,
    s.SCHEMA_OR_BOOL: _decode_or_bool,
    s.SCHEMA_OR_STRINGS: _decode_or_strings,
}
