"""Recording Events about objects, as client-go's recorders do: core/v1 (kubelets, the
from-scratch scheduler) and events.k8s.io/v1 with series (kube-scheduler)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from datetime import datetime
from typing import Any, Protocol

import msgspec
from lightkube.models import core_v1 as m
from lightkube.models import events_v1 as em
from lightkube.models import meta_v1
from lightkube.resources import core_v1, events_v1

from kubesched.api.objects import Named, meta_of, name_of, present
from kubesched.clock import Clock
from kubesched.clock.base import utc
from kubesched.cluster.errors import ApiError, NotFound
from kubesched.cluster.protocol import Cluster

NORMAL = "Normal"
WARNING = "Warning"


class Referent(Named, Protocol):
    """What an Event can be about: an object as the API serves it, with its apiVersion and kind."""

    @property
    def apiVersion(self) -> str | None: ...

    @property
    def kind(self) -> str | None: ...


def object_reference(obj: Referent) -> m.ObjectReference:
    meta = meta_of(obj)
    return m.ObjectReference(
        apiVersion=obj.apiVersion,
        kind=obj.kind,
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid,
        resourceVersion=meta.resourceVersion,
    )


class EventRecorder:
    """Posts Events for one component. Names are `<object>.<hex nanoseconds>`, made unique even
    when the (virtual) clock has not moved between two events."""

    def __init__(self, cluster: Cluster, clock: Clock, *, component: str, host: str | None = None) -> None:
        self._cluster = cluster
        self._clock = clock
        self._source = m.EventSource(component=component, host=host)
        self._seq = itertools.count()

    async def record(self, obj: Referent, type_: str, reason: str, message: str, *, host: str | None = None) -> None:
        """Post one Event about `obj`; a failure to record is not the caller's failure."""
        now = self._clock.now()
        meta = meta_of(obj)
        stamp = utc(int(now))
        event = core_v1.Event(
            metadata=meta_v1.ObjectMeta(
                name=f"{meta.name}.{int(now * 1e9) + next(self._seq):x}",
                namespace=meta.namespace or "default",
            ),
            involvedObject=object_reference(obj),
            reason=reason,
            message=message,
            type=type_,
            source=m.EventSource(component=self._source.component, host=host or self._source.host),
            reportingComponent=self._source.component,
            reportingInstance=host or self._source.host or "",
            firstTimestamp=stamp,
            lastTimestamp=stamp,
            count=1,
        )
        with contextlib.suppress(ApiError):
            await self._cluster.create(event)


REFRESH_SECONDS = 6 * 60.0  # client-go's events recorder patches its open series this often
FINISH_SECONDS = 6 * 60.0  # and forgets a series (or a single event) not seen for this long

# action, reason, reporting controller, regarding, related
EventKey = tuple[str | None, str | None, str | None, tuple[object, ...], tuple[object, ...] | None]


def _key(event: events_v1.Event) -> EventKey:
    """What makes two events the same for series: not the note, as client-go's `getKey`."""
    related = msgspec.structs.astuple(event.related) if event.related is not None else None
    regarding = msgspec.structs.astuple(present(event.regarding, "the event's regarding object"))
    return (event.action, event.reason, event.reportingController, regarding, related)


_encode_event = msgspec.msgpack.Encoder().encode
_decode_event = msgspec.msgpack.Decoder(events_v1.Event).decode


class _Seen:
    """An event key's first event (encoded until a series begins on it) and when it was last seen."""

    __slots__ = ("first", "last")

    def __init__(self, last: float, first: bytes) -> None:
        self.last = last
        self.first: bytes | events_v1.Event = first


