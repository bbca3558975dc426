"""HTTP/1.1 to one server over pooled keep-alive connections, responses parsed by httptools.

A request costs the client a fraction of the CPU a general-purpose HTTP client spends on it,
which matters when every scheduled pod takes a Binding and an Event. Bodies are sent with a
Content-Length; responses may be sized or chunked. A response body is buffered as it arrives;
a streamed one (a watch) is read piece by piece and pauses the socket while too much is unread.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Mapping
from typing import cast
from urllib.parse import urlencode, urlsplit

import httptools

MAX_CONNECTIONS = 100  # requests in flight at once; more wait for a connection
HIGH_WATER = 4 << 20  # unread bytes of a streamed body at which the socket stops being read
ERRORS = (OSError, TimeoutError, httptools.HttpParserError)


class Response:
    """Status, headers (lower-case names) and the body as it arrives."""

    def __init__(self, status: int, headers: dict[str, str], connection: _Connection) -> None:
        self.status = status
        self.headers = headers
        self._connection: _Connection | None = connection
        self._chunks: deque[bytes] = deque()
        self._unread = 0
        self._done = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.streaming = False  # read piecemeal: too much unread pauses the socket
        self.deadline: asyncio.TimerHandle | None = None  # cuts a stream that outlives its timeout

    async def read(self) -> bytes:
        """The whole body, once it has all arrived."""
        while not self._done:
            await self._wait()
        body = b"".join(self._chunks)
        self._chunks = deque((body,))
        return body

    async def readany(self) -> bytes:
        """What has arrived and not been read (waiting for some); b"" once the body has ended."""
        while not self._chunks and not self._done:
            await self._wait()
        return self._take()

    def close(self) -> None:
        """Stop reading: a body not yet complete closes its connection."""
        if not self._done and self._connection is not None:
            self._connection.close()
        self._finish()
        self._chunks.clear()

    def _take(self) -> bytes:
        data = b"".join(self._chunks)
        self._chunks.clear()
        self._unread = 0
        if self._connection is not None and not self._done:
            self._connection.resume()
        return data

    async def _wait(self) -> None:
        if self._error is not None:
            raise self._error
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None
        if self._error is not None and not self._chunks:
            raise self._error

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _feed(self, data: bytes) -> None:
        self._chunks.append(data)
        self._unread += len(data)
        if self.streaming and self._unread > HIGH_WATER and self._connection is not None:
            self._connection.pause()
        self._wake()

    def _finish(self) -> None:
        self._done = True
        self._connection = None
        if self.deadline is not None:
            self.deadline.cancel()
        self._wake()

    def _fail(self, error: BaseException) -> None:
        self._error = error
        self._connection = None
        if self.deadline is not None:
            self.deadline.cancel()
        self._wake()


class _Connection(asyncio.Protocol):
    """One socket; at most one request on it at a time."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self._headers: dict[str, str] = {}
        self._head: asyncio.Future[Response] | None = None
        self._response: Response | None = None
        self.lost = False
        self.served = 0  # responses completed on this connection

    # -- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # also uvloop's, not a subclass

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as e:
            self._fail(e)
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._fail(exc or ConnectionResetError("the connection closed before the response was complete"))

    # -- httptools callbacks -----------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self._response = Response(self._parser.get_status_code(), self._headers, self)
        self._headers = {}
        if self._head is not None and not self._head.done():
            self._head.set_result(self._response)

    def on_body(self, body: bytes) -> None:
        if self._response is not None:
            self._response._feed(body)

    def on_message_complete(self) -> None:
        response, self._response, self._head = self._response, None, None
        self.served += 1
        if response is not None:
            response._finish()
        if self._parser.should_keep_alive() and not self.lost:
            self._pool._release(self)
        else:
            self._pool._forget(self)
            self.close()

    # -- use ---------------------------------------------------------------------------------

    async def send(self, head: bytes, body: bytes | None) -> Response:
        """Write one request; the response once its headers are in."""
        assert self._transport is not None
        self._head = asyncio.get_running_loop().create_future()
        self._transport.write(head + body if body else head)
        return await self._head

    def pause(self) -> None:
        if self._transport is not None and not self.lost:
            self._transport.pause_reading()

    def resume(self) -> None:
        if self._transport is not None and not self.lost and not self._transport.is_reading():
            self._transport.resume_reading()

    def close(self) -> None:
        self.lost = True
        if self._transport is not None:
            self._transport.abort()

    def _fail(self, error: BaseException) -> None:
        head, response = self._head, self._response
        self._head = self._response = None
        if head is not None and not head.done():
            head.set_exception(error)
        if response is not None:
            response._fail(error)
        self._pool._forget(self)


