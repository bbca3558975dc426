"""A journal in an embedded SQLite database, as k3s keeps its cluster through kine.

One file, `state.db`, in write-ahead-log mode; each change is one transaction, committed before the
store answers. With `synchronous=NORMAL` (the default) a committed transaction survives the
process being killed at any moment; `FULL` also survives the machine losing power, at an fsync
per write. A lock file keeps a second server off the same directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from kubesched.cluster.journal import Entry, Row, Saved
from kubesched.cluster.journal.errors import JournalError

SCHEMA_VERSION = 1
DATABASE = "state.db"
LOCK = "lock"
SYNCHRONOUS = ("NORMAL", "FULL")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS objects (
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, rv INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (kind, namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS changes (
    rv INTEGER PRIMARY KEY, kind TEXT NOT NULL, type TEXT NOT NULL, data BLOB NOT NULL, old BLOB
);
"""


class SqliteJournal:
    """The journal of one store in `directory` (made if missing). `history`: how many of the newest
    changes are kept for watches to resume from after a restart."""

    def __init__(self, directory: Path, *, history: int, synchronous: str = "NORMAL") -> None:
        if synchronous not in SYNCHRONOUS:
            raise JournalError(f"synchronous: {synchronous!r} is not one of {', '.join(SYNCHRONOUS)}")
        self.directory = directory
        self.path = directory / DATABASE
        self._history = history
        self._trim_every = max(64, history // 8)
        self._since_trim = 0
        self._lock = _lock(directory)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.executescript(_SCHEMA)
            self._check_schema()
        except sqlite3.DatabaseError as e:
            self._lock.close()
            raise JournalError(f"{self.path}: not a kubesched data file ({e})") from None

    def _check_schema(self) -> None:
        found = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if found is None:
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        elif found[0] != SCHEMA_VERSION:
            raise JournalError(f"{self.path}: data schema {found[0]}, this kubesched reads {SCHEMA_VERSION}")

    def load(self) -> Saved | None:
        db = self._db
        first = db.execute("SELECT value FROM meta WHERE key = 'first'").fetchone()
        if first is None:
            return None
        objects = [Row(*r) for r in db.execute("SELECT kind, namespace, name, rv, data FROM objects")]
        changes = [Entry(*r) for r in db.execute("SELECT rv, kind, type, data, old FROM changes ORDER BY rv")]
        last = changes[-1].rv if changes else 0
        return Saved(rv=max(first[0], last), objects=objects, changes=changes)

    def begin(self, first_rv: int) -> None:
        with self._transaction():
            self._db.execute("DELETE FROM objects")
            self._db.execute("DELETE FROM changes")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('first', ?)", (first_rv,))

    def put(self, row: Row, entry: Entry) -> None:
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?)",
                (row.kind, row.namespace, row.name, row.rv, row.data),
            )
            self._append(entry)

    def remove(self, kind: str, namespace: str, name: str, entry: Entry) -> None:
        with self._transaction():
            self._db.execute(
                "DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?", (kind, namespace, name)
            )
            self._append(entry)

    def _append(self, entry: Entry) -> None:
        self._db.execute(
            "INSERT INTO changes VALUES (?, ?, ?, ?, ?)", (entry.rv, entry.kind, entry.type, entry.data, entry.old)
        )
        self._since_trim += 1
        if self._since_trim >= self._trim_every:
            self._since_trim = 0
            self._db.execute("DELETE FROM changes WHERE rv <= ?", (entry.rv - self._history,))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as e:
            raise JournalError(f"{self.path}: {e}") from None

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        self._lock.close()


def _lock(directory: Path) -> IO[str]:
    """Hold the directory's lock file for as long as the journal is open."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle = open(directory / LOCK, "a+")  # noqa: SIM115 - held open while the journal is
    except OSError as e:
        raise JournalError(f"{directory}: {e.strerror}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        raise JournalError(f"{directory}: in use by another kubesched (pid {holder})") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle
