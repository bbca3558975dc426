"""Watch over HTTP: a chunked stream of JSON lines, or of length-prefixed protobuf frames when the
client asks for protobuf, as kubectl and client-go read them."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import web

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


def _object_json(obj: Any) -> bytes:
    """Encode once per stored object version, however many watchers receive it."""
    return _JSON.get(obj, None, lambda: encode(obj))


def _object_protobuf(obj: Any) -> bytes | None:
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
    if target.name is not None:
        field = f"metadata.name={target.name}"
        selector = f"{q['fieldSelector']},{field}" if q.get("fieldSelector") else field
    else:
        selector = q.get("fieldSelector", "")
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
            field_selector=selector,
            resource_version=rv,
        )
    except (Gone, TooLargeResourceVersion) as e:  # told inside the stream, as kube-apiserver tells it
        watch = None
        gone = e
    content_type = envelope.WATCH_MEDIA_TYPE if as_protobuf else "application/json"
    response = web.StreamResponse(headers={"Content-Type": content_type, "Cache-Control": "no-cache"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    if watch is None:
        status = gone.status()
        wrapped = encode_protobuf(status) if as_protobuf else None
        await response.write(envelope.watch_frame(ERROR, wrapped) if wrapped else _line(ERROR, encode(status)))
        return response
    if initial:
        store.bookmark(watch, kind.cls, initial_events_end=True)

    def render(event: WatchEvent[Any]) -> bytes:
        obj = event.object
        if as_protobuf and (wrapped := _object_protobuf(obj)) is not None:
            return envelope.watch_frame(event.type, wrapped)
        if as_table and event.type != BOOKMARK:
            table = tables.table(kind, [obj], now=store.clock.now(), wide=True, include_object=include)
            return _line(event.type, encode(table))
        return _line(event.type, _object_json(obj))

    try:
        next_bookmark = store.clock.now() + bookmark_interval
        while True:
            now = store.clock.now()
            if now >= deadline:
                break
            wait = deadline - now
            if bookmarks:
                wait = min(wait, max(0.0, next_bookmark - now))
            try:
                first = await asyncio.wait_for(anext(watch), timeout=wait)
            except TimeoutError:
                if bookmarks and store.clock.now() >= next_bookmark:
                    store.bookmark(watch, kind.cls)
                    next_bookmark = store.clock.now() + bookmark_interval
                continue
            except StopAsyncIteration:
                break
            batch = [first, *watch.drain()]
            await response.write(b"".join(render(e) for e in batch))
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        watch.stop()
    with contextlib.suppress(ConnectionResetError):
        await response.write_eof()
    return response
