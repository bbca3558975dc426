"""The `Cluster` protocol: what the scheduler, kubelets and tools need from an API server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

import msgspec
from lightkube.models import meta_v1

from kubesched.api.objects import Served

R = TypeVar("R", bound=Served)
T = TypeVar("T")

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"


class Bookmark(msgspec.Struct, omit_defaults=True):
    """A BOOKMARK's object: the kind and a resourceVersion, nothing else, as the API server sends
    it (a kind's own class may require fields a bookmark does not have)."""

    apiVersion: str = ""
    kind: str = ""
    metadata: meta_v1.ObjectMeta = msgspec.field(default_factory=meta_v1.ObjectMeta)


class WatchEvent(NamedTuple, Generic[T]):
    """A watch notification: `type` is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR; `object` the
    watched kind's object. A BOOKMARK's carries only what every kind has, its resourceVersion in
    `metadata` (a `Bookmark`, as client-go's is an object of the kind with only that set): read
    `type` before anything but `object.metadata`."""

    type: str
    object: T


class ListResult(NamedTuple, Generic[T]):
    """A page of a list: `continue_token` is set when more items follow (`remaining` of them)."""

    items: list[T]
    resource_version: str
    continue_token: str | None = None
    remaining: int | None = None


class WatchStream(Protocol[T]):
    """An open watch: iterate for events; `stop()` ends the iteration."""

    def __aiter__(self) -> AsyncIterator[WatchEvent[T]]: ...

    async def __anext__(self) -> WatchEvent[T]: ...

    def stop(self) -> None: ...


class Cluster(Protocol):
    """Access to one cluster's API. Objects are lightkube resource structs.

    Objects returned are shared with the backend's caches and must be treated as read-only;
    change a copy (`msgspec.structs.replace`) and send it back with `update` or `patch`.
    """

    async def get(self, kind: type[R], name: str, *, namespace: str | None = None) -> R: ...

    async def list(
        self,
        kind: type[R],
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str | None = None,
    ) -> ListResult[R]: ...

    def watch(
        self,
        kind: type[R],
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str | None = None,
    ) -> WatchStream[R]: ...

    async def create(self, obj: R, *, namespace: str | None = None) -> R: ...

    async def update(self, obj: R, *, subresource: str | None = None) -> R: ...

    async def patch(
        self,
        kind: type[R],
        name: str,
        patch: Any,  # Any: a patch document of `patch_type`, as the backend encodes it
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        patch_type: str = "merge",
    ) -> R: ...

    async def delete(
        self,
        kind: type[R],
        name: str,
        *,
        namespace: str | None = None,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
    ) -> R | None: ...

    async def bind(self, binding: object, *, namespace: str | None = None) -> None: ...
