"""Watches over HTTP: chunked JSON lines read into events, resumed across dropped connections."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar, cast

import msgspec

from kubesched.api.objects import Served, meta_of
from kubesched.client.codec import decode, decode_event_lines
from kubesched.client.errors import ServiceUnavailable, error_from_reply
from kubesched.client.http1 import Response
from kubesched.client.transport import TRANSPORT_ERRORS
from kubesched.cluster.backoff import Backoff
from kubesched.cluster.errors import ApiError, InternalError, TooManyRequests
from kubesched.cluster.protocol import ADDED, BOOKMARK, ERROR, Bookmark, ListResult, WatchEvent

log = logging.getLogger(__name__)

R = TypeVar("R", bound=Served, covariant=True)

Opener = Callable[[str], Awaitable[Response]]
Lister = Callable[[], Awaitable[ListResult[R]]]
SHORT_WATCH = 1.0  # a watch closed this soon without an event is a failure (client-go's "very short watch")


def transient(error: ApiError) -> bool:
    """Whether a failed watch is worth retrying as it is (the server or the way to it is struggling)."""
    return isinstance(error, ServiceUnavailable | InternalError | TooManyRequests)


class KubeWatch(Generic[R]):
    """One logical watch over as many HTTP watch requests as it takes.

    Without a resourceVersion (or "0") it lists first and delivers each object as ADDED, then
    watches from the list's version, so it always knows where to resume. A dropped connection,
    a server restart or a transient error reply reconnects after a jittered backoff from the last
    version delivered; a normal end of the stream reconnects at once. `Gone` (the version is too
    old) and any other error reply end the iteration by raising it.
    """

    def __init__(
        self,
        *,
        open_: Opener,
        list_: Lister[R],
        kind: type[R],
        resource_version: str | None,
        backoff: Backoff,
        what: str,
    ) -> None:
        self._open = open_
        self._list = list_
        self._kind = kind
        self._rv = resource_version if resource_version not in ("", "0") else None
        self._backoff = backoff
        self._what = what
        self._ready: deque[WatchEvent[R]] = deque()
        self._response: Response | None = None
        self._buffer = bytearray()
        self._opened = 0.0
        self._received = 0
        self._resume_at = 0.0
        self._error: ApiError | None = None
        self._wake = asyncio.Event()
        self.stopped = False

    @property
    def resource_version(self) -> str | None:
        """The version the watch would resume from."""
        return self._rv

    def stop(self) -> None:
        self.stopped = True
        self._close()
        self._wake.set()

    def __aiter__(self) -> KubeWatch[R]:
        return self

    async def __anext__(self) -> WatchEvent[R]:
        while not self._ready:
            if self._error is not None:
                error, self._error = self._error, None
                self.stop()
                raise error
            if self.stopped:
                raise StopAsyncIteration
            await self._advance()
        return self._ready.popleft()

    async def _advance(self) -> None:
        """One step: wait out a backoff, list, (re)connect, or read what the server sent."""
        if self._response is None:
            delay = self._resume_at - asyncio.get_running_loop().time()
            if delay > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), delay)
                return
        try:
            if self._rv is None:
                listed = await self._list()
                self._ready.extend(WatchEvent(ADDED, obj) for obj in listed.items)
                self._rv = listed.resource_version
            elif self._response is None:
                self._response = await self._open(self._rv)
                if self.stopped:
                    self._close()
                    return
                self._opened = asyncio.get_running_loop().time()
                self._received = 0
            else:
                await self._read(self._response)
        except ApiError as e:
            if not transient(e):
                self._error = e
                return
            self._retry_later(str(e))

    async def _read(self, response: Response) -> None:
        try:
            chunk = await response.readany()
        except TRANSPORT_ERRORS as e:
            if not self.stopped:
                self._retry_later(f"the connection was lost ({type(e).__name__}: {e})")
            return
        if not chunk:
            short = self._received == 0 and asyncio.get_running_loop().time() - self._opened < SHORT_WATCH
            self._close()
            if short:
                self._retry_later("the server ended the watch at once")
            return
        buffer = self._buffer
        buffer += chunk
        end = buffer.rfind(b"\n") + 1
        if not end:
            return
        try:
            lines = decode_event_lines(buffer[:end])
        except msgspec.DecodeError as e:
            raise InternalError(f"the server sent a watch line that is not an event: {e}") from None
        del buffer[:end]
        for line in lines:
            if line.type == ERROR:
                error = error_from_reply(500, bytes(line.object))
                if not transient(error):
                    self._error = error
                    self._close()
                    return
                self._retry_later(str(error))
                return
            # a BOOKMARK's object is a Bookmark, which WatchEvent lets stand for the kind's
            obj = cast(R, decode(line.object, Bookmark)) if line.type == BOOKMARK else decode(line.object, self._kind)
            self._ready.append(WatchEvent(line.type, obj))
            self._rv = meta_of(obj).resourceVersion or self._rv
        self._received += len(lines)
        self._backoff.reset()

    def _retry_later(self, reason: str) -> None:
        self._close()
        delay = self._backoff.next()
        self._resume_at = asyncio.get_running_loop().time() + delay
        log.warning("watch %s: %s; resuming from resourceVersion %s in %.2fs", self._what, reason, self._rv, delay)

    def _close(self) -> None:
        if self._response is not None:
            self._response.close()
            self._response = None
        self._buffer.clear()
