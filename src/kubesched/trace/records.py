"""Trace records, the `Tracer` that stamps them and the sinks that keep them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, Any, Protocol

import msgspec

from kubesched.trace.upstream import citations


class Record(msgspec.Struct, frozen=True, omit_defaults=True):
    """One thing that happened. `site` is the emitting code as `module:line`; `upstream` the
    kube-scheduler v1.36.2 sites that do the same (`trace.upstream`), none for kubesched's own."""

    time: float
    kind: str
    site: str
    pod: str | None = None
    node: str | None = None
    details: dict[str, Any] = {}  # Any: each kind's details, of the types its emitter gave them
    upstream: tuple[str, ...] = ()


class Sink(Protocol):
    def write(self, record: Record) -> None: ...


class JsonLinesSink:
    """Writes each record as one JSON line."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._encoder = msgspec.json.Encoder()

    def write(self, record: Record) -> None:
        self._stream.write(self._encoder.encode(record).decode())
        self._stream.write("\n")


class ListSink:
    """Keeps every record it is given, in order (a run to be replayed once it ends)."""

    def __init__(self) -> None:
        self.records: list[Record] = []

    def write(self, record: Record) -> None:
        self.records.append(record)


class Tracer:
    """Stamps records with the clock's time and the caller's code site, and fans them out.

    With no sink and `keep=False` the tracer is disabled and `emit` returns at once, so
    tracing costs nothing on hot paths that nobody watches.
    """

    def __init__(self, now: Callable[[], float], *, keep: bool = False) -> None:
        self._now = now
        self._sinks: list[Sink] = []
        self.records: list[Record] = []
        self._keep = keep
        self.enabled = keep

    def add_sink(self, sink: Sink) -> None:
        self._sinks.append(sink)
        self.enabled = True

    def emit(self, kind: str, *, pod: str | None = None, node: str | None = None, **details: object) -> None:
        if not self.enabled:
            return
        frame = sys._getframe(1)
        site = f"{frame.f_globals.get('__name__', '?')}:{frame.f_lineno}"
        record = Record(
            time=self._now(),
            kind=kind,
            site=site,
            pod=pod,
            node=node,
            details=details,
            upstream=citations(kind, details),
        )
        if self._keep:
            self.records.append(record)
        for sink in self._sinks:
            sink.write(record)
