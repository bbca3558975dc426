"""`KubeCluster`: the `Cluster` protocol over HTTP against a Kubernetes API server."""

from __future__ import annotations

import os
import random
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from lightkube.core.resource import NamespacedResource
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.errors import REQUIRED, FieldError
from kubesched.api.objects import Served
from kubesched.client.codec import decode, decode_dict, decode_list, is_status
from kubesched.client.config import DEFAULT_BURST, DEFAULT_QPS, ClientConfig
from kubesched.client.errors import NotServed, error_from_status
from kubesched.client.http1 import Response
from kubesched.client.transport import JSON, Transport
from kubesched.client.watch import KubeWatch
from kubesched.cluster.backoff import Backoff
from kubesched.cluster.codec import encode
from kubesched.cluster.errors import BadRequest, Invalid, NotFound
from kubesched.cluster.protocol import ListResult

R = TypeVar("R", bound=Served)

PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
MIN_WATCH_TIMEOUT = 300.0  # client-go's reflector asks for a watch timeout in [5, 10) minutes
WATCH_BACKOFF = (0.8, 30.0)  # client-go's reflector backoff: initial and cap, in seconds


@dataclass(frozen=True)
class Api:
    """Where a resource class lives on the server."""

    group: str
    version: str
    plural: str
    namespaced: bool

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def qualified(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None, name: str | None = None, subresource: str | None = None) -> str:
        path = self.prefix
        if self.namespaced and namespace is not None:
            path += f"/namespaces/{namespace}"
        path += f"/{self.plural}"
        if name is not None:
            path += f"/{name}"
        if subresource:
            path += f"/{subresource}"
        return path


_APIS: dict[type[Served], Api] = {}


def api_of(cls: type[Served]) -> Api:
    """The `Api` of a lightkube resource class; a TypeError for anything else."""
    api = _APIS.get(cls)
    if api is None:
        info = getattr(cls, "_api_info", None)
        if info is None:
            raise TypeError(f"kind {getattr(cls, '__name__', cls)!r} is not a lightkube resource")
        resource = info.resource
        api = _APIS[cls] = Api(resource.group, resource.version, info.plural, issubclass(cls, NamespacedResource))
    return api


