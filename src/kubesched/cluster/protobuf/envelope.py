"""What kube-apiserver wraps around protobuf: an object is `k8s\\0` followed by a runtime.Unknown
holding its apiVersion, kind and bytes; a watch stream is length-prefixed frames (four bytes, big
endian), each a metav1.WatchEvent whose object is such a wrapped object."""

from __future__ import annotations

import struct
from typing import Any

from kubesched.cluster.legacy import PROTOBUF_SAME_AS
from kubesched.cluster.protobuf import schema
from kubesched.cluster.protobuf.codec import ProtobufError, decode, encode, put_bytes, read_fields

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_MEDIA_TYPE = f"{MEDIA_TYPE};stream=watch"


def message_name(api_version: str, kind: str) -> str:
    """The protobuf message of objects of `kind` in `api_version` ("v1", "apps/v1")."""
    api_version = PROTOBUF_SAME_AS.get((api_version, kind), api_version)
    group, _, version = api_version.rpartition("/")
    name = f"{schema.proto_package(group, version)}.{kind}"
    if not schema.known(name) and schema.known(f"{schema.META}.{kind}"):
        return f"{schema.META}.{kind}"  # Status, DeleteOptions...: meta/v1 kinds, in every group's version
    return name


def wrap(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = bytearray()
    put_bytes(type_meta, 1, api_version.encode())
    put_bytes(type_meta, 2, kind.encode())
    out = bytearray(MAGIC)
    put_bytes(out, 1, type_meta)
    put_bytes(out, 2, raw)
    put_bytes(out, 3, b"")  # contentEncoding
    put_bytes(out, 4, b"")  # contentType
    return bytes(out)


def unwrap(data: bytes) -> tuple[str, str, bytes]:
    """The apiVersion, kind and bytes of a wrapped object."""
    if not data.startswith(MAGIC):
        raise ProtobufError("the data does not start with the protobuf prefix k8s\\x00")
    api_version = kind = ""
    raw = b""
    for number, _, value in read_fields(data, len(MAGIC), len(data)):
        if number == 1:
            for inner, _, span in read_fields(data, value[0], value[1]):
                text = data[span[0] : span[1]].decode()
                if inner == 1:
                    api_version = text
                elif inner == 2:
                    kind = text
        elif number == 2:
            raw = data[value[0] : value[1]]
    return api_version, kind, raw


def encode_object(data: dict[str, Any]) -> bytes:
    """An object in its JSON shape (apiVersion and kind set), wrapped."""
    api_version, kind = data.get("apiVersion") or "", data.get("kind") or ""
    body = {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}
    return wrap(api_version, kind, encode(message_name(api_version, kind), body))


def decode_object(data: bytes) -> dict[str, Any]:
    """A wrapped object in its JSON shape, apiVersion and kind set from the wrapper; ProtobufError
    for bytes that are not one, KeyError naming a kind the schema does not have."""
    api_version, kind, raw = unwrap(data)
    if not kind:
        raise ProtobufError("the object has no kind")
    name = message_name(api_version, kind)
    if not schema.known(name):
        raise KeyError(f"{api_version}, Kind={kind}")
    body = decode(name, raw)
    return {"apiVersion": api_version, "kind": kind, **body}


def watch_frame(event_type: str, wrapped: bytes) -> bytes:
    """One frame of a protobuf watch stream: the event's type and its (wrapped) object."""
    raw_extension = bytearray()
    put_bytes(raw_extension, 1, wrapped)
    event = bytearray()
    put_bytes(event, 1, event_type.encode())
    put_bytes(event, 2, raw_extension)
    return struct.pack(">I", len(event)) + bytes(event)


def read_watch_frame(frame: bytes) -> tuple[str, bytes]:
    """The type and wrapped object of one frame's event (without its length prefix)."""
    event_type, wrapped = "", b""
    for number, _, span in read_fields(frame, 0, len(frame)):
        if number == 1:
            event_type = frame[span[0] : span[1]].decode()
        elif number == 2:
            for inner, _, raw in read_fields(frame, span[0], span[1]):
                if inner == 1:
                    wrapped = frame[raw[0] : raw[1]]
    return event_type, wrapped
