"""`KubeWatch` against a scripted watch endpoint: events, bookmarks, resumption, Gone, stop."""

from __future__ import annotations

import asyncio
import logging

import msgspec
import pytest
from aiohttp import web
from lightkube.resources import core_v1

from kubesched.client import NotServed
from kubesched.cluster.errors import Forbidden, Gone

DROP = "drop"  # cut the connection mid-stream
HANG = "hang"  # keep the connection open, silent


def line(type_: str, name: str, rv: int, **extra) -> bytes:
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "resourceVersion": str(rv)}, **extra}
    return msgspec.json.encode({"type": type_, "object": obj}) + b"\n"


def bookmark(rv: int) -> bytes:
    return (
        msgspec.json.encode({"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": str(rv)}}})
        + b"\n"
    )


def error_line(code: int, reason: str, message: str) -> bytes:
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason}
    return msgspec.json.encode({"type": "ERROR", "object": {**status, "code": code}}) + b"\n"


def status_reply(code: int, reason: str, message: str = "") -> web.Response:
    body = {"kind": "Status", "status": "Failure", "message": message or reason, "reason": reason, "code": code}
    return web.json_response(body, status=code)


def reply(*args):
    async def handle(request: web.Request) -> web.Response:
        return status_reply(*args)

    return handle


