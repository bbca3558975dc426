"""The memory store's side of a journal: kinds named by apiVersion and kind, objects packed as
msgpack, a journal that fails answered as the API server answers a storage error."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec
from lightkube.resources import apiextensions_v1

from kubesched.api.objects import Served
from kubesched.cluster.errors import InternalError
from kubesched.cluster.kinds import KINDS, Kind
from kubesched.cluster.protocol import MODIFIED
from kubesched.storage.feed import Change
from kubesched.storage.journal import Entry, Journal, JournalError, Saved, kind_key, ordered, split_kind_key

_pack = msgspec.msgpack.Encoder().encode
_DECODERS: dict[type[Served], msgspec.msgpack.Decoder[Served]] = {}

Key = tuple[str, str]
KindLookup = Callable[[str, str], Kind | None]  # a kind by apiVersion and kind, when served


def unpack(cls: type[Served], data: bytes) -> Served:
    found = _DECODERS.get(cls)
    if found is None:
        found = _DECODERS[cls] = msgspec.msgpack.Decoder(cls)
    return found.decode(data)


def key_of(kind: Kind) -> str:
    return kind_key(kind.api_version, kind.kind)


def saved_objects(saved: Saved, named: KindLookup) -> Iterator[tuple[Kind, Key, Served, int]]:
    """The objects a journal saved, each with its kind, key and version: CRDs first, and each
    kind looked up as its objects come (a CRD taken in serves its kind); the objects of a custom
    kind no longer defined are left out."""
    for row in ordered(saved.objects, key_of(KINDS[apiextensions_v1.CustomResourceDefinition])):
        if (kind := named(*split_kind_key(row.kind))) is not None:
            yield kind, (row.namespace, row.name), unpack(kind.cls, row.data), row.rv


def saved_changes(saved: Saved, named: KindLookup, *, limit: int) -> list[Change]:
    """The newest `limit` changes a journal saved, from the first whose predecessor it kept."""
    changes: list[Change] = []
    for entry in saved.changes[-limit:]:
        if (kind := named(*split_kind_key(entry.kind))) is None:
            continue
        if entry.type == MODIFIED and entry.old is None:
            changes.clear()  # the version it replaced is not kept: resume only after it
            continue
        old = unpack(kind.cls, entry.old) if entry.old is not None else None
        changes.append(Change(entry.rv, kind.cls, entry.type, unpack(kind.cls, entry.data), old))
    return changes


class Durable:
    """Writes each committed change of a store to its journal before the change is visible."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._names: dict[type[Served], str] = {}

    def write(self, kind: Kind, key: Key, rv: int, type_: str, obj: object) -> None:
        """Journal a change (`obj` as stored, or as deleted); a journal that fails is a 500."""
        name = self._names.get(kind.cls)
        if name is None:
            name = self._names[kind.cls] = key_of(kind)
        try:
            self.journal.append(Entry(rv, name, key[0], key[1], type_, _pack(obj)))
        except JournalError as e:
            raise InternalError(f"storage: {e}") from None
