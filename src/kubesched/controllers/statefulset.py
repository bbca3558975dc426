"""The StatefulSet controller (upstream `pkg/controller/statefulset`): pods `<set>-0` … with
stable names, created in order — under OrderedReady each only once the one before is Running
and Ready — and removed from the highest ordinal down; failed pods recreated; a RollingUpdate
replaces pods of an older template from the highest ordinal down to the partition, one at a
time."""

from __future__ import annotations

import msgspec
from lightkube.models import apps_v1 as apps
from lightkube.resources import apps_v1, core_v1

from kubesched.api.objects import Named, meta_of, present
from kubesched.controllers.base import ControllerContext, enqueue_controller, enqueue_on_change, work, write_status
from kubesched.controllers.daemonset import REVISION_HASH
from kubesched.controllers.deployment import template_hash
from kubesched.controllers.informers import Key
from kubesched.controllers.owners import uid_of
from kubesched.controllers.pods import PodControl, from_template, is_available, is_ready, phase
from kubesched.controllers.replicaset import labels_of
from kubesched.controllers.workqueue import WorkQueue

POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"


def _ordinal(set_name: str | None, pod: Named) -> int | None:
    prefix, _, number = (meta_of(pod).name or "").rpartition("-")
    return int(number) if prefix == set_name and number.isdigit() else None


class StatefulSetController:
    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        self._sets = ctx.informers(apps_v1.StatefulSet)
        self._pods = ctx.informers(core_v1.Pod)
        self._queue: WorkQueue[Key] = WorkQueue(ctx.clock)
        self._control = PodControl(ctx.cluster, self._pods, ctx.recorder("statefulset-controller"))
        self._sets.add_handler(enqueue_on_change(self._queue))
        self._pods.add_handler(enqueue_controller(self._queue, "StatefulSet"))

    async def run(self) -> None:
        await work(self._queue, self.sync, name="statefulset")

    def _message(self, verb: str, pod_name: str, set_name: str) -> str:
        return f"{verb} Pod {pod_name} in StatefulSet {set_name} successful"

    async def sync(self, key: Key) -> None:
        sts = self._sets.get(key)
        if sts is None:
            return
        meta = meta_of(sts)
        pods: dict[int, core_v1.Pod] = {}
        for pod in self._pods.controlled_by(uid_of(sts)):
            ordinal = _ordinal(meta.name, pod)
            if ordinal is not None:
                pods[ordinal] = pod
        revision = template_hash(_spec(sts).template)
        if meta.deletionTimestamp is None:
            await self._manage(sts, pods, revision)
        await self._write_status(sts, revision)

    async def _manage(self, sts: apps_v1.StatefulSet, pods: dict[int, core_v1.Pod], revision: str) -> None:
        name = str(meta_of(sts).name)
        spec = _spec(sts)
        replicas = spec.replicas if spec.replicas is not None else 1
        ordered = spec.podManagementPolicy != "Parallel"
        now = self._ctx.clock.now()
        for i in range(replicas):
            pod = pods.get(i)
            if pod is not None and phase(pod) == "Failed" and meta_of(pod).deletionTimestamp is None:
                await self._control.delete(pod, sts, message=self._message("delete", _name(pod), name))
                return
            if pod is None:
                await self._control.create(
                    self._pod(sts, i, revision), sts, message=self._message("create", f"{name}-{i}", name)
                )
                if ordered:
                    return
                continue
            if ordered and (meta_of(pod).deletionTimestamp is not None or not is_ready(pod)):
                return
        for i in sorted((i for i in pods if i >= replicas), reverse=True):
            pod = pods[i]
            if meta_of(pod).deletionTimestamp is None:
                await self._control.delete(pod, sts, message=self._message("delete", _name(pod), name))
            if ordered:
                return
        update = spec.updateStrategy
        if update is None or update.type != "RollingUpdate":
            return
        partition = (update.rollingUpdate.partition if update.rollingUpdate else None) or 0
        for i in range(replicas - 1, partition - 1, -1):
            pod = pods.get(i)
            if pod is None or meta_of(pod).deletionTimestamp is not None:
                return
            if (labels_of(pod) or {}).get(REVISION_HASH) != revision:
                await self._control.delete(pod, sts, message=self._message("delete", _name(pod), name))
                return
            if not is_available(pod, spec.minReadySeconds, now):
                return

    def _pod(self, sts: apps_v1.StatefulSet, ordinal: int, revision: str) -> core_v1.Pod:
        name = f"{meta_of(sts).name}-{ordinal}"
        labels = {REVISION_HASH: revision, POD_NAME: name, POD_INDEX: str(ordinal)}
        spec = _spec(sts)
        pod_spec = present(spec.template.spec, "the stateful set's pod template spec")
        pod_spec = msgspec.structs.replace(pod_spec, hostname=name, subdomain=spec.serviceName or None)
        return from_template(spec.template, sts, name=name, labels=labels, spec=pod_spec)

    async def _write_status(self, sts: apps_v1.StatefulSet, revision: str) -> None:
        now = self._ctx.clock.now()
        meta = meta_of(sts)
        min_ready = _spec(sts).minReadySeconds
        pods = [p for p in self._pods.owned_by(uid_of(sts)) if phase(p) not in ("Succeeded", "Failed")]
        updated = sum(1 for p in pods if (labels_of(p) or {}).get(REVISION_HASH) == revision)
        status = {
            "observedGeneration": meta.generation,
            "replicas": len(pods),
            "readyReplicas": sum(1 for p in pods if is_ready(p)),
            "availableReplicas": sum(1 for p in pods if is_available(p, min_ready, now)),
            "currentReplicas": updated,
            "updatedReplicas": updated,
            "currentRevision": f"{meta.name}-{revision}",
            "updateRevision": f"{meta.name}-{revision}",
        }
        current = sts.status
        if current is not None and all(getattr(current, k) == v for k, v in status.items()):
            return
        await write_status(self._ctx.cluster, self._sets, sts, status)


def _spec(sts: apps.StatefulSet) -> apps.StatefulSetSpec:
    return present(sts.spec, "the stateful set's spec")


def _name(pod: Named) -> str:
    return str(meta_of(pod).name)