class EventBroadcaster:
    """Sends events.k8s.io/v1 Events as client-go's broadcaster does, off the caller's path: an
    event the same as one sent before (same action, reason, controller, regarding and related
    objects) is not a new object but a series on the first — its second occurrence patches
    `series` (count 2), later ones only count, and every six minutes the open series are patched
    with their counts; a series (or an event) not seen for six minutes is forgotten. One task
    sends, in order, through `cluster` (give it a client of its own: events then never wait
    behind bindings or lease renewals). `drain` sends what is queued, within a timeout."""

    def __init__(self, cluster: Cluster, clock: Clock) -> None:
        self._cluster = cluster
        self._clock = clock
        self._cache: dict[EventKey, _Seen] = {}
        self._queue: asyncio.Queue[tuple[events_v1.Event, em.EventSeries | None]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []

    def recorder(self, *, controller: str, instance: str) -> EventsV1Recorder:
        return EventsV1Recorder(self, self._clock, controller=controller, instance=instance)

    def post(self, event: events_v1.Event) -> None:
        """Queue `event`, or count it in the series of one like it."""
        key, now = _key(event), self._clock.now()
        seen = self._cache.get(key)
        if seen is None:
            self._cache[key] = _Seen(now, _encode_event(event))
            self._send(event)
            return
        seen.last = now
        first = seen.first
        observed = utc(now)
        if isinstance(first, bytes):  # the second occurrence: a series begins
            first = seen.first = _decode_event(first)
            first.series = em.EventSeries(count=2, lastObservedTime=observed)
            self._send(first)
        else:
            count = present(first.series, "a series' first event's series").count
            first.series = em.EventSeries(count=count + 1, lastObservedTime=observed)

    def _send(self, event: events_v1.Event) -> None:
        self._queue.put_nowait((event, event.series))
        if not self._tasks:
            self._tasks = [asyncio.ensure_future(self._work()), asyncio.ensure_future(self._maintain())]

    async def _work(self) -> None:
        while True:
            event, series = await self._queue.get()
            try:
                await self._write(event, series)
            finally:
                self._queue.task_done()

    async def _write(self, event: events_v1.Event, series: em.EventSeries | None) -> None:
        meta = meta_of(event)
        with contextlib.suppress(ApiError):
            if series is not None:
                observed = _micro(present(series.lastObservedTime, "a series' lastObservedTime"))
                patch = {"series": {"count": series.count, "lastObservedTime": observed}}
                try:
                    await self._cluster.patch(events_v1.Event, name_of(event), patch, namespace=meta.namespace)
                    return
                except NotFound:  # expired or deleted: create it again, series and all
                    pass
            await self._cluster.create(msgspec.structs.replace(event, series=series))

    async def _maintain(self) -> None:
        """Every six minutes: patch the open series with their counts; forget the finished."""
        while True:
            await self._clock.sleep(REFRESH_SECONDS)
            now = self._clock.now()
            for key, seen in list(self._cache.items()):
                if not isinstance(seen.first, bytes):
                    self._queue.put_nowait((seen.first, seen.first.series))
                if now - seen.last > FINISH_SECONDS:
                    del self._cache[key]

    async def drain(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for every queued event to be sent; whether they were."""
        if not self._tasks:
            return True
        try:
            async with asyncio.timeout(timeout):
                await self._queue.join()
        except TimeoutError:
            return False
        return True

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    @property
    def queued(self) -> int:
        return self._queue.qsize()


def _micro(stamp: datetime) -> str:
    """A MicroTime as the API writes it."""
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EventsV1Recorder:
    """Records events.k8s.io/v1 Events, as kube-scheduler's recorder does: reporting controller is
    the scheduler's name, `action` says what it was doing, `note` is the message. Recording never
    waits on the API server: the broadcaster sends."""

    def __init__(self, broadcaster: EventBroadcaster, clock: Clock, *, controller: str, instance: str) -> None:
        self._broadcaster = broadcaster
        self._clock = clock
        self.controller = controller
        self.instance = instance
        self._seq = itertools.count()

    async def record(
        self,
        regarding: Any,  # Any: the framework's EventRecorder takes any object; a served one is passed
        type_: str,
        reason: str,
        action: str,
        note: str,
        *,
        related: Any | None = None,  # Any: as `regarding`
    ) -> None:
        now = self._clock.now()
        meta = regarding.metadata
        event = events_v1.Event(
            metadata=meta_v1.ObjectMeta(
                name=f"{meta.name}.{int(now * 1e9) + next(self._seq):x}", namespace=meta.namespace or "default"
            ),
            eventTime=utc(now),
            regarding=object_reference(regarding),
            related=object_reference(related) if related is not None else None,
            reason=reason,
            action=action,
            note=note,
            type=type_,
            reportingController=self.controller,
            reportingInstance=self.instance,
        )
        self._broadcaster.post(event)
