"""The store's changes as watches hear them: the newest ones kept so that a watch may resume
from a version, and the open watches of each stored class."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from kubesched.api.objects import Served
from kubesched.clock import Clock
from kubesched.cluster.errors import Gone, TooLargeResourceVersion
from kubesched.cluster.protocol import ADDED
from kubesched.storage.watch import Matcher, MemoryWatch


class Change(NamedTuple):
    rv: int
    cls: type[Served]
    type: str
    obj: Served
    old: Served | None


class Feed:
    """Keeps the last `limit` changes; a watch from a version before them is Gone."""

    def __init__(self, *, clock: Clock, latency: float, limit: int, compacted: int) -> None:
        self._clock = clock
        self.latency = latency
        self._changes: deque[Change] = deque()
        self.limit = limit
        self.compacted = compacted  # the newest version no longer kept
        self._watches: dict[type[Served], list[MemoryWatch]] = {}

    def serve(self, cls: type[Served]) -> None:
        self._watches.setdefault(cls, [])

    def withdraw(self, cls: type[Served]) -> None:
        """End the watches of a class no longer stored."""
        for watch in list(self._watches.pop(cls, [])):
            watch.stop()

    def resume(self, changes: Iterable[Change], *, rv: int) -> None:
        """Take the changes a journal kept, oldest first (`rv`: the last version given out)."""
        self._changes.extend(changes)
        self.compacted = self._changes[0].rv - 1 if self._changes else rv

    def record(self, change: Change) -> None:
        if len(self._changes) >= self.limit:
            self.compacted = self._changes.popleft().rv
        self._changes.append(change)
        for watch in self._watches[change.cls]:
            watch.offer(change.type, change.obj, change.old)

    def open(
        self,
        cls: type[Served],
        *,
        matcher: Matcher,
        convert: Callable[[Served], Served] | None,
        start: int | None,
        rv: int,
        current: Mapping[tuple[str, str], Served],
    ) -> MemoryWatch:
        """A watch of `cls`: from `start`, every later change kept; with no start, an ADDED for
        each of the `current` objects (by key) first."""
        watch = MemoryWatch(
            clock=self._clock, matcher=matcher, latency=self.latency, on_stop=self._watches[cls].remove, convert=convert
        )
        if start is None:
            for key in sorted(current):
                watch.offer(ADDED, current[key], None)
        else:
            if start < self.compacted:
                raise Gone(f"too old resource version: {start} ({self.compacted})")
            if start > rv:
                raise TooLargeResourceVersion(start, rv)
            for change in self._changes:
                if change.rv > start and change.cls is cls:
                    watch.offer(change.type, change.obj, change.old)
        self._watches[cls].append(watch)
        return watch

    def drop(self, classes: Iterable[type[Served]]) -> None:
        """End every open watch of `classes` (of every class when empty)."""
        for cls in tuple(classes) or tuple(self._watches):
            for watch in list(self._watches.get(cls, ())):
                watch.stop()
