"""A journal in an embedded SQLite database, as k3s keeps its cluster through kine.

One file, `state.db`, in write-ahead-log mode, one table: a row per change, appended in its own
transaction and committed before the store answers. With `synchronous=NORMAL` (the default) a
committed transaction survives the process being killed at any moment; `FULL` also survives the
machine losing power, at an fsync per write. Rows an object's later version replaced are
compacted away once they are older than the kept history; the latest row of every object stays.
The database is opened in exclusive locking mode and a lock file keeps a second server off the
directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from kubesched.storage.journal import Entry, Saved, saved
from kubesched.storage.journal.errors import JournalError

SCHEMA_VERSION = 2
DATABASE = "state.db"
LOCK = "lock"
SYNCHRONOUS = ("NORMAL", "FULL")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS log (
    rv INTEGER PRIMARY KEY, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    type TEXT NOT NULL, data BLOB NOT NULL
);
"""
_APPEND = "INSERT INTO log VALUES (?, ?, ?, ?, ?, ?)"
# The rows at or before a version that no watch may resume over any more and that no object
# needs: every row of an object but its latest one there, and the latest one if it is a deletion.
_COMPACT = """
DELETE FROM log WHERE rv IN (
    SELECT rv FROM (
        SELECT rv, type, row_number() OVER (PARTITION BY kind, namespace, name ORDER BY rv DESC) AS newer
        FROM log WHERE rv <= :upto
    ) WHERE newer > 1 OR type = 'DELETED'
)
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
        self._compact_every = max(64, history)
        self._since_compaction = 0
        self._lock = _lock(directory)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA locking_mode=EXCLUSIVE")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.executescript(_SCHEMA)
            self._check_schema()
        except sqlite3.DatabaseError as e:
            self._lock.close()
            raise JournalError(f"{self.path}: not a kubesched data file ({e})") from None

    def _check_schema(self) -> None:
        found = self._meta("schema")
        if found is None:
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        elif found != SCHEMA_VERSION:
            raise JournalError(f"{self.path}: data schema {found}, this kubesched reads {SCHEMA_VERSION}")

    def _meta(self, key: str) -> int | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else int(row[0])

    def load(self) -> Saved | None:
        first = self._meta("first")
        if first is None or self._meta("sealed") is None:
            return None
        compacted = self._meta("compacted") or first
        rows = self._db.execute("SELECT rv, kind, namespace, name, type, data FROM log ORDER BY rv")
        return saved((Entry(*row) for row in rows), first=first, compacted=compacted)

    def begin(self, first_rv: int) -> None:
        with self._transaction():
            self._db.execute("DELETE FROM log")
            self._db.execute("DELETE FROM meta WHERE key IN ('compacted', 'sealed')")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('first', ?)", (first_rv,))

    def seal(self) -> None:
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('sealed', 1)")

    def append(self, entry: Entry) -> None:
        try:  # one statement in autocommit mode: its own transaction, committed when it returns
            self._db.execute(_APPEND, (entry.rv, entry.kind, entry.namespace, entry.name, entry.type, entry.data))
        except sqlite3.Error as e:
            raise JournalError(f"{self.path}: {e}") from None
        self._since_compaction += 1
        if self._since_compaction >= self._compact_every:
            self._since_compaction = 0
            self.compact(entry.rv - self._history)

    def compact(self, upto: int) -> None:
        """Drop what no watch may resume over and no object needs, up to version `upto`."""
        with self._transaction():
            self._db.execute(_COMPACT, {"upto": upto})
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('compacted', ?)", (upto,))

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
