"""The in-process `Cluster` backend: async calls straight onto a `MemoryStore`."""

from __future__ import annotations

from typing import Any, TypeVar

from lightkube.resources import core_v1

from kubesched.api.objects import Served
from kubesched.cluster.protocol import ListResult
from kubesched.storage.store import MemoryStore
from kubesched.storage.watch import MemoryWatch

R = TypeVar("R", bound=Served)


class MemoryCluster:
    """A `Cluster` over a `MemoryStore`. Calls complete without yielding to the loop, as a
    request to a very fast API server would; only watch delivery takes (virtual) time."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    async def get(self, kind: type[R], name: str, *, namespace: str | None = None) -> R:
        return self.store.get(kind, name, namespace=namespace)

    async def list(
        self,
        kind: type[Served],
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str | None = None,
    ) -> ListResult[Any]:  # Any: objects of `kind`, whichever served class it is
        return self.store.list(
            kind,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
            continue_token=continue_token,
        )

    def watch(
        self,
        kind: type[Served],
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str | None = None,
    ) -> MemoryWatch:
        return self.store.watch(
            kind,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version=resource_version,
        )

    async def create(self, obj: R, *, namespace: str | None = None) -> R:
        return self.store.create(obj, namespace=namespace)

    async def update(self, obj: R, *, subresource: str | None = None) -> R:
        return self.store.update(obj, subresource=subresource)

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
        return self.store.patch(kind, name, patch, namespace=namespace, subresource=subresource, patch_type=patch_type)

    async def delete(
        self,
        kind: type[R],
        name: str,
        *,
        namespace: str | None = None,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
    ) -> R | None:
        return self.store.delete(
            kind,
            name,
            namespace=namespace,
            grace_period_seconds=grace_period_seconds,
            propagation_policy=propagation_policy,
        )

    async def bind(self, binding: object, *, namespace: str | None = None) -> None:
        self.store.post(core_v1.Pod, "binding", binding, namespace=namespace)
