"""Recording a cluster's changes: what placement depends on, listed once and then watched, one
object change a line (JSON Lines), for `kubesched replay`.

The file's first line is a header (`{"kubeschedRecording": 1, "started": ..., "kinds": [...]}`);
then the objects there at the start (`"initial": true`, at `t` 0, in the order a snapshot
restores them); then every change a watch delivers — `{"t": seconds since the start, "type":
ADDED|MODIFIED|DELETED, "object": {...}}` — written as it comes. Objects are kept as a snapshot
keeps them (no managedFields, env variables without values); Secrets and Events are never read.
The custom resources of the CRDs there at the start are listed and watched too.

Watches resume from the last version seen; when the server no longer has it, the kind is listed
again and the difference written as changes, as an informer relists. Memory stays bounded by the
cluster's size (each object's key and version), not by the length of the recording.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from kubesched.api.objects import Served, key_of, meta_of
from kubesched.clock import Clock
from kubesched.cluster import ADDED, DELETED, MODIFIED, Cluster, NotFound, WatchEvent
from kubesched.scheduler.reflector import reflect
from kubesched.trace import Tracer
from kubesched.whatif.snapshot import KINDS, PAGE, custom_classes, plain

FORMAT = 1
TYPES = (ADDED, MODIFIED, DELETED)


class RecordingError(ValueError):
    """A recording that cannot be read, in one line naming the file and the line."""


@dataclass(frozen=True)
class Change:
    t: float
    type: str
    object: dict[str, object]

    @property
    def kind(self) -> str:
        return f"{self.object.get('apiVersion')}/{self.object.get('kind')}"


@dataclass(frozen=True)
class Recording:
    started: str
    initial: tuple[dict[str, object], ...]
    changes: tuple[Change, ...]


def _stub(kind: type[Served], key: tuple[str, str], uid: str | None) -> dict[str, object]:
    """What a DELETED line found by a relist says of the object: its kind, name and uid."""
    info = kind._api_info.resource
    api_version = f"{info.group}/{info.version}" if info.group else info.version
    meta = {"name": key[1], "uid": uid} | ({"namespace": key[0]} if key[0] else {})
    return {"apiVersion": api_version, "kind": info.kind, "metadata": meta}


Sink = Callable[[str, dict[str, object], bool], None]  # (type, document, initial)


class Follower:
    """Lists the snapshot's kinds of `cluster`, then watches them, handing `sink` each object
    there at the start (`initial`) and then each change, as documents (see the module)."""

    def __init__(self, cluster: Cluster, sink: Sink) -> None:
        self.cluster = cluster
        self.sink = sink
        self._known: dict[type[Served], dict[tuple[str, str], tuple[str, str | None]]] = {}  # key -> (rv, uid)
        self._trace = Tracer(lambda: 0.0)

    async def follow(self, *, listed: Callable[[], None] = lambda: None) -> None:
        """List every kind (then call `listed`), then watch them all until cancelled."""
        versions: dict[type[Served], str] = {}
        crds: list[dict[str, object]] = []
        for kind in KINDS:
            crds += await self._list_into(kind, versions)
        for cls in custom_classes([c for c in crds if c.get("kind") == "CustomResourceDefinition"]).values():
            await self._list_into(cls, versions)  # the custom resources of the CRDs there at the start
        listed()
        watches = [
            asyncio.ensure_future(
                reflect(
                    self.cluster,
                    kind,
                    resource_version=rv,
                    relist=lambda kind=kind: self._relist(kind),  # type: ignore[misc]
                    handle=lambda event, kind=kind: self._handle(kind, event),  # type: ignore[misc]
                    trace=self._trace,
                )
            )
            for kind, rv in versions.items()
        ]
        try:
            await asyncio.gather(*watches)
        finally:
            for task in watches:
                task.cancel()
            await asyncio.gather(*watches, return_exceptions=True)

    async def _list_into(self, kind: type[Served], versions: dict[type[Served], str]) -> list[dict[str, object]]:
        """List `kind` and hand on its objects as initial; their documents (none when not served)."""
        try:
            items, versions[kind] = await self._list(kind)
        except NotFound:  # not served here
            return []
        self._known[kind] = {key_of(o): _version(o) for o in items}
        documents = [plain(obj) for obj in sorted(items, key=key_of)]
        for document in documents:
            self.sink(ADDED, document, True)
        return documents

    async def _list(self, kind: type[Served]) -> tuple[list[Served], str]:
        items: list[Served] = []
        token: str | None = None
        while True:
            page = await self.cluster.list(kind, limit=PAGE, continue_token=token)
            items.extend(page.items)
            token = page.continue_token
            if not token:
                return items, page.resource_version

    async def _relist(self, kind: type[Served]) -> str:
        """List again and hand on what changed since the last version seen, as changes."""
        items, version = await self._list(kind)
        known = self._known.setdefault(kind, {})
        now = {key_of(o): o for o in items}
        for key in sorted(set(known) - set(now)):
            self.sink(DELETED, _stub(kind, key, known.pop(key)[1]), False)
        for key, obj in sorted(now.items()):
            seen = known.get(key)
            if seen is None or seen[0] != meta_of(obj).resourceVersion:
                self.sink(ADDED if seen is None else MODIFIED, plain(obj), False)
                known[key] = _version(obj)
        return version

    def _handle(self, kind: type[Served], event: WatchEvent[Served]) -> None:
        obj = event.object
        known = self._known.setdefault(kind, {})
        if event.type == DELETED:
            known.pop(key_of(obj), None)
        else:
            known[key_of(obj)] = _version(obj)
        self.sink(event.type, plain(obj), False)


def _version(obj: Served) -> tuple[str, str | None]:
    """What the follower keeps of an object: its resourceVersion and uid."""
    meta = meta_of(obj)
    return meta.resourceVersion or "", meta.uid


class Recorder:
    """Records `cluster` into `out` (see the module); `changes` counts the changes written."""

    def __init__(self, cluster: Cluster, out: TextIO, *, clock: Clock) -> None:
        self.out = out
        self.clock = clock
        self.changes = 0
        self._start = 0.0
        self._follower = Follower(cluster, self._write)

    async def run(self, *, duration: float | None = None) -> None:
        """List, then watch until `duration` seconds have passed (None: until cancelled)."""
        self._start = self.clock.now()
        started = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        self._line({"kubeschedRecording": FORMAT, "started": started, "kinds": [k.__name__ for k in KINDS]})
        following = asyncio.ensure_future(self._follower.follow(listed=self.out.flush))
        try:
            if duration is None:
                await following
            else:
                await self.clock.sleep(duration)
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            self.out.flush()

    def _write(self, type_: str, document: dict[str, object], initial: bool) -> None:
        if initial:
            self._line({"t": 0.0, "type": type_, "initial": True, "object": document})
            return
        self._line({"t": round(self.clock.now() - self._start, 6), "type": type_, "object": document})
        self.changes += 1
        if self.changes % 256 == 0:
            self.out.flush()

    def _line(self, body: dict[str, object]) -> None:
        self.out.write(json.dumps(body, separators=(",", ":")) + "\n")


def load(path: str | Path) -> Recording:
    """The recording in `path`; RecordingError naming the file and line when it is not one."""
    path = Path(path)
    try:
        with path.open() as f:
            return _parse(path, f)
    except OSError as e:
        raise RecordingError(f"{path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise RecordingError(f"{path}: not a recording (not text)") from None


def _lines(f: TextIO) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(f, 1):
        if line.strip():
            yield number, line


def _parse(path: Path, f: TextIO) -> Recording:
    lines = _lines(f)
    first = next(lines, None)
    header = _json(path, first) if first is not None else None
    if not isinstance(header, dict) or header.get("kubeschedRecording") != FORMAT:
        raise RecordingError(f"{path}:1: not a kubesched recording (no header line of format {FORMAT})")
    initial: list[dict[str, object]] = []
    changes: list[Change] = []
    last = 0.0
    for number, line in lines:
        body = _json(path, (number, line))
        where = f"{path}:{number}"
        if not isinstance(body, dict) or not isinstance(body.get("object"), dict):
            raise RecordingError(f"{where}: a change needs an object")
        obj = body["object"]
        if not isinstance(obj.get("metadata"), dict) or not obj["metadata"].get("name") or not obj.get("kind"):
            raise RecordingError(f"{where}: object: kind and metadata.name are required")
        if body.get("type") not in TYPES:
            raise RecordingError(f"{where}: type: {body.get('type')!r} is not one of {', '.join(TYPES)}")
        t = body.get("t")
        if isinstance(t, bool) or not isinstance(t, int | float) or t < last:
            raise RecordingError(f"{where}: t: expected seconds, not before the line above ({t!r})")
        last = float(t)
        if body.get("initial"):
            if changes:
                raise RecordingError(f"{where}: an initial object after the changes began")
            initial.append(obj)
        else:
            changes.append(Change(last, body["type"], obj))
    return Recording(str(header.get("started", "")), tuple(initial), tuple(changes))


def _json(path: Path, numbered: tuple[int, str]) -> object:
    number, line = numbered
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise RecordingError(f"{path}:{number}: not JSON ({e.msg})") from None
