"""Watch over HTTP: a chunked stream of JSON lines, or of length-prefixed protobuf frames when the
client asks for protobuf, as kubectl and client-go read them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import cast

from aiohttp import web

from kubesched.api.objects import Served
from kubesched.apiserver import negotiation, tables
from kubesched.apiserver.codec import encode_protobuf
from kubesched.apiserver.routing import Target
from kubesched.cluster.codec import encode
from kubesched.cluster.errors import BadRequest, Gone, TooLargeResourceVersion
from kubesched.cluster.protocol import BOOKMARK, ERROR, WatchEvent
from kubesched.storage import MemoryStore, MemoryWatch
from kubesched.storage.memo import IdentityMemo
from kubesched.storage.protobuf import envelope

DEFAULT_TIMEOUT = 1800.0  # the API server's minimum request timeout for watches
_ENCODED_LIMIT = 8192


_JSON: IdentityMemo[bytes] = IdentityMemo(_ENCODED_LIMIT)  # shared by all watchers
_PROTOBUF: IdentityMemo[bytes | None] = IdentityMemo(_ENCODED_LIMIT)


def _object_json(obj: object) -> bytes:
    """Encode once per stored object version, however many watchers receive it."""
    return _JSON.get(obj, None, lambda: encode(obj))


def _object_protobuf(obj: object) -> bytes | None:
    """The wrapped protobuf of a stored object version, encoded once for all watchers (None for a
    kind without one)."""
    return _PROTOBUF.get(obj, None, lambda: encode_protobuf(obj))


def _line(event_type: str, payload: bytes) -> bytes:
    return b'{"type":"' + event_type.encode() + b'","object":' + payload + b"}\n"


def _timeout(request: web.Request) -> float:
    raw = request.query.get("timeoutSeconds")
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise BadRequest(f"invalid value for timeoutSeconds: {raw!r}") from None


async def stream_watch(
    store: MemoryStore, request: web.Request, target: Target, *, bookmark_interval: float
) -> web.StreamResponse:
    """Serve one watch until `timeoutSeconds`, the client goes away, or the store refuses it."""
    q = request.query
    kind = target.kind
    deadline = store.clock.now() + _timeout(request)
    bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
    initial = q.get("sendInitialEvents") == "true"
    as_table = negotiation.wants_table(request.headers.get("Accept"))
    as_protobuf = not as_table and negotiation.wants_protobuf(request.headers.get("Accept"))
    include = tables.parse_include_object(q.get("includeObject"))
    rv = None if initial else q.get("resourceVersion")
    try:
        watch: MemoryWatch | None = store.watch(
            kind.cls,
            namespace=target.namespace,
            label_selector=q.get("labelSelector", ""),
            field_selector=_field_selector(target, q.get("fieldSelector", "")),
            resource_version=rv,
        )
    except (Gone, TooLargeResourceVersion) as e:  # told inside the stream, as kube-apiserver tells it
        watch = None
        gone = e
    response = await _stream(request, envelope.WATCH_MEDIA_TYPE if as_protobuf else "application/json")
    if watch is None:
        await response.write(_error_event(gone, as_protobuf=as_protobuf))
        return response
    if initial:
        store.bookmark(watch, kind.cls, initial_events_end=True)

    def render(event: WatchEvent[object]) -> bytes:
        obj = event.object
        if as_protobuf and (wrapped := _object_protobuf(obj)) is not None:
            return envelope.watch_frame(event.type, wrapped)
        if as_table and event.type != BOOKMARK:
            served = cast(Served, obj)  # a watch of kind.cls sends objects of kind.cls (a BOOKMARK's is not tabled)
            table = tables.table(kind, [served], now=store.clock.now(), wide=True, include_object=include)
            return _line(event.type, encode(table))
        return _line(event.type, _object_json(obj))

    try:
        await _pump(
            store,
            watch,
            response,
            render,
            cls=kind.cls,
            deadline=deadline,
            bookmarks=bookmarks,
            interval=bookmark_interval,
        )
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        watch.stop()
    with contextlib.suppress(ConnectionResetError):
        await response.write_eof()
    return response


async def _pump(
    store: MemoryStore,
    watch: MemoryWatch,
    response: web.StreamResponse,
    render: Callable[[WatchEvent[object]], bytes],
    *,
    cls: type[Served],
    deadline: float,
    bookmarks: bool,
    interval: float,
) -> None:
    """Write the watch's events as they come, in batches, with a BOOKMARK every `interval`
    seconds when the client allows them, until `deadline` or the watch ends."""
    next_bookmark = store.clock.now() + interval
    while True:
        now = store.clock.now()
        if now >= deadline:
            return
        wait = deadline - now
        if bookmarks:
            wait = min(wait, max(0.0, next_bookmark - now))
        try:
            first = await asyncio.wait_for(anext(watch), timeout=wait)
        except TimeoutError:
            if bookmarks and store.clock.now() >= next_bookmark:
                store.bookmark(watch, cls)
                next_bookmark = store.clock.now() + interval
            continue
        except StopAsyncIteration:
            return
        batch = [first, *watch.drain()]
        await response.write(b"".join(render(e) for e in batch))


async def _stream(request: web.Request, content_type: str) -> web.StreamResponse:
    """A chunked response begun, headers sent."""
    response = web.StreamResponse(headers={"Content-Type": content_type, "Cache-Control": "no-cache"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    return response


def _field_selector(target: Target, given: str) -> str:
    """The request's field selector, narrowed to the object a watch of one names."""
    if target.name is None:
        return given
    field = f"metadata.name={target.name}"
    return f"{given},{field}" if given else field


def _error_event(error: Gone | TooLargeResourceVersion, *, as_protobuf: bool) -> bytes:
    """An ERROR event carrying the Status of why the watch cannot start."""
    status = error.status()
    wrapped = encode_protobuf(status) if as_protobuf else None
    return envelope.watch_frame(ERROR, wrapped) if wrapped else _line(ERROR, encode(status))
