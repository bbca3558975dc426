"""The service account controller (upstream `pkg/controller/serviceaccount`, kube-controller-
manager's `serviceaccount`): every active namespace has a ServiceAccount named `default`, made
when the namespace appears and made again when it is deleted."""

from __future__ import annotations

from typing import Any

from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.cluster import AlreadyExists, Forbidden, NotFound
from kubesched.controllers.base import ControllerContext, work
from kubesched.controllers.informers import Key
from kubesched.controllers.workqueue import WorkQueue

DEFAULT_SERVICE_ACCOUNT = "default"


class ServiceAccountController:
    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        self._namespaces = ctx.informers(core_v1.Namespace)
        self._accounts = ctx.informers(core_v1.ServiceAccount)
        self._queue: WorkQueue[Key] = WorkQueue(ctx.clock)
        self._namespaces.add_handler(self._on_namespace)
        self._accounts.add_handler(self._on_account)

    def _on_namespace(self, type_: str, ns: Any, old: Any | None) -> None:
        if type_ != "DELETED":
            self._queue.add(("", ns.metadata.name))

    def _on_account(self, type_: str, account: Any, old: Any | None) -> None:
        if type_ == "DELETED" and account.metadata.name == DEFAULT_SERVICE_ACCOUNT:
            self._queue.add(("", account.metadata.namespace))

    async def run(self) -> None:
        await work(self._queue, self.sync, name="serviceaccount")

    async def sync(self, key: Key) -> None:
        ns = self._namespaces.get(key)
        if ns is None or ns.metadata.deletionTimestamp is not None:
            return
        name = ns.metadata.name
        if self._accounts.get((name, DEFAULT_SERVICE_ACCOUNT)) is not None:
            return
        account = core_v1.ServiceAccount(metadata=meta_v1.ObjectMeta(name=DEFAULT_SERVICE_ACCOUNT, namespace=name))
        try:
            await self._ctx.cluster.create(account)
        except (AlreadyExists, Forbidden, NotFound):  # there already, or the namespace going or gone
            return
