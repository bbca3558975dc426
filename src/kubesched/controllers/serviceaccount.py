"""The service account controller (upstream `pkg/controller/serviceaccount`, kube-controller-
manager's `serviceaccount`): every active namespace has a ServiceAccount named `default`, made
when the namespace appears and made again when it is deleted."""

from __future__ import annotations

from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.objects import meta_of, name_of, namespace_of
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

    def _on_namespace(self, type_: str, ns: core_v1.Namespace, old: core_v1.Namespace | None) -> None:
        if type_ != "DELETED":
            self._queue.add(("", name_of(ns)))

    def _on_account(self, type_: str, account: core_v1.ServiceAccount, old: core_v1.ServiceAccount | None) -> None:
        if type_ == "DELETED" and name_of(account) == DEFAULT_SERVICE_ACCOUNT:
            self._queue.add(("", namespace_of(account)))

    async def run(self) -> None:
        await work(self._queue, self.sync, name="serviceaccount")

    async def sync(self, key: Key) -> None:
        ns = self._namespaces.get(key)
        if ns is None or meta_of(ns).deletionTimestamp is not None:
            return
        name = name_of(ns)
        if self._accounts.get((name, DEFAULT_SERVICE_ACCOUNT)) is not None:
            return
        account = core_v1.ServiceAccount(metadata=meta_v1.ObjectMeta(name=DEFAULT_SERVICE_ACCOUNT, namespace=name))
        try:
            await self._ctx.cluster.create(account)
        except (AlreadyExists, Forbidden, NotFound):  # there already, or the namespace going or gone
            return
