"""Where a store's changes go to outlive the process: the contract the memory store writes
through, and what it reads back at start.

The store keeps every object in memory and answers reads from there; a journal receives each
committed change before anyone hears of it (no watch, no HTTP response), so a change a client was
told about is on disk. At start the store asks the journal for what it saved: the objects, the
newest changes (so watches resume across a restart) and the last resourceVersion given out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from kubesched.cluster.journal.errors import JournalError


@dataclass(frozen=True)
class Row:
    """One stored object: its kind as `apiVersion/Kind`, key, version and msgpack encoding."""

    kind: str
    namespace: str
    name: str
    rv: int
    data: bytes


@dataclass(frozen=True)
class Entry:
    """One change of the history: `old` is the previous version's encoding for MODIFIED."""

    rv: int
    kind: str
    type: str
    data: bytes
    old: bytes | None = None


@dataclass
class Saved:
    """What a journal holds: the objects, the newest changes in order, and the version counter."""

    rv: int
    objects: list[Row] = field(default_factory=list)
    changes: list[Entry] = field(default_factory=list)


class Journal(Protocol):
    """A durable home for one store's changes (SQLite, etcd)."""

    def load(self) -> Saved | None:
        """What was saved, or None for a journal that has never been written."""
        ...

    def begin(self, first_rv: int) -> None:
        """Record that a new, empty store counts versions from `first_rv`."""
        ...

    def put(self, row: Row, entry: Entry) -> None:
        """Store a created or updated object and its change, durably, in one transaction."""
        ...

    def remove(self, kind: str, namespace: str, name: str, entry: Entry) -> None:
        """Delete an object and store its DELETED change, in one transaction."""
        ...

    def close(self) -> None: ...


def kind_key(api_version: str, kind: str) -> str:
    return f"{api_version}/{kind}"


def split_kind_key(key: str) -> tuple[str, str]:
    """(apiVersion, kind) of a `kind_key`."""
    api_version, _, kind = key.rpartition("/")
    return api_version, kind


def ordered(rows: Iterable[Row], first: str) -> list[Row]:
    """Rows of kind `first` before the others, each group by version (a CRD must be served before
    its objects are)."""
    return sorted(rows, key=lambda r: (r.kind != first, r.rv))


__all__ = ["Entry", "Journal", "JournalError", "Row", "Saved", "kind_key", "ordered", "split_kind_key"]
