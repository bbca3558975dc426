from collections.abc import Callable, Mapping
from typing import Any

class ProtobufError(ValueError): ...

class Field:
    number: int
    json: str

class Message:
    name: str
    fields: list[Field]
    special: int
    is_list: bool

SCALAR_TYPES: dict[str, int]
SPECIAL_KINDS: dict[str, int]

def build(
    data: Mapping[str, Any], specials: Mapping[str, str], props_name: str, callbacks: Mapping[str, Callable[..., Any]]
) -> dict[str, Message]: ...
def decode(
    m: Message, data: bytes, start: int = 0, end: int | None = None, into: dict[str, Any] | None = None
) -> Any: ...
def encode(m: Message, data: Any) -> bytes: ...

MAGIC: bytes

def wrap(api_version: str, kind: str, raw: bytes) -> bytes: ...
def kinds(resolve: Callable[[str, str], Message | None]) -> None: ...
def encode_object(data: Any) -> bytes | None: ...
def decode_object(data: bytes) -> dict[str, Any]: ...
def watch_frame(event_type: str, wrapped: bytes) -> bytes: ...
def read_watch_frame(frame: bytes) -> tuple[str, bytes]: ...
