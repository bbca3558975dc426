"""What kube-apiserver wraps around protobuf: an object is `k8s\\0` followed by a runtime.Unknown
holding its apiVersion, kind and bytes; a watch stream is length-prefixed frames (four bytes, big
endian), each a metav1.WatchEvent whose object is such a wrapped object."""

from __future__ import annotations

import functools

from kubesched.cluster.legacy import PROTOBUF_SAME_AS
from kubesched.storage.protobuf import _wire, schema
from kubesched.storage.protobuf.codec import message

MAGIC = _wire.MAGIC
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_MEDIA_TYPE = f"{MEDIA_TYPE};stream=watch"


@functools.lru_cache(maxsize=1024)
def message_name(api_version: str, kind: str) -> str:
    """The protobuf message of objects of `kind` in `api_version` ("v1", "apps/v1")."""
    api_version = PROTOBUF_SAME_AS.get((api_version, kind), api_version)
    group, _, version = api_version.rpartition("/")
    name = f"{schema.proto_package(group, version)}.{kind}"
    if not schema.known(name) and schema.known(f"{schema.META}.{kind}"):
        return f"{schema.META}.{kind}"  # Status, DeleteOptions...: meta/v1 kinds, in every group's version
    return name


wrap = _wire.wrap  # an object's bytes wrapped, with its apiVersion and kind


def type_meta(obj: object) -> tuple[str, str]:
    """The apiVersion and kind of an object, in its JSON shape or a model ("" for one unset)."""
    if isinstance(obj, dict):
        return obj.get("apiVersion") or "", obj.get("kind") or ""
    return getattr(obj, "apiVersion", None) or "", getattr(obj, "kind", None) or ""


def encode_object(data: object) -> bytes:
    """An object, in its JSON shape or as a model (apiVersion and kind set), wrapped; KeyError
    naming the message of a kind the schema does not have."""
    wrapped = _wire.encode_object(data)
    if wrapped is None:
        raise KeyError(message_name(*type_meta(data)))
    return wrapped


# An object wrapped as `encode_object` wraps it, or None for a kind without a message (custom
# resources, Tables, an object without apiVersion or kind).
encode_known = _wire.encode_object

# A wrapped object in its JSON shape, apiVersion and kind set from the wrapper; ProtobufError for
# bytes that are not one, KeyError naming a kind the schema does not have.
decode_object = _wire.decode_object


@functools.lru_cache(maxsize=1024)
def _message_of(api_version: str, kind: str) -> _wire.Message | None:
    """The tables of the message of `kind` in `api_version`; None when the schema lacks it."""
    if not api_version or not kind:
        return None
    name = message_name(api_version, kind)
    return message(name) if schema.known(name) else None


_wire.kinds(_message_of)

watch_frame = _wire.watch_frame  # one frame: the event's type and its (wrapped) object
read_watch_frame = _wire.read_watch_frame  # the type and wrapped object of a frame without its length