class Pool:
    """Connections to the server at `url` (http or https; a path in it prefixes every request)."""

    def __init__(self, url: str, ssl_context: ssl.SSLContext | None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) server address: {url!r}")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl = ssl_context if parts.scheme == "https" else None
        self._prefix = parts.path.rstrip("/")
        self._authority = parts.netloc.rpartition("@")[2]
        self._idle: list[_Connection] = []
        self._busy: set[_Connection] = set()
        self._slots = asyncio.Semaphore(MAX_CONNECTIONS)

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str],
        body: bytes | None = None,
        timeout: float,
    ) -> Response:
        """The complete response (body buffered) within `timeout` seconds, waiting for a free
        connection included."""
        async with asyncio.timeout(timeout), self._slots:
            connection, response = await self._exchange(method, self._head(method, path, params, headers, body), body)
            try:
                await response.read()
            except BaseException:
                connection.close()
                raise
            return response

    async def stream(
        self,
        path: str,
        *,
        params: Mapping[str, str],
        headers: Mapping[str, str],
        connect_timeout: float,
        timeout: float,
    ) -> Response:
        """A GET whose body is read as it comes; its connection is cut after `timeout` seconds.
        Streams do not count against `MAX_CONNECTIONS`."""
        async with asyncio.timeout(connect_timeout):
            connection, response = await self._exchange("GET", self._head("GET", path, params, headers, None), None)
        response.streaming = True
        if not response._done:
            response.deadline = asyncio.get_running_loop().call_later(timeout, connection.close)
        return response

    def close(self) -> None:
        for connection in [*self._idle, *self._busy]:
            connection.close()
        self._idle.clear()
        self._busy.clear()

    async def _exchange(self, method: str, head: bytes, body: bytes | None) -> tuple[_Connection, Response]:
        """Send a request; its connection and the response once its headers are in. A GET that
        finds its kept-alive connection closed by the server before any reply is sent again on
        another (other methods are not, as the server may have acted on them)."""
        while True:
            connection = await self._connection()
            reused = connection.served > 0
            try:
                return connection, await connection.send(head, body)
            except ConnectionError:
                connection.close()
                if reused and method == "GET":
                    continue
                raise
            except BaseException:
                connection.close()
                raise

    def _head(
        self, method: str, path: str, params: Mapping[str, str] | None, headers: Mapping[str, str], body: bytes | None
    ) -> bytes:
        target = self._prefix + path + ("?" + urlencode(params) if params else "")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._authority}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _connection(self) -> _Connection:
        while self._idle:
            connection = self._idle.pop()
            if not connection.lost:
                self._busy.add(connection)
                return connection
        server_hostname = self._host if self._ssl is not None else None
        _, connection = await asyncio.get_running_loop().create_connection(
            lambda: _Connection(self), self._host, self._port, ssl=self._ssl, server_hostname=server_hostname
        )
        self._busy.add(connection)
        return connection

    def _release(self, connection: _Connection) -> None:
        if connection in self._busy:
            self._busy.discard(connection)
            self._idle.append(connection)

    def _forget(self, connection: _Connection) -> None:
        self._busy.discard(connection)
        if connection in self._idle:
            self._idle.remove(connection)
