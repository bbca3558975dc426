"""The Swagger 2.0 document as gnostic's `openapi.v2.Document` protobuf message, which kubectl asks
for first (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`).

Each message is written with its fields in field-number order, as Go's encoder does. Vendor
extensions (`x-...` keys) become NamedAny entries whose Any carries the value as YAML; JSON is YAML,
so the value's JSON text is what is written.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Never, TypeVar

from kubesched.storage.schemas import Json

T = TypeVar("T")

# A field's number and its encoder, of the number and the field's value: what value it takes
# depends on the field (`Never`: no one type), and it is handed only that field's.
Field = tuple[int, Callable[[int, Never], bytes]]


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _len(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _string(field: int, value: str) -> bytes:
    return _len(field, value.encode()) if value else b""


def _bool(field: int, value: bool) -> bytes:
    return _varint(field << 3) + b"\x01" if value else b""


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value) if value else b""


def _double(field: int, value: float) -> bytes:
    return _varint(field << 3 | 1) + struct.pack("<d", value) if value else b""


def _strings(field: int, values: Iterable[str]) -> bytes:
    return b"".join(_len(field, v.encode()) for v in values)


def _any(value: object) -> bytes:
    return _string(2, json.dumps(value, ensure_ascii=False) + "\n")


def _named(field: int, name: str, value: bytes) -> bytes:
    return _len(field, _string(1, name) + _len(2, value))


def _extensions(field: int, obj: Json) -> bytes:
    return b"".join(_named(field, k, _any(v)) for k, v in obj.items() if k.startswith("x-"))


def _message(obj: Json, fields: Mapping[str, Field], extension_field: int, what: str) -> bytes:
    """Encode the keys of `obj` by `fields` (key -> field number, encoder), in field-number order."""
    parts: list[tuple[int, bytes]] = []
    for key, value in obj.items():
        if key.startswith("x-"):
            continue
        if key not in fields:
            raise ValueError(f"{what}: the encoder has no field for {key!r}")
        number, encode = fields[key]
        parts.append((number, encode(number, value)))
    parts.append((extension_field, _extensions(extension_field, obj)))
    parts.sort(key=lambda part: part[0])
    return b"".join(payload for _, payload in parts)


def _sub(encoder: Callable[[T], bytes]) -> Callable[[int, T], bytes]:
    return lambda number, value: _len(number, encoder(value))


def _subs(encoder: Callable[[T], bytes]) -> Callable[[int, Iterable[T]], bytes]:
    return lambda number, values: b"".join(_len(number, encoder(v)) for v in values)


def _schema(obj: Json) -> bytes:
    return _message(obj, _SCHEMA_FIELDS, 31, "Schema")


def _type_item(value: str | list[str]) -> bytes:
    return _strings(1, [value] if isinstance(value, str) else value)


def _items_item(value: Json | list[Json]) -> bytes:
    return b"".join(_len(1, _schema(s)) for s in ([value] if isinstance(value, dict) else value))


def _additional_properties(value: Json | bool) -> bytes:
    if isinstance(value, bool):
        return _varint(2 << 3) + (b"\x01" if value else b"\x00")
    return _len(1, _schema(value))


def _properties(value: Json) -> bytes:
    return b"".join(_named(1, name, _schema(schema)) for name, schema in value.items())


def _external_docs(obj: Json) -> bytes:
    return _message(obj, {"description": (1, _string), "url": (2, _string)}, 3, "ExternalDocs")


_SCHEMA_FIELDS: dict[str, Field] = {
    "$ref": (1, _string),
    "format": (2, _string),
    "title": (3, _string),
    "description": (4, _string),
    "default": (5, _sub(_any)),
    "multipleOf": (6, _double),
    "maximum": (7, _double),
    "exclusiveMaximum": (8, _bool),
    "minimum": (9, _double),
    "exclusiveMinimum": (10, _bool),
    "maxLength": (11, _int),
    "minLength": (12, _int),
    "pattern": (13, _string),
    "maxItems": (14, _int),
    "minItems": (15, _int),
    "uniqueItems": (16, _bool),
    "maxProperties": (17, _int),
    "minProperties": (18, _int),
    "required": (19, _strings),
    "enum": (20, _subs(_any)),
    "additionalProperties": (21, _sub(_additional_properties)),
    "type": (22, _sub(_type_item)),
    "items": (23, _sub(_items_item)),
    "allOf": (24, _subs(_schema)),
    "properties": (25, _sub(_properties)),
    "discriminator": (26, _string),
    "readOnly": (27, _bool),
    "externalDocs": (29, _sub(_external_docs)),
    "example": (30, _sub(_any)),
}

# QueryParameterSubSchema and PathParameterSubSchema share their first fields; past `name` the path
# one lacks allowEmptyValue, so its numbers are one lower.
_QUERY_FIELDS: dict[str, Field] = {
    "required": (1, _bool),
    "in": (2, _string),
    "description": (3, _string),
    "name": (4, _string),
    "allowEmptyValue": (5, _bool),
    "type": (6, _string),
    "format": (7, _string),
    "collectionFormat": (9, _string),
    "default": (10, _sub(_any)),
    "uniqueItems": (20, _bool),
    "enum": (21, _subs(_any)),
}
_PATH_FIELDS: dict[str, Field] = {
    "required": (1, _bool),
    "in": (2, _string),
    "description": (3, _string),
    "name": (4, _string),
    "type": (5, _string),
    "format": (6, _string),
    "collectionFormat": (8, _string),
    "default": (9, _sub(_any)),
    "uniqueItems": (19, _bool),
    "enum": (20, _subs(_any)),
}
_BODY_FIELDS: dict[str, Field] = {
    "description": (1, _string),
    "name": (2, _string),
    "in": (3, _string),
    "required": (4, _bool),
    "schema": (5, _sub(_schema)),
}


def _parameters_item(param: Json) -> bytes:
    """A ParametersItem: a Parameter (body, or a non-body one by where it goes), or a reference."""
    if "$ref" in param:
        return _len(2, _string(1, param["$ref"]))
    where = param.get("in")
    if where == "body":
        parameter = _len(1, _message(param, _BODY_FIELDS, 6, "BodyParameter"))
    elif where == "query":
        parameter = _len(2, _len(3, _message(param, _QUERY_FIELDS, 23, "QueryParameterSubSchema")))
    elif where == "path":
        parameter = _len(2, _len(4, _message(param, _PATH_FIELDS, 22, "PathParameterSubSchema")))
    else:
        raise ValueError(f"parameter {param.get('name')!r}: cannot encode parameters in {where!r}")
    return _len(1, parameter)


def _response_schema(obj: Json) -> bytes:
    return _len(1, _schema(obj))


def _response(obj: Json) -> bytes:
    fields: dict[str, Field] = {"description": (1, _string), "schema": (2, _sub(_response_schema))}
    return _message(obj, fields, 5, "Response")


def _responses_message(obj: Json) -> bytes:
    codes = b"".join(_named(1, code, _len(1, _response(r))) for code, r in obj.items() if not code.startswith("x-"))
    return codes + _extensions(2, obj)


_OPERATION_FIELDS: dict[str, Field] = {
    "tags": (1, _strings),
    "summary": (2, _string),
    "description": (3, _string),
    "externalDocs": (4, _sub(_external_docs)),
    "operationId": (5, _string),
    "produces": (6, _strings),
    "consumes": (7, _strings),
    "parameters": (8, _subs(_parameters_item)),
    "responses": (9, _sub(_responses_message)),
    "schemes": (10, _strings),
    "deprecated": (11, _bool),
}


def _operation_message(obj: Json) -> bytes:
    return _message(obj, _OPERATION_FIELDS, 13, "Operation")


_PATH_ITEM_FIELDS: dict[str, Field] = {
    "$ref": (1, _string),
    "get": (2, _sub(_operation_message)),
    "put": (3, _sub(_operation_message)),
    "post": (4, _sub(_operation_message)),
    "delete": (5, _sub(_operation_message)),
    "options": (6, _sub(_operation_message)),
    "head": (7, _sub(_operation_message)),
    "patch": (8, _sub(_operation_message)),
    "parameters": (9, _subs(_parameters_item)),
}


def _paths(obj: Json) -> bytes:
    items = b"".join(
        _named(2, path, _message(item, _PATH_ITEM_FIELDS, 10, "PathItem"))
        for path, item in obj.items()
        if not path.startswith("x-")
    )
    return _extensions(1, obj) + items


def _info(obj: Json) -> bytes:
    fields: dict[str, Field] = {"title": (1, _string), "version": (2, _string), "description": (3, _string)}
    return _message(obj, fields, 7, "Info")


def _definitions_message(obj: Json) -> bytes:
    return b"".join(_named(1, name, _schema(schema)) for name, schema in obj.items())


_DOCUMENT_FIELDS: dict[str, Field] = {
    "swagger": (1, _string),
    "info": (2, _sub(_info)),
    "host": (3, _string),
    "basePath": (4, _string),
    "schemes": (5, _strings),
    "consumes": (6, _strings),
    "produces": (7, _strings),
    "paths": (8, _sub(_paths)),
    "definitions": (9, _sub(_definitions_message)),
}


def document(obj: Json) -> bytes:
    """The Swagger 2.0 document `obj` as an `openapi.v2.Document`."""
    return _message(obj, _DOCUMENT_FIELDS, 16, "Document")
