"""What kube-apiserver wraps around protobuf: an object is `k8s\\0` followed by a runtime.Unknown
holding its apiVersion, kind and bytes; a watch stream is length-prefixed frames (four bytes, big
endian), each a metav1.WatchEvent whose object is such a wrapped object."""

from __future__ import annotations

import struct
from typing import Any

from google.protobuf.message import DecodeError

from kubesched.cluster.legacy import PROTOBUF_SAME_AS
from kubesched.cluster.protobuf import schema
from kubesched.cluster.protobuf.codec import ProtobufError, decode, encode
from kubesched.cluster.protobuf.messages import message_class

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


UNKNOWN = f"{schema.RUNTIME}.Unknown"
WATCH_EVENT = f"{schema.META}.WatchEvent"


def wrap(api_version: str, kind: str, raw: bytes) -> bytes:
    unknown = message_class(UNKNOWN)(f1={"f1": api_version, "f2": kind}, f2=raw, f3="", f4="")
    return MAGIC + unknown.SerializeToString()


def unwrap(data: bytes) -> tuple[str, str, bytes]:
    """The apiVersion, kind and bytes of a wrapped object."""
    if not data.startswith(MAGIC):
        raise ProtobufError("the data does not start with the protobuf prefix k8s\\x00")
    unknown = _read(UNKNOWN, data[len(MAGIC) :])
    return unknown.f1.f1, unknown.f1.f2, unknown.f2


def _read(name: str, data: bytes) -> Any:
    try:
        return message_class(name).FromString(data)
    except DecodeError:
        raise ProtobufError(f"the bytes are not a protobuf {name.rpartition('.')[2]}") from None


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
    event = message_class(WATCH_EVENT)(f1=event_type, f2={"f1": wrapped}).SerializeToString()
    return struct.pack(">I", len(event)) + event


def read_watch_frame(frame: bytes) -> tuple[str, bytes]:
    """The type and wrapped object of one frame's event (without its length prefix)."""
    event = _read(WATCH_EVENT, frame)
    return event.f1, event.f2.f1