class Script:
    """Each watch request plays the next connection: a list of steps (bytes to send, DROP, HANG), or
    an error reply. List requests get `listing`; discovery lists pods only."""

    def __init__(self, *connections, listing=None) -> None:
        self.connections = list(connections)
        self.listing = listing
        self.queries: list[dict[str, str]] = []
        self.list_queries: list[dict[str, str]] = []
        self.app = web.Application()
        self.app.router.add_route("GET", "/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == "/api/v1":
            return web.json_response({"resources": [{"name": "pods"}]})
        if request.query.get("watch") != "1":
            self.list_queries.append(dict(request.query))
            return web.json_response(self.listing)
        self.queries.append(dict(request.query))
        steps = self.connections.pop(0) if self.connections else [HANG]
        if isinstance(steps, web.Response):
            return steps
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for step in steps:
            if step == DROP:
                assert request.transport is not None
                request.transport.abort()
                return response
            if step == HANG:
                await asyncio.Event().wait()
            await response.write(step)
        await response.write_eof()
        return response

    def versions(self) -> list[str]:
        return [q["resourceVersion"] for q in self.queries]


def collect(serve, client_for, script: Script, count: int, **watch):
    """The first `count` events (type, name or None, rv) and the error that ended the watch, if any."""

    async def main():
        async with serve(script.app) as url, client_for(url) as c:
            stream = c.watch(core_v1.Pod, **watch)
            seen: list[tuple[str, str | None, str]] = []
            try:
                async for event in stream:
                    meta = event.object.metadata
                    seen.append((event.type, meta.name, meta.resourceVersion))
                    if len(seen) == count:
                        break
            except Exception as e:
                return seen, e, stream
            return seen, None, stream

    return asyncio.run(asyncio.wait_for(main(), 10))


def test_events_and_bookmarks_with_the_query_a_watch_sends(serve, client_for):
    script = Script([line("ADDED", "a", 2), bookmark(5), line("MODIFIED", "a", 6), HANG])
    seen, error, stream = collect(serve, client_for, script, 3, resource_version="1", label_selector="app=x")
    assert error is None
    assert seen == [("ADDED", "a", "2"), ("BOOKMARK", None, "5"), ("MODIFIED", "a", "6")]
    assert stream.resource_version == "6"
    query = script.queries[0]
    assert {k: query[k] for k in ("watch", "resourceVersion", "allowWatchBookmarks", "labelSelector")} == {
        "watch": "1",
        "resourceVersion": "1",
        "allowWatchBookmarks": "true",
        "labelSelector": "app=x",
    }
    assert 300 <= int(query["timeoutSeconds"]) < 600  # as client-go's reflector asks


def test_lines_split_across_chunks_and_batched_in_one(serve, client_for):
    first, second = line("ADDED", "a", 2), line("ADDED", "b", 3)
    script = Script([first[:10], first[10:] + second[:5], second[5:] + line("DELETED", "a", 4), HANG])
    seen, error, _ = collect(serve, client_for, script, 3, resource_version="1")
    assert error is None
    assert seen == [("ADDED", "a", "2"), ("ADDED", "b", "3"), ("DELETED", "a", "4")]


def test_a_dropped_connection_resumes_from_the_last_version_seen(serve, client_for, caplog):
    script = Script(
        [line("ADDED", "a", 2), line("ADDED", "b", 3), DROP],
        [bookmark(4), DROP],
        [line("MODIFIED", "a", 5), HANG],
    )
    with caplog.at_level(logging.WARNING, logger="kubesched.client.watch"):
        seen, error, _ = collect(serve, client_for, script, 4, resource_version="1")
    assert [r.getMessage().split(";")[0] for r in caplog.records] == [
        "watch pods: the connection was lost (ConnectionResetError: the connection closed before the response"
        " was complete)"
    ] * 2
    assert error is None
    assert seen == [("ADDED", "a", "2"), ("ADDED", "b", "3"), ("BOOKMARK", None, "4"), ("MODIFIED", "a", "5")]
    assert script.versions() == ["1", "3", "4"]


def test_a_watch_the_server_ends_is_reopened_at_once(serve, client_for):
    script = Script([line("ADDED", "a", 2)], [line("ADDED", "b", 3), HANG])
    seen, _, _ = collect(serve, client_for, script, 2, resource_version="1")
    assert seen == [("ADDED", "a", "2"), ("ADDED", "b", "3")]
    assert script.versions() == ["1", "2"]


def test_gone_in_the_stream_comes_after_the_events_before_it(serve, client_for):
    script = Script([line("ADDED", "a", 2), error_line(410, "Expired", "too old resource version: 1 (3)")])
    seen, error, stream = collect(serve, client_for, script, 5, resource_version="1")
    assert seen == [("ADDED", "a", "2")]
    assert type(error) is Gone and str(error) == "too old resource version: 1 (3)"
    assert stream.stopped


def test_gone_when_reconnecting_after_a_drop(serve, client_for):
    script = Script([line("ADDED", "a", 2), DROP], status_reply(410, "Gone", "too old resource version: 2 (9)"))
    seen, error, _ = collect(serve, client_for, script, 5, resource_version="1")
    assert seen == [("ADDED", "a", "2")]
    assert type(error) is Gone and script.versions() == ["1", "2"]


def test_transient_failures_are_retried_and_others_raised(serve, client_for):
    script = Script(
        status_reply(503, "ServiceUnavailable"),
        [error_line(500, "InternalError", "etcd hiccup")],
        status_reply(429, "TooManyRequests"),
        [line("ADDED", "a", 2), HANG],
    )
    seen, error, _ = collect(serve, client_for, script, 1, resource_version="1")
    assert seen == [("ADDED", "a", "2")] and error is None
    assert script.versions() == ["1", "1", "1", "1"]
    seen, error, _ = collect(serve, client_for, Script(status_reply(403, "Forbidden", "no")), 1, resource_version="1")
    assert seen == [] and type(error) is Forbidden


def test_a_line_that_is_not_an_event_is_retried_like_a_server_error(serve, client_for, caplog):
    script = Script([b"<html>oops</html>\n"], [line("ADDED", "a", 2), HANG])
    with caplog.at_level(logging.WARNING, logger="kubesched.client.watch"):
        seen, error, _ = collect(serve, client_for, script, 1, resource_version="1")
    assert seen == [("ADDED", "a", "2")] and error is None
    assert "the server sent a watch line that is not an event" in caplog.records[0].getMessage()


def test_without_a_version_it_lists_then_watches_from_the_list(serve, client_for):
    listing = {
        "kind": "PodList",
        "metadata": {"resourceVersion": "10"},
        "items": [
            {"metadata": {"name": "a", "resourceVersion": "4"}},
            {"metadata": {"name": "b", "resourceVersion": "9"}},
        ],
    }
    script = Script([line("DELETED", "a", 11), HANG], listing=listing)
    seen, _, _ = collect(serve, client_for, script, 3)
    assert seen == [("ADDED", "a", "4"), ("ADDED", "b", "9"), ("DELETED", "a", "11")]
    assert script.list_queries == [{"resourceVersion": "0"}]  # any version: a server may answer from its cache
    assert script.versions() == ["10"]


def test_a_kind_the_server_does_not_serve(serve, client_for):
    from lightkube.resources.apps_v1 import ControllerRevision

    async def main():
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", reply(404, "NotFound"))
        async with serve(app) as url, client_for(url) as c:
            with pytest.raises(NotServed):
                async for _ in c.watch(ControllerRevision, resource_version="1"):
                    pass

    asyncio.run(asyncio.wait_for(main(), 5))


def test_stop_ends_an_iteration_waiting_for_events(serve, client_for):
    script = Script([line("ADDED", "a", 2), HANG])

    async def main():
        async with serve(script.app) as url, client_for(url) as c:
            stream = c.watch(core_v1.Pod, resource_version="1")
            seen = []

            async def consume():
                async for event in stream:
                    seen.append(event.type)

            task = asyncio.ensure_future(consume())
            while not seen:
                await asyncio.sleep(0.01)
            stream.stop()
            await asyncio.wait_for(task, 1)
            return seen

    assert asyncio.run(main()) == ["ADDED"]


def test_close_stops_the_watches_waiting_out_a_backoff(serve, client_for):
    async def main():
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", reply(503, "ServiceUnavailable"))
        async with serve(app) as url:
            c = client_for(url)
            c.watch_backoff = (30.0, 30.0)
            stream = c.watch(core_v1.Pod, resource_version="1")
            task = asyncio.ensure_future(anext(stream, None))
            await asyncio.sleep(0.1)
            await c.close()
            return await asyncio.wait_for(task, 1)

    assert asyncio.run(main()) is None


def test_a_watch_closed_at_once_backs_off_and_says_so(serve, client_for, caplog):
    script = Script([], [], [line("ADDED", "a", 2), HANG])
    with caplog.at_level(logging.WARNING, logger="kubesched.client.watch"):
        seen, _, _ = collect(serve, client_for, script, 1, resource_version="1")
    assert seen == [("ADDED", "a", "2")]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2 and "the server ended the watch at once" in warnings[0]
    assert "resuming from resourceVersion 1" in warnings[0]
