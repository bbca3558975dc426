"""Where a store's changes go to outlive the process: the contract the memory store writes
through, and what it reads back at start.

The store keeps every object in memory and answers reads from there; a journal receives each
committed change before anyone hears of it (no watch, no HTTP response), so a change a client was
told about is on disk. At start the store asks the journal for what it saved: the objects, the
newest changes (so watches resume across a restart) and the last resourceVersion given out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from kubesched.cluster.protocol import DELETED, MODIFIED
from kubesched.storage.journal.errors import JournalError


@dataclass(frozen=True)
class Entry:
    """One change: the object's kind as `apiVersion/Kind`, its key, the version the change made,
    ADDED/MODIFIED/DELETED, and the object (as deleted, for DELETED) encoded as msgpack. Read back,
    a MODIFIED entry carries the version it replaced in `old`."""

    rv: int
    kind: str
    namespace: str
    name: str
    type: str
    data: bytes
    old: bytes | None = None


@dataclass
class Saved:
    """What a journal holds: each object's latest entry, the newest changes in order (those a
    watch may resume over), and the last version given out."""

    rv: int
    objects: list[Entry] = field(default_factory=list)
    changes: list[Entry] = field(default_factory=list)


class Journal(Protocol):
    """A durable home for one store's changes (SQLite, etcd)."""

    def load(self) -> Saved | None:
        """What was saved, or None for a journal never sealed (never written, or its store's first
        objects not all written)."""
        ...

    def begin(self, first_rv: int) -> None:
        """Drop anything unsealed and record that a new, empty store counts versions from `first_rv`."""
        ...

    def seal(self) -> None:
        """Record that the new store's first objects are all written: `load` returns it from now on."""
        ...

    def append(self, entry: Entry) -> None:
        """Store one change durably, in one transaction, before returning."""
        ...

    def close(self) -> None: ...


def saved(entries: Iterable[Entry], *, first: int, compacted: int) -> Saved:
    """What a journal holds, from its entries in version order: each object's latest entry (a
    deletion drops it), and the changes after `compacted`, a MODIFIED one with the entry it
    replaced as `old`; the last version is `first` when there are none."""
    latest: dict[tuple[str, str, str], Entry] = {}
    changes: list[Entry] = []
    rv = first
    for entry in entries:
        key = (entry.kind, entry.namespace, entry.name)
        if entry.rv > compacted:
            before = latest.get(key)
            old = before.data if entry.type == MODIFIED and before is not None else None
            changes.append(dataclasses.replace(entry, old=old))
        latest[key] = entry
        rv = entry.rv
    return Saved(rv=rv, objects=[e for e in latest.values() if e.type != DELETED], changes=changes)


def kind_key(api_version: str, kind: str) -> str:
    return f"{api_version}/{kind}"


def split_kind_key(key: str) -> tuple[str, str]:
    """(apiVersion, kind) of a `kind_key`."""
    api_version, _, kind = key.rpartition("/")
    return api_version, kind


def ordered(entries: Iterable[Entry], first: str) -> list[Entry]:
    """Entries of kind `first` before the others, each group by version (a CRD must be served
    before its objects are)."""
    return sorted(entries, key=lambda e: (e.kind != first, e.rv))


__all__ = ["Entry", "Journal", "JournalError", "Saved", "kind_key", "ordered", "saved", "split_kind_key"]
