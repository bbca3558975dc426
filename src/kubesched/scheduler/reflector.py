"""The loop under every informer, as client-go's reflector runs it: watch from the last version
seen; relist when the server no longer has that version or has never had it; back off and try
again when a watch or a list fails. It never gives up: only cancelling it stops it."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kubesched.api.objects import Served, meta_of
from kubesched.cluster import ApiError, Cluster, Gone, NotFound, TooLargeResourceVersion, WatchEvent
from kubesched.cluster.backoff import Backoff
from kubesched.cluster.protocol import BOOKMARK
from kubesched.trace import Tracer

log = logging.getLogger(__name__)

S = TypeVar("S", bound=Served)

BACKOFF = (0.8, 30.0)  # client-go's reflector backoff: initial and cap, in seconds


async def list_until_listed(relist: Callable[[], Awaitable[str]], kind: type[Served], *, trace: Tracer) -> str:
    """`relist()`'s version, trying again after a jittered backoff for as long as the API server
    cannot answer, one line on stderr per failed try, as kube-scheduler waits for its caches to
    sync at start. NotFound (the kind is not served) is the caller's to judge."""
    resource = kind.__name__
    backoff = Backoff(*BACKOFF, random.Random(resource))
    while True:
        try:
            return await relist()
        except NotFound:
            raise
        except ApiError as e:
            delay = backoff.next()
            trace.emit("informer.retry", resource=resource, resource_version=None, error=str(e), delay=round(delay, 3))
            log.warning("listing %s: %s; trying again in %.1fs", resource, e, delay)
            await asyncio.sleep(delay)


async def reflect(
    cluster: Cluster,
    kind: type[S],
    *,
    resource_version: str | None,
    relist: Callable[[], Awaitable[str]],
    handle: Callable[[WatchEvent[S]], None],
    trace: Tracer,
    field_selector: str = "",
) -> None:
    """Watch `kind` from `resource_version` (None: `relist()` first, which reconciles what the
    informer holds and returns the list's version), handing each event but bookmarks to `handle`."""
    resource = kind.__name__
    backoff = Backoff(*BACKOFF, random.Random(resource))
    rv = resource_version
    while True:
        try:
            if rv is None:
                rv = await relist()
            async for event in cluster.watch(kind, resource_version=rv, field_selector=field_selector):
                if event.type != BOOKMARK:
                    handle(event)
                rv = meta_of(event.object).resourceVersion or rv
                backoff.reset()
        except (Gone, TooLargeResourceVersion) as e:
            trace.emit("informer.relist", resource=resource, resource_version=rv, reason=e.reason)
            rv = None
        except ApiError as e:
            delay = backoff.next()
            trace.emit("informer.retry", resource=resource, resource_version=rv, error=str(e), delay=round(delay, 3))
            log.warning("%s informer: %s; trying again in %.1fs", resource, e, delay)
            await asyncio.sleep(delay)