class KubeCluster:
    """A `Cluster` backed by an API server over HTTP, behaving call for call as `MemoryCluster`:
    the same return values, the same `ApiError` subclasses. Objects are decoded by msgspec into
    lightkube's structs. A namespaced call without a namespace means "default" (all namespaces for
    `list` and `watch`). Besides the memory backend's errors: `NotServed` for a kind the server
    does not serve, `ConnectionFailed` when the server cannot be reached. Close it when done."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        watch_backoff: tuple[float, float] = WATCH_BACKOFF,
        seed: int | None = None,
    ) -> None:
        self.config = config
        self.transport = Transport(config)
        self.min_watch_timeout = min_watch_timeout
        self.watch_backoff = watch_backoff
        self._rng = random.Random(seed)
        self._watches: weakref.WeakSet[KubeWatch[Served]] = weakref.WeakSet()

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        context: str | None = None,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
    ) -> KubeCluster:
        """The cluster a kubeconfig file's context names (see `ClientConfig.from_kubeconfig`)."""
        return cls(replace(ClientConfig.from_kubeconfig(path, context=context), qps=qps, burst=burst))

    @classmethod
    def in_cluster(cls, *, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST) -> KubeCluster:
        """The cluster this pod runs in, through its service account."""
        return cls(replace(ClientConfig.in_cluster(), qps=qps, burst=burst))

    def client(self, purpose: str, *, timeout: float | None = None) -> KubeCluster:
        """Another client of the same server with the same credentials and limits but its own
        connections and token bucket, its user agent naming `purpose` — as kube-scheduler gives
        events and leader election clients of their own, so neither waits behind the other's
        traffic. `timeout` bounds each of its requests."""
        config = replace(self.config, user_agent=f"{self.config.user_agent}/{purpose}")
        if timeout is not None:
            config = replace(config, timeout=timeout)
        return KubeCluster(config, min_watch_timeout=self.min_watch_timeout, watch_backoff=self.watch_backoff)

    async def __aenter__(self) -> KubeCluster:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop the open watches and close the connections."""
        for watch in list(self._watches):
            watch.stop()
        await self.transport.close()

    # -- reading -------------------------------------------------------------------------------

    async def get(self, kind: type[R], name: str, *, namespace: str | None = None) -> R:
        api = api_of(kind)
        _, body = await self._request(api, "GET", self._named(api, name, namespace))
        return _decode(kind, body)

    async def list(
        self,
        kind: type[R],
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str | None = None,
    ) -> ListResult[Any]:  # Any: items of `kind`, which its callers read as they know them
        params = _selectors(label_selector, field_selector)
        if limit:
            params["limit"] = str(limit)
        if continue_token:
            params["continue"] = continue_token
        return await self._list(kind, namespace, params)

    async def _list(self, kind: type[R], namespace: str | None, params: dict[str, str]) -> ListResult[R]:
        api = api_of(kind)
        _, body = await self._request(api, "GET", api.path(namespace), params=params)
        page = decode_list(body, kind)
        meta = page.metadata
        more = meta.continue_ or None
        return ListResult(page.items or [], meta.resourceVersion, more, meta.remainingItemCount if more else None)

    def watch(
        self,
        kind: type[R],
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str | None = None,
    ) -> KubeWatch[R]:
        """A watch from `resource_version`; without one it starts with ADDED for every object (see
        `KubeWatch`). Errors, `Gone` included, are raised by the iteration."""
        api = api_of(kind)
        path = api.path(namespace)
        params = {**_selectors(label_selector, field_selector), "watch": "1", "allowWatchBookmarks": "true"}

        async def open_(rv: str) -> Response:
            timeout = self.min_watch_timeout * (1.0 + self._rng.random())
            query = {**params, "resourceVersion": rv, "timeoutSeconds": str(int(timeout))}
            try:
                return await self.transport.stream(path, query, timeout=timeout + 30.0)
            except NotFound as e:
                raise await self._unserved(api, e) from None

        async def list_() -> ListResult[R]:
            # resourceVersion 0 (any): a kube-apiserver answers from its watch cache, as it does
            # client-go's reflectors, instead of reading everything from etcd
            return await self._list(
                kind, namespace, {**_selectors(label_selector, field_selector), "resourceVersion": "0"}
            )

        watch = KubeWatch(
            open_=open_,
            list_=list_,
            kind=kind,
            resource_version=resource_version,
            backoff=Backoff(*self.watch_backoff, self._rng),
            what=f"{api.qualified} {namespace or ''}".rstrip(),
        )
        self._watches.add(watch)
        return watch

    async def serves(self, kind: type[Served]) -> bool:
        """Whether the server's discovery lists `kind`."""
        return await self._served(api_of(kind))

    async def _served(self, api: Api) -> bool:
        try:
            _, body = await self.transport.request("GET", api.prefix)
        except NotFound:
            return False
        resources = decode_dict(body).get("resources")
        return isinstance(resources, list) and any(
            isinstance(r, dict) and r.get("name") == api.plural for r in resources
        )

    # -- writing -------------------------------------------------------------------------------

    async def create(self, obj: R, *, namespace: str | None = None) -> R:
        cls = type(obj)
        api = api_of(cls)
        meta = getattr(obj, "metadata", None)
        ns = (namespace or (meta.namespace if meta else None) or "default") if api.namespaced else None
        _, body = await self._request(api, "POST", api.path(ns), body=encode(obj))
        return _decode(cls, body)

    async def update(self, obj: R, *, subresource: str | None = None) -> R:
        cls = type(obj)
        api = api_of(cls)
        meta = getattr(obj, "metadata", None)
        if meta is None or not meta.name:
            error = FieldError("metadata.name", None, "name is required", kind=REQUIRED)
            raise Invalid(getattr(obj, "kind", None) or cls.__name__, "", [error], group=api.group)
        path = self._named(api, meta.name, meta.namespace, subresource)
        _, body = await self._request(api, "PUT", path, body=encode(obj))
        return _decode(cls, body)

    async def patch(
        self,
        kind: type[R],
        name: str,
        patch: object,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        patch_type: str = "merge",
    ) -> R:
        api = api_of(kind)
        content_type = PATCH_TYPES.get(patch_type)
        if content_type is None:
            raise BadRequest(f"unsupported patch type {patch_type!r}")
        path = self._named(api, name, namespace, subresource)
        _, body = await self._request(api, "PATCH", path, body=encode(patch), content_type=content_type)
        return _decode(kind, body)

    async def delete(
        self,
        kind: type[R],
        name: str,
        *,
        namespace: str | None = None,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
    ) -> R | None:
        """The object as it now stands (being deleted gracefully) or as it was removed; None when
        the server answers with a `Status` instead."""
        api = api_of(kind)
        params = {} if grace_period_seconds is None else {"gracePeriodSeconds": str(grace_period_seconds)}
        if propagation_policy is not None:
            params["propagationPolicy"] = propagation_policy
        _, body = await self._request(api, "DELETE", self._named(api, name, namespace), params=params)
        return None if is_status(body) else _decode(kind, body)

    async def bind(self, binding: object, *, namespace: str | None = None) -> None:
        """POST the Binding to its pod's `binding` subresource (the collection's `bindings` when
        it names no pod). A `Status` failure, even in a 2xx reply, raises its error."""
        pods = api_of(core_v1.Pod)
        meta: meta_v1.ObjectMeta | None = getattr(binding, "metadata", None)
        ns = namespace or (meta.namespace if meta else None) or "default"
        name = meta.name if meta else None
        path = pods.path(ns, name, "binding") if name else f"{pods.prefix}/namespaces/{ns}/bindings"
        code, body = await self._request(pods, "POST", path, body=encode(binding))
        if body and is_status(body):
            status = decode_dict(body)
            if status.get("status") == "Failure":
                raise error_from_status(code, status)

    # -- plumbing ------------------------------------------------------------------------------

    def _named(self, api: Api, name: str, namespace: str | None, subresource: str | None = None) -> str:
        if not name:
            raise NotFound(f'{api.qualified} "" not found', kind=api.plural, group=api.group)
        return api.path((namespace or "default") if api.namespaced else None, name, subresource)

    async def _request(
        self,
        api: Api,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str = JSON,
    ) -> tuple[int, bytes]:
        try:
            return await self.transport.request(method, path, params=params, body=body, content_type=content_type)
        except NotFound as e:
            raise await self._unserved(api, e) from None

    async def _unserved(self, api: Api, error: NotFound) -> NotFound:
        """A 404 that names no kind is about the URL, not an object: `NotServed` when discovery
        agrees the kind is not there."""
        if error.kind or await self._served(api):
            return error
        version = f"{api.group}/{api.version}" if api.group else api.version
        return NotServed(f"the server does not serve {api.qualified} ({version})", kind=api.plural, group=api.group)


def _decode(cls: type[R], body: bytes) -> R:
    return decode(body, cls)


def _selectors(label_selector: str, field_selector: str) -> dict[str, str]:
    params = {}
    if label_selector:
        params["labelSelector"] = label_selector
    if field_selector:
        params["fieldSelector"] = field_selector
    return params
