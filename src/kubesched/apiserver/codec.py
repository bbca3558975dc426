"""Request bodies to typed objects and back, with the API server's decoding errors."""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from typing import TypeGuard

import msgspec
import yaml

from kubesched.api.objects import Model, Served
from kubesched.apiserver.jsontypes import JsonObject
from kubesched.cluster.errors import BadRequest, UnsupportedMediaType
from kubesched.cluster.kinds import Kind
from kubesched.storage.protobuf import envelope
from kubesched.storage.protobuf.codec import ProtobufError
from kubesched.storage.protobuf.envelope import MEDIA_TYPE as PROTOBUF
from kubesched.storage.typecheck import type_error

JSON_TYPES = ("application/json", "")
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml")
ACCEPTED_BODY_TYPES = f"application/json, application/yaml, {PROTOBUF}"


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def parse_body(raw: bytes, content_type: str) -> object:
    """A JSON, YAML or protobuf body as plain data; anything else is 415, malformed input 400."""
    kind = media_type(content_type)
    if kind in JSON_TYPES or kind.endswith("+json"):
        return decode_json(raw)
    if kind == PROTOBUF:
        return decode_protobuf(raw)
    if kind in YAML_TYPES or kind.endswith("+yaml"):
        try:
            return _replace_lone_surrogates(yaml.safe_load(raw))
        except yaml.YAMLError as e:
            raise BadRequest(f"the body of the request could not be decoded: {e}") from None
        except RecursionError:
            raise BadRequest("the body of the request could not be decoded: nested too deeply") from None
    raise UnsupportedMediaType(
        f"the body of the request was in an unknown format - accepted media types include: {ACCEPTED_BODY_TYPES}"
    )


def decode_protobuf(raw: bytes) -> JsonObject:
    """A protobuf body (kube-apiserver's envelope) as plain data in its JSON shape; 400 when it is
    not one, or is of a kind without a protobuf form (custom resources)."""
    try:
        return envelope.decode_object(raw)
    except ProtobufError as e:
        raise BadRequest(f"the body of the request could not be decoded: {e}") from None
    except KeyError as e:
        raise BadRequest(f"the body of the request could not be decoded: no protobuf kind {e.args[0]}") from None


# `body` (a struct or plain data with apiVersion and kind) in protobuf, or None when its kind has no
# protobuf form (custom resources, Tables).
encode_protobuf = envelope.encode_known


def decode_json(raw: bytes) -> object:
    """A JSON body as plain data; malformed or too deeply nested input is 400."""
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as e:
        raise BadRequest(f"the body of the request could not be decoded: {e}") from None
    except RecursionError:
        raise BadRequest("the body of the request could not be decoded: nested too deeply") from None
    return _replace_lone_surrogates(data) if _SURROGATE_ESCAPE.search(raw) else data


# A \uD800-\uDFFF escape: one without its pair decodes to a character no UTF-8 text can hold;
# Go's decoder (kube-apiserver's) makes it U+FFFD, and so does this one.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_lone_surrogates(data: object) -> object:
    if isinstance(data, str):
        return _SURROGATE.sub("\ufffd", data)
    if isinstance(data, list):
        return [_replace_lone_surrogates(item) for item in data]
    if isinstance(data, dict):
        return {_replace_lone_surrogates(k): _replace_lone_surrogates(v) for k, v in data.items()}
    return data


def to_object(kind: Kind, data: object, *, strict: bool) -> tuple[Served, list[str]]:
    """Convert plain data to `kind`'s struct. Returns the object and the unknown fields found;
    with `strict` those are a 400 error as with `fieldValidation=Strict`."""
    if not isinstance(data, Mapping):
        raise BadRequest(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: not an object')
    expected = (kind.api_version, kind.kind)
    got = (data.get("apiVersion", expected[0]), data.get("kind", expected[1]))
    if got != expected:
        raise BadRequest(
            f"the API version in the data ({got[0]}) does not match the expected API version ({expected[0]})"
            if got[0] != expected[0]
            else f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: wrong kind {got[1]!r}'
        )
    unknown = checked_unknown_fields(data, kind.cls, strict=strict)
    if (problem := type_error(data, kind.cls)) is not None:
        raise BadRequest(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: {problem}')
    try:
        return msgspec.convert(data, kind.cls, strict=False), unknown
    except msgspec.ValidationError as e:
        raise BadRequest(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: {e}') from None


Shape = tuple[str, type[Model]] | None  # ("struct" | "list" | "map", the struct class) or nothing to check
_FIELDS: dict[type[Model], dict[str, Shape]] = {}


def _fields(cls: type[Model]) -> dict[str, Shape]:
    """A struct's field names and what each holds that has fields of its own (resolved once per class)."""
    fields = _FIELDS.get(cls)
    if fields is None:
        hints = typing.get_type_hints(cls)
        fields = _FIELDS[cls] = {name: _shape(hints.get(name)) for name in cls.__struct_fields__}
    return fields


def _shape(tp: object) -> Shape:
    held = _struct_of(tp)
    if held is None:
        return None
    what, inner = held
    if what != "struct":
        inner_held = _struct_of(inner)
        inner = inner_held[1] if inner_held is not None and inner_held[0] == "struct" else None
    return (what, inner) if _is_struct(inner) else None


def _is_struct(tp: object) -> TypeGuard[type[msgspec.Struct]]:
    return isinstance(tp, type) and issubclass(tp, msgspec.Struct)


def _struct_of(tp: object) -> tuple[str, object] | None:
    """("struct", cls), ("list", inner), ("map", inner) or None for what `tp` holds."""
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        for arg in typing.get_args(tp):
            if arg is not type(None):
                return _struct_of(arg)
        return None
    if _is_struct(tp):
        return ("struct", tp)
    args = typing.get_args(tp)
    if origin is list and args:
        return ("list", args[0])
    if origin is dict and len(args) == 2:
        return ("map", args[1])
    return None  # a bare Dict (the CRD status subresource), or anything else: no field to check


def checked_unknown_fields(data: object, cls: type[Model], *, strict: bool) -> list[str]:
    """The fields of `data` that `cls` does not have; with `strict` (fieldValidation=Strict) any
    is a 400 naming them all."""
    unknown = unknown_fields(data, cls) if isinstance(data, Mapping) else []
    if strict and unknown:
        listed = ", ".join(f'unknown field "{f}"' for f in unknown)
        raise BadRequest(f"strict decoding error: {listed}")
    return unknown


def unknown_fields(data: object, cls: type[Model], prefix: str = "") -> list[str]:
    """Paths of keys in `data` that `cls` does not declare, recursively."""
    found: list[str] = []
    if not isinstance(data, Mapping):
        return found
    fields = _fields(cls)
    for key, value in data.items():
        if key not in fields:
            found.append(f"{prefix}{key}")
            continue
        shape = fields[key]
        if shape is None:
            continue
        what, inner = shape
        if what == "struct":
            found += unknown_fields(value, inner, f"{prefix}{key}.")
        elif what == "list" and isinstance(value, list):
            for i, item in enumerate(value):
                found += unknown_fields(item, inner, f"{prefix}{key}[{i}].")
        elif what == "map" and isinstance(value, Mapping):
            for k, item in value.items():
                found += unknown_fields(item, inner, f"{prefix}{key}[{k}].")
    return found
