"""What every built-in controller stands on: its context (the cluster, the clock, the shared
informers, an event recorder, the trace) and the loop that syncs the keys of its work queue."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from kubesched.api.objects import Named, Served, key_of, meta_of, name_of, namespace_of
from kubesched.clock import Clock
from kubesched.cluster import ApiError, Cluster, NotFound
from kubesched.cluster.events import EventRecorder
from kubesched.cluster.protocol import MODIFIED
from kubesched.controllers.informers import Handler, Informer, Informers, Key
from kubesched.controllers.owners import controller_of
from kubesched.controllers.workqueue import WorkQueue
from kubesched.storage.strategy import strategy_of
from kubesched.trace import Tracer

log = logging.getLogger(__name__)

S = TypeVar("S", bound=Served)
Item = TypeVar("Item", bound=tuple[Hashable, ...])


@dataclass
class ControllerContext:
    """What the controller manager lends each controller. `namespaced_kinds`: the classes of the
    namespaced kinds served now (what the namespace controller empties); `kinds`: every kind
    served (what the garbage collector watches)."""

    cluster: Cluster
    clock: Clock
    informers: Informers
    tracer: Tracer
    namespaced_kinds: Callable[[], Iterable[type[Served]]] = field(default=lambda: ())
    kinds: Callable[[], Iterable[type[Served]]] = field(default=lambda: ())

    def recorder(self, component: str) -> EventRecorder:
        return EventRecorder(self.cluster, self.clock, component=component)


def enqueue_on_change(queue: WorkQueue[Key]) -> Handler[Named]:
    """A handler for a controller's own kind: the object's key, on add and delete and on an
    update of its spec or metadata — not on the status writes its controller makes."""

    def handle(type_: str, obj: Named, old: Named | None) -> None:
        if type_ == MODIFIED and old is not None and _without_version(old) == _without_version(obj):
            return
        queue.add(key_of(obj))

    return handle


def _without_version(obj: Named) -> tuple[object, ...]:
    meta = meta_of(obj)
    return (
        meta.generation,
        meta.labels,
        meta.annotations,
        meta.deletionTimestamp,
        meta.finalizers,
        meta.ownerReferences,
    )


async def patch_observed(
    cluster: Cluster, informer: Informer[S], obj: Named, patch: Mapping[str, object], *, subresource: str | None = None
) -> S | None:
    """Merge-patch `obj` (of the informer's kind) and tell the informer what came back: the
    object, or its removal when the patch ended its deletion. None when it is gone already."""
    meta = meta_of(obj)
    try:
        patched = await cluster.patch(
            informer.cls, name_of(obj), patch, namespace=meta.namespace, subresource=subresource
        )
    except NotFound:
        return None
    if strategy_of(informer.cls).deleted_during_update(patched):
        informer.observe_removed(patched)
    else:
        informer.observe(patched)
    return patched


async def write_status(cluster: Cluster, informer: Informer[S], obj: Named, status: Mapping[str, object]) -> None:
    """Merge `status` into the object's status subresource (an object deleted meanwhile has no
    status left to keep)."""
    await patch_observed(cluster, informer, obj, {"status": status}, subresource="status")


def enqueue_controller(queue: WorkQueue[Key], kind: str) -> Handler[Named]:
    """A handler for a dependent kind (pods): the key of the `kind` object controlling the
    changed object, batched."""

    def handle(type_: str, obj: Named, old: Named | None) -> None:
        ref = controller_of(obj)
        if ref is not None and ref.kind == kind:
            queue.add_batched((namespace_of(obj), ref.name))

    return handle


class Controller(Protocol):
    """A controller runs until cancelled."""

    async def run(self) -> None: ...


async def work(queue: WorkQueue[Item], sync: Callable[[Item], Awaitable[None]], *, name: str) -> None:
    """Sync each key the queue hands out; an API error retries the key with backoff, anything
    else is logged and retried the same way (a controller never dies of one object)."""
    while True:
        key = await queue.get()
        started = time.perf_counter()
        try:
            await sync(key)
        except ApiError:
            queue.retry(key)
        except Exception:
            log.exception("%s: syncing %s failed", name, "/".join(map(str, key)))
            queue.retry(key)
        else:
            queue.forget(key)
        finally:
            queue.done(key, cost=time.perf_counter() - started)
