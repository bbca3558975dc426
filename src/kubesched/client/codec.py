"""JSON replies straight into lightkube's structs with msgspec, one decoder per type."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import msgspec

from kubesched.api.objects import Model
from kubesched.cluster.codec import decoder
from kubesched.cluster.errors import InternalError

T = TypeVar("T")
M = TypeVar("M", bound=Model)


class ListMeta(msgspec.Struct):
    resourceVersion: str = ""
    continue_: str | None = msgspec.field(name="continue", default=None)
    remainingItemCount: int | None = None


class ListBody(msgspec.Struct, Generic[T]):
    """Any `<Kind>List` reply, typed by its items."""

    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[T] | None = None


class TypeMeta(msgspec.Struct):
    """Enough of a reply to tell a `Status` from an object."""

    kind: str | None = None


class RawEvent(msgspec.Struct):
    """One watch line; `object` is decoded once its type says what it holds."""

    type: str
    object: msgspec.Raw


decode_type = msgspec.json.Decoder(TypeMeta).decode
# Any: msgspec's type for a JSON object of any values (`object` it would take for a custom type)
decode_dict: Callable[[bytes], dict[str, object]] = msgspec.json.Decoder(dict[str, Any]).decode
decode_event_lines = msgspec.json.Decoder(RawEvent).decode_lines
_raw_list = msgspec.json.Decoder(ListBody[msgspec.Raw])


def decode(data: bytes | msgspec.Raw, cls: type[M]) -> M:
    """One object of `cls`. A reply that does not fit is the server's error (500), not the caller's."""
    try:
        try:
            found: M = decoder(cls).decode(data)
        except msgspec.ValidationError:
            return _lenient(data, cls)
    except msgspec.DecodeError as e:
        raise _malformed(cls, e) from None
    return found


def decode_list(data: bytes, cls: type[M]) -> ListBody[M]:
    """A list reply with items of `cls`; items are decoded one by one only when one needs leniency."""
    try:
        page: ListBody[M] = decoder(ListBody[cls]).decode(data)  # type: ignore[valid-type]
    except msgspec.ValidationError:
        raw = _raw_list.decode(data)
        page = ListBody(metadata=raw.metadata, items=[decode(item, cls) for item in raw.items or []])
    except msgspec.DecodeError as e:
        raise _malformed(cls, e) from None
    return page


def is_status(body: bytes) -> bool:
    """Whether a reply is a `Status` (some deletes answer with one instead of the object)."""
    return decode_type(body).kind == "Status"


_NULL = re.compile(r"Expected `(\w+)`, got `null` - at `\$(.*)`")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_STAND_INS: dict[str, object] = {
    "datetime": "1970-01-01T00:00:00Z",
    "str": "",
    "int": 0,
    "float": 0.0,
    "bool": False,
    "array": [],
    "object": {},
}
_MAX_NULLS = 64


def _lenient(data: bytes | msgspec.Raw, cls: type[M]) -> M:
    """Decode an object holding `null` where lightkube's model requires a value (the API server writes
    zero values so: an Event converted from core/v1 has `"eventTime": null`). Those fields are None
    in the result, as on the objects the memory backend holds."""
    plain = msgspec.json.decode(data)
    nulls: list[list[str | int]] = []
    while True:
        try:
            obj = msgspec.convert(plain, cls)
            break
        except msgspec.ValidationError as e:
            match = _NULL.fullmatch(str(e))
            steps = _steps(match[2]) if match else None
            if match is None or steps is None or match[1] not in _STAND_INS or len(nulls) == _MAX_NULLS:
                raise
            node = plain
            for step in steps[:-1]:
                node = node[step]
            node[steps[-1]] = _STAND_INS[match[1]]
            nulls.append(steps)
    for steps in nulls:
        at: object = obj
        for step in steps[:-1]:
            at = at[step] if isinstance(at, list) and isinstance(step, int) else getattr(at, _attribute(at, str(step)))
        setattr(at, _attribute(at, str(steps[-1])), None)
    return obj


def _steps(path: str) -> list[str | int] | None:
    """`.spec.containers[0].name` as ["spec", "containers", 0, "name"]; None for what is not that simple."""
    steps: list[str | int] = []
    end = 0
    for match in _STEP.finditer(path):
        if match.start() != end:
            return None
        steps.append(match[1] if match[1] is not None else int(match[2]))
        end = match.end()
    return steps if steps and end == len(path) and isinstance(steps[-1], str) else None


def _attribute(struct: object, json_name: str) -> str:
    """The attribute a model encodes under `json_name` (the name itself for what is no model)."""
    if not isinstance(struct, msgspec.Struct):
        return json_name
    for field in msgspec.structs.fields(struct):
        if field.encode_name == json_name:
            return field.name
    return json_name


def _malformed(cls: type[Model], error: Exception) -> InternalError:
    return InternalError(f"the server's reply is not a valid {cls.__name__}: {error}")
