"""The memory store's side of a journal: kinds named by apiVersion and kind, objects packed as
msgpack, a journal that fails answered as the API server answers a storage error."""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.cluster.errors import InternalError
from kubesched.cluster.kinds import Kind
from kubesched.storage.journal import Entry, Journal, JournalError, kind_key

_pack = msgspec.msgpack.Encoder().encode
_DECODERS: dict[type[Any], msgspec.msgpack.Decoder[Any]] = {}

Key = tuple[str, str]


def unpack(cls: type[Any], data: bytes) -> Any:
    found = _DECODERS.get(cls)
    if found is None:
        found = _DECODERS[cls] = msgspec.msgpack.Decoder(cls)
    return found.decode(data)


def key_of(kind: Kind) -> str:
    return kind_key(kind.api_version, kind.kind)


class Durable:
    """Writes each committed change of a store to its journal before the change is visible."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._names: dict[type[Any], str] = {}

    def write(self, kind: Kind, key: Key, rv: int, type_: str, obj: Any) -> None:
        """Journal a change (`obj` as stored, or as deleted); a journal that fails is a 500."""
        name = self._names.get(kind.cls)
        if name is None:
            name = self._names[kind.cls] = key_of(kind)
        try:
            self.journal.append(Entry(rv, name, key[0], key[1], type_, _pack(obj)))
        except JournalError as e:
            raise InternalError(f"storage: {e}") from None
