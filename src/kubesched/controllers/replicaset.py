"""The ReplicaSet controller (upstream `pkg/controller/replicaset`): as many active pods as
`spec.replicas` asks, created in slow-start batches of at most 500 per sync and deleted in
scale-down order; orphans matching the selector adopted, pods leaving it released; the status
counted from the pods."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from lightkube.models import apps_v1 as apps
from lightkube.resources import apps_v1, core_v1

from kubesched.api.errors import FieldError
from kubesched.api.objects import Named, key_of, meta_of, namespace_of, present
from kubesched.api.selectors import LabelSelectorMatcher, compile_label_selector
from kubesched.cluster import ApiError
from kubesched.controllers.base import ControllerContext, enqueue_on_change, patch_observed, work, write_status
from kubesched.controllers.informers import Key
from kubesched.controllers.owners import adoption_patch, controller_of, release_patch, uid_of
from kubesched.controllers.pods import PodControl, deletion_order, from_template, is_active, is_available, is_ready
from kubesched.controllers.workqueue import WorkQueue

BURST_REPLICAS = 500  # the most pods one sync creates or deletes
SLOW_START_INITIAL_BATCH = 1


def selector_of(obj: apps.ReplicaSet | apps.Deployment) -> LabelSelectorMatcher | None:
    """The workload's compiled selector (None when it does not parse: nothing is matched)."""
    try:
        return compile_label_selector(obj.spec.selector if obj.spec else None)
    except FieldError:
        return None


def labels_of(obj: Named) -> dict[str, str] | None:
    return meta_of(obj).labels


async def slow_start(count: int, create: Callable[[], Awaitable[object]]) -> int:
    """Call `create()` `count` times in batches of 1, 2, 4, ...; a batch with a failure ends
    it. Returns how many succeeded (upstream's `slowStartBatch`)."""
    done = 0
    batch = min(count, SLOW_START_INITIAL_BATCH)
    while batch > 0:
        failed: ApiError | None = None
        for _ in range(batch):
            try:
                await create()
                done += 1
            except ApiError as e:
                failed = e
        if failed is not None:
            raise failed
        batch = min(2 * batch, count - done)
    return done


class ReplicaSetController:
    def __init__(
        self,
        ctx: ControllerContext,
        *,
        cls: type[apps_v1.ReplicaSet] = apps_v1.ReplicaSet,
        component: str = "replicaset-controller",
    ) -> None:
        self._ctx = ctx
        self._cls = cls
        self._sets = ctx.informers(cls)
        self._pods = ctx.informers(core_v1.Pod)
        self._queue: WorkQueue[Key] = WorkQueue(ctx.clock)
        self._control = PodControl(ctx.cluster, self._pods, ctx.recorder(component))
        self._sets.add_handler(enqueue_on_change(self._queue))
        self._pods.add_handler(self._on_pod)

    def _on_pod(self, type_: str, pod: core_v1.Pod, old: core_v1.Pod | None) -> None:
        for p in (pod, old):
            if p is None:
                continue
            ref = controller_of(p)
            if ref is not None:
                if ref.kind == self._cls._api_info.resource.kind:
                    self._queue.add_batched((namespace_of(p), ref.name))
            elif type_ != "DELETED":
                for rs in self._sets.items(namespace_of(p)):
                    selector = selector_of(rs)
                    if selector is not None and selector.matches(labels_of(p)):
                        self._queue.add_batched(key_of(rs))

    async def run(self) -> None:
        await work(self._queue, self.sync, name="replicaset")

    async def sync(self, key: Key) -> None:
        rs = self._sets.get(key)
        if rs is None:
            return
        pods = await self._claim(rs)
        active = [p for p in pods if is_active(p)]
        if meta_of(rs).deletionTimestamp is None:
            await self._manage(rs, active, pods)
            active = [p for p in self._claimed(rs) if is_active(p)]
        await self._write_status(rs, active)

    def _claimed(self, rs: apps_v1.ReplicaSet) -> list[core_v1.Pod]:
        return self._pods.controlled_by(uid_of(rs))

    async def _claim(self, rs: apps_v1.ReplicaSet) -> list[core_v1.Pod]:
        """The pods the set controls, after adopting matching orphans and releasing owned pods
        its selector no longer matches (upstream's `ClaimPods`)."""
        selector = selector_of(rs)
        owned = self._claimed(rs)
        if selector is None:
            return owned
        claimed = []
        for pod in owned:
            if selector.matches(labels_of(pod)):
                claimed.append(pod)
            elif meta_of(pod).deletionTimestamp is None:
                await self._patch(pod, release_patch(pod, uid_of(rs)))
        if meta_of(rs).deletionTimestamp is None:
            for pod in self._pods.orphans(namespace_of(rs)):
                if meta_of(pod).deletionTimestamp is None and selector.matches(labels_of(pod)):
                    adopted = await self._patch(pod, adoption_patch(pod, rs))
                    if adopted is not None:
                        claimed.append(adopted)
        return claimed

    async def _patch(self, pod: core_v1.Pod, patch: dict[str, object]) -> core_v1.Pod | None:
        return await patch_observed(self._ctx.cluster, self._pods, pod, patch)

    async def _manage(self, rs: apps_v1.ReplicaSet, active: list[core_v1.Pod], pods: list[core_v1.Pod]) -> None:
        spec = _spec(rs)
        wanted = spec.replicas if spec.replicas is not None else 1
        diff = len(active) - wanted
        if diff < 0:
            template = present(spec.template, "the replica set's template")
            await slow_start(min(-diff, BURST_REPLICAS), lambda: self._control.create(from_template(template, rs), rs))
        elif diff > 0:
            for pod in deletion_order(active, pods)[: min(diff, BURST_REPLICAS)]:
                await self._control.delete(pod, rs)

    async def _write_status(self, rs: apps_v1.ReplicaSet, active: list[core_v1.Pod]) -> None:
        now = self._ctx.clock.now()
        spec = _spec(rs)
        template_labels = (spec.template.metadata.labels if spec.template and spec.template.metadata else None) or {}
        min_ready = spec.minReadySeconds
        ready = sum(1 for p in active if is_ready(p))
        available = sum(1 for p in active if is_available(p, min_ready, now))
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": sum(
                1 for p in active if all((labels_of(p) or {}).get(k) == v for k, v in template_labels.items())
            ),
            "readyReplicas": ready,
            "availableReplicas": available,
            "observedGeneration": meta_of(rs).generation,
        }
        current = rs.status
        if min_ready and ready > available:
            self._queue.add_after(key_of(rs), float(min_ready))
        if current is not None and all((getattr(current, k) or 0) == v for k, v in status.items()):
            return
        await write_status(self._ctx.cluster, self._sets, rs, status)


def _spec(rs: apps.ReplicaSet) -> apps.ReplicaSetSpec:
    return present(rs.spec, "the replica set's spec")
