"""A journal in a real etcd (the v3 API, through etcd3gw and etcd's JSON gateway), for a store
that outlives its machine or is shared with etcd's own tooling.

Under a prefix (default `/kubesched`): `log/<version>` holds each change (msgpack of kind,
namespace, name, type and object), `meta/first`, `meta/sealed`, `meta/compacted` and
`meta/schema` what the SQLite journal keeps in its meta table, and `lock` the holder of the
prefix, on a lease the journal keeps alive (a second server waits for it a lease's TTL, then is
refused; the lock of a server that was killed expires with its lease, so a restart waits at most
that long). Every change is one transaction that puts its log key
only if the lock is still this journal's, so a server that lost its lease cannot write. Log
keys a later change replaced are deleted once both are older than the kept history; etcd's own
revisions are compacted by etcd (`--auto-compaction-retention`), as the operator configures it.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import msgspec

from kubesched.cluster.protocol import DELETED
from kubesched.storage.journal import Entry, Saved, saved
from kubesched.storage.journal.errors import JournalError

if TYPE_CHECKING:
    from etcd3gw.types import KeyValue

SCHEMA_VERSION = 2
DEFAULT_PREFIX = "/kubesched"
LEASE_TTL = 10  # seconds a killed server's lock outlives it
MAX_TXN_OPS = 128  # etcd's default --max-txn-ops

log = logging.getLogger(__name__)


def _b64(value: str | bytes) -> str:
    return base64.b64encode(value.encode() if isinstance(value, str) else value).decode()


class EtcdJournal:
    """The journal of one store under `prefix` in the etcd at `url` (`http://host:2379`).
    `history`: how many of the newest changes are kept for watches to resume from."""

    def __init__(
        self,
        url: str,
        *,
        history: int,
        prefix: str = DEFAULT_PREFIX,
        lease_ttl: int = LEASE_TTL,
        wait: float | None = None,
    ) -> None:
        """`wait`: how long a lock held by another server is waited for (default: a lease's TTL
        and 2 s, long enough for the lease of a server that was killed to expire)."""
        try:
            import etcd3gw
            import requests
        except ImportError:
            raise JournalError("--etcd needs the etcd extra: pip install 'kubesched[etcd]'") from None
        self._errors: tuple[type[BaseException], ...] = (requests.RequestException, etcd3gw.exceptions.Etcd3Exception)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise JournalError(f"{url}: expected an etcd client URL such as http://127.0.0.1:2379")
        self.where = f"{url.rstrip('/')} {prefix}"
        self._prefix = prefix.rstrip("/") + "/"
        self._history = history
        self._compact_every = max(64, history)
        self._since_compaction = 0
        self._latest: dict[tuple[str, str, str], int] = {}  # each object's newest version in the log
        self._superseded: list[tuple[int, int]] = []  # (version that replaced it, version replaced)
        self._client = etcd3gw.client(host=parts.hostname, port=parts.port or 2379, protocol=parts.scheme)
        self._client.timeout = 10
        self._token = f"pid {os.getpid()} on {socket.gethostname()} ({uuid.uuid4().hex[:8]})"
        self._stop = threading.Event()
        try:
            self._check_schema()
            self._lease = self._client.lease(lease_ttl)
            self._take_lock(lease_ttl + 2.0 if wait is None else wait)
        except self._errors as e:
            raise JournalError(f"{self.where}: cannot use etcd ({_said(e)})") from None
        self._keeper = threading.Thread(
            target=self._keep_alive, args=(max(1.0, lease_ttl / 3),), name="etcd-lease", daemon=True
        )
        self._keeper.start()

    def _take_lock(self, wait: float) -> None:
        deadline = time.monotonic() + wait
        warned = False
        while not self._client.create(self._key("lock"), self._token, lease=self._lease):
            if not warned and wait > 0:
                warned = True
                held = self._get("lock") or b"?"
                log.warning("%s: held by %s; waiting up to %.0fs for its lease", self.where, held.decode(), wait)
            if time.monotonic() >= deadline:
                holder = self._get("lock")
                self._lease.revoke()
                shown = holder.decode(errors="replace") if holder is not None else "?"
                raise JournalError(f"{self.where}: in use by another kubesched ({shown})")
            time.sleep(0.25)

    def _key(self, name: str) -> str:
        return self._prefix + name

    def _log_key(self, rv: int) -> str:
        return self._key(f"log/{rv:020d}")

    def _get(self, name: str) -> bytes | None:
        found = self._client.get(self._key(name))
        return bytes(found[0]) if found else None

    def _meta(self, name: str) -> int | None:
        value = self._get(f"meta/{name}")
        return None if value is None else int(value)

    def _check_schema(self) -> None:
        found = self._meta("schema")
        if found is None:
            self._client.put(self._key("meta/schema"), str(SCHEMA_VERSION))
        elif found != SCHEMA_VERSION:
            raise JournalError(f"{self.where}: data schema {found}, this kubesched reads {SCHEMA_VERSION}")

    def _keep_alive(self, every: float) -> None:
        while not self._stop.wait(every):
            try:
                self._lease.refresh()
            except self._errors:
                continue  # tried again next time; a lease lost shows as a refused write

    def _txn(self, operations: list[dict[str, object]]) -> None:
        """One transaction of `operations`, done only while the lock is this journal's."""
        compare = [{"key": _b64(self._key("lock")), "result": "EQUAL", "target": "VALUE", "value": _b64(self._token)}]
        try:
            reply = self._client.transaction({"compare": compare, "success": operations})
        except self._errors as e:
            raise JournalError(f"{self.where}: {_said(e)}") from None
        if not reply.get("succeeded", False):
            raise JournalError(f"{self.where}: this server's lock is gone (its lease expired); it may not write")

    def _put(self, key: str, value: str | bytes) -> dict[str, object]:
        return {"request_put": {"key": _b64(key), "value": _b64(value)}}

    def _delete(self, key: str, *, prefix: bool = False) -> dict[str, object]:
        body = {"key": _b64(key)}
        if prefix:
            end = bytearray(key.encode())
            end[-1] += 1
            body["range_end"] = base64.b64encode(bytes(end)).decode()
        return {"request_delete_range": body}

    def load(self) -> Saved | None:
        try:
            first = self._meta("first")
            if first is None or self._meta("sealed") is None:
                return None
            compacted = self._meta("compacted") or first
            rows = self._client.get_prefix(self._key("log/"), sort_order="ascend", sort_target="key")
        except self._errors as e:
            raise JournalError(f"{self.where}: {_said(e)}") from None
        return saved(self._noted(rows), first=first, compacted=compacted)

    def _noted(self, rows: Iterable[tuple[bytes, KeyValue]]) -> Iterator[Entry]:
        """The log's entries, each noted for compaction as it goes by."""
        for value, meta in rows:
            kind, namespace, name, type_, data = msgspec.msgpack.decode(value)
            entry = Entry(int(meta["key"].rsplit(b"/", 1)[1]), kind, namespace, name, type_, data)
            self._note((kind, namespace, name), entry)
            yield entry

    def _note(self, key: tuple[str, str, str], entry: Entry) -> None:
        """Remember which log keys `entry` makes removable once it is older than the history."""
        before = self._latest.get(key)
        if before is not None:
            self._superseded.append((entry.rv, before))
        if entry.type == DELETED:
            self._superseded.append((entry.rv, entry.rv))
            self._latest.pop(key, None)
        else:
            self._latest[key] = entry.rv

    def begin(self, first_rv: int) -> None:
        self._latest.clear()
        self._superseded.clear()
        self._txn(
            [
                self._delete(self._key("log/"), prefix=True),
                self._delete(self._key("meta/compacted")),
                self._delete(self._key("meta/sealed")),
                self._put(self._key("meta/first"), str(first_rv)),
            ]
        )

    def seal(self) -> None:
        self._txn([self._put(self._key("meta/sealed"), "1")])

    def append(self, entry: Entry) -> None:
        value = msgspec.msgpack.encode([entry.kind, entry.namespace, entry.name, entry.type, entry.data])
        self._txn([self._put(self._log_key(entry.rv), value)])
        self._note((entry.kind, entry.namespace, entry.name), entry)
        self._since_compaction += 1
        if self._since_compaction >= self._compact_every:
            self._since_compaction = 0
            self.compact(entry.rv - self._history)

    def compact(self, upto: int) -> None:
        """Delete the log keys no watch may resume over and no object needs, up to version `upto`."""
        due = [replaced for replacer, replaced in self._superseded if replacer <= upto]
        self._superseded = [(a, b) for a, b in self._superseded if a > upto]
        for batch in _batches(sorted(set(due)), MAX_TXN_OPS - 1):
            self._txn([self._delete(self._log_key(rv)) for rv in batch])
        self._txn([self._put(self._key("meta/compacted"), str(upto))])

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(*self._errors):
            self._lease.revoke()  # the lock goes with it
        self._client.session.close()


def _batches(items: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _said(error: BaseException) -> str:
    """A client error in a few words (requests' messages carry whole URLs and reprs)."""
    text = str(error) or type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."
