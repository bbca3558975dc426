"""The HTTP/1.1 client on the wire: keep-alive, sized and chunked bodies, streams, timeouts, TLS."""

from __future__ import annotations

import asyncio
import contextlib
import ssl

import pytest
from aiohttp import web

from kubesched.apiserver.tls import self_signed, server_context
from kubesched.client import http1
from kubesched.client.http1 import Pool

HEADERS = {"Accept": "application/json"}


class Server:
    """An app that records each request's connection (its client port), path, query and body."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str, str, bytes]] = []
        self.open = 0
        self.most_open = 0
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        port = request.transport.get_extra_info("peername")[1]
        self.seen.append((port, request.path, request.rel_url.raw_query_string, await request.read()))
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            return await self.reply(request)
        finally:
            self.open -= 1

    async def reply(self, request: web.Request) -> web.StreamResponse:
        tail = request.match_info["tail"]
        if tail == "big":
            return web.Response(body=b"x" * (2 * http1.HIGH_WATER))
        if tail == "close":
            return web.Response(text="bye", headers={"Connection": "close"})
        if tail == "slow":
            await asyncio.sleep(float(request.query.get("for", "0.05")))
            return web.Response(text="late")
        if tail == "chunks":
            response = web.StreamResponse()
            response.enable_chunked_encoding()
            await response.prepare(request)
            for piece in (b"one\n", b"two\n", b"three\n"):
                await response.write(piece)
                await asyncio.sleep(0.01)
            await response.write_eof()
            return response
        if tail == "hang":
            response = web.StreamResponse()
            response.enable_chunked_encoding()
            await response.prepare(request)
            await response.write(b"first\n")
            await asyncio.sleep(30)
            return response
        return web.Response(text=f"{request.method} {request.path}", status=201 if request.method == "POST" else 200)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


def test_requests_one_after_another_share_one_connection(serve):
    server = Server()

    async def main():
        async with serve(server.app) as url:
            pool = Pool(url, None)
            replies = []
            for path in ("/a", "/b", "/c"):
                response = await pool.request("GET", path, headers=HEADERS, timeout=5)
                replies.append((response.status, await response.read()))
            posted = await pool.request("POST", "/d", params={"x": "1 2"}, headers=HEADERS, body=b"{}", timeout=5)
            pool.close()
            return replies, (posted.status, await posted.read())

    replies, posted = run(main())
    assert replies == [(200, b"GET /a"), (200, b"GET /b"), (200, b"GET /c")]
    assert posted == (201, b"POST /d")
    assert len({port for port, *_ in server.seen}) == 1
    assert server.seen[-1][2:] == ("x=1+2", b"{}")


def test_a_body_larger_than_the_stream_limit_is_read_whole(serve):
    server = Server()

    async def main():
        async with serve(server.app) as url:
            pool = Pool(url, None)
            body = await (await pool.request("GET", "/big", headers=HEADERS, timeout=5)).read()
            pool.close()
            return len(body)

    assert run(main()) == 2 * http1.HIGH_WATER


def test_a_connection_the_server_closes_is_not_reused(serve):
    server = Server()

    async def main():
        async with serve(server.app) as url:
            pool = Pool(url, None)
            first = await (await pool.request("GET", "/close", headers=HEADERS, timeout=5)).read()
            second = await (await pool.request("GET", "/after", headers=HEADERS, timeout=5)).read()
            pool.close()
            return first, second

    assert run(main()) == (b"bye", b"GET /after")
    assert len({port for port, *_ in server.seen}) == 2


def test_a_request_over_its_timeout_fails_and_its_late_reply_reaches_nobody(serve):
    server = Server()

    async def main():
        async with serve(server.app) as url:
            pool = Pool(url, None)
            with pytest.raises(TimeoutError):
                await pool.request("GET", "/slow", params={"for": "0.3"}, headers=HEADERS, timeout=0.05)
            after = await (await pool.request("GET", "/after", headers=HEADERS, timeout=5)).read()
            pool.close()
            return after

    assert run(main()) == b"GET /after"


def test_a_path_in_the_server_address_prefixes_every_request(serve):
    server = Server()

    async def main():
        async with serve(server.app) as url:
            pool = Pool(url + "/k8s/clusters/c1/", None)
            await pool.request("GET", "/api/v1/nodes", headers=HEADERS, timeout=5)
            pool.close()

    run(main())
    assert server.seen[0][1] == "/k8s/clusters/c1/api/v1/nodes"


def test_requests_in_flight_are_capped(serve, monkeypatch):
    monkeypatch.setattr(http1, "MAX_CONNECTIONS", 3)
    server = Server()

    async def main():
        async with serve(server.app) as url:
            pool = Pool(url, None)
            replies = await asyncio.gather(
                *(pool.request("GET", "/slow", params={"for": "0.02"}, headers=HEADERS, timeout=5) for _ in range(10))
            )
            pool.close()
            return [r.status for r in replies]

    assert run(main()) == [200] * 10
    assert server.most_open == 3
    assert len({port for port, *_ in server.seen}) == 3


def test_a_stream_is_read_as_it_comes_and_its_connection_then_serves_others(serve):
    server = Server()

    async def main():
        async with serve(server.app) as url:
            pool = Pool(url, None)
            stream = await pool.stream("/chunks", params={}, headers=HEADERS, connect_timeout=5, timeout=0.3)
            pieces = []
            while piece := await stream.readany():
                pieces.append(piece)
            await asyncio.sleep(0.4)  # past the stream's deadline: it must not cut the reused connection
            after = await (await pool.request("GET", "/after", headers=HEADERS, timeout=5)).read()
            pool.close()
            return b"".join(pieces), len(pieces), after

    body, count, after = run(main())
    assert body == b"one\ntwo\nthree\n" and count >= 2
    assert after == b"GET /after"
    assert len({port for port, *_ in server.seen}) == 1


def test_a_stream_past_its_deadline_is_cut(serve):
    server = Server()

    async def main():
        async with serve(server.app) as url:
            pool = Pool(url, None)
            stream = await pool.stream("/hang", params={}, headers=HEADERS, connect_timeout=5, timeout=0.2)
            first = await stream.readany()
            with pytest.raises(ConnectionError, match="closed before the response was complete"):
                await stream.readany()
            pool.close()
            return first

    assert run(main()) == b"first\n"


def test_tls_with_the_server_certificate_as_ca():
    cert, key = self_signed("127.0.0.1")
    app = Server().app

    async def main():
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context(cert, key))
        await site.start()
        url = f"https://127.0.0.1:{runner.addresses[0][1]}"
        try:
            trusting = Pool(url, ssl.create_default_context(cadata=cert.decode()))
            body = await (await trusting.request("GET", "/secure", headers=HEADERS, timeout=5)).read()
            trusting.close()
            untrusting = Pool(url, ssl.create_default_context())
            with pytest.raises(ssl.SSLCertVerificationError):
                await untrusting.request("GET", "/secure", headers=HEADERS, timeout=5)
            untrusting.close()
            return body
        finally:
            with contextlib.suppress(Exception):
                await runner.cleanup()

    assert run(main()) == b"GET /secure"


@pytest.mark.parametrize("url", ["ftp://host", "host:6443", "https://"])
def test_a_server_address_that_is_not_http_is_refused(url):
    with pytest.raises(ValueError, match="not an http"):
        Pool(url, None)


@pytest.mark.parametrize(("method", "retried"), [("GET", True), ("POST", False)])
def test_a_kept_alive_connection_closed_under_a_get_is_retried_once_elsewhere(method, retried):
    """The server answers the first request on each connection and closes the connection when a
    second one arrives, as a server closing an idle connection just as it is reused."""
    connections = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        with contextlib.suppress(asyncio.IncompleteReadError):
            await serve_requests(reader, writer)

    async def serve_requests(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        answered = 0
        while head := await reader.readuntil(b"\r\n\r\n"):
            length = next((int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.startswith(b"Content-Length")), 0)
            await reader.readexactly(length)
            if answered:
                writer.close()
                return
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            answered += 1

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        pool = Pool(url, None)
        try:
            await pool.request(method, "/one", headers=HEADERS, body=None if method == "GET" else b"{}", timeout=5)
            second = await pool.request(
                method, "/two", headers=HEADERS, body=None if method == "GET" else b"{}", timeout=5
            )
            return await second.read()
        finally:
            pool.close()
            server.close()

    if retried:
        assert run(main()) == b"ok"
    else:
        with pytest.raises(ConnectionError):
            run(main())
    assert len(connections) == (2 if retried else 1)
