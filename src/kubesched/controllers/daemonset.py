"""The DaemonSet controller (upstream `pkg/controller/daemon`): one pod on every node the
template may run on, scheduled by the scheduler through a required node affinity naming the
node (as upstream does since 1.12), with the daemon tolerations; pods of an older template
replaced within maxUnavailable; the status `kubectl rollout status` reads."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

import msgspec
from lightkube.models import apps_v1 as apps
from lightkube.models import core_v1 as m
from lightkube.resources import apps_v1, core_v1

from kubesched.api.objects import key_of, meta_of, present
from kubesched.api.selectors import RequiredNodeAffinity
from kubesched.api.tolerations import find_untolerated_taint
from kubesched.controllers.base import ControllerContext, enqueue_controller, enqueue_on_change, work, write_status
from kubesched.controllers.deployment import _scaled, template_hash
from kubesched.controllers.informers import Key
from kubesched.controllers.owners import uid_of
from kubesched.controllers.pods import PodControl, from_template, is_active, is_available, is_ready, node_of
from kubesched.controllers.replicaset import labels_of
from kubesched.controllers.workqueue import WorkQueue

REVISION_HASH = "controller-revision-hash"
# The tolerations every daemon pod gets (upstream's `AddOrUpdateDaemonPodTolerations`).
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def daemon_spec(template_spec: m.PodSpec, node: str) -> m.PodSpec:
    """The template's pod spec for `node`: a required affinity to that node by name (replacing
    any required node affinity), and the daemon tolerations added."""
    term = m.NodeSelectorTerm(
        matchFields=[m.NodeSelectorRequirement(key="metadata.name", operator="In", values=[node])]
    )
    affinity = template_spec.affinity or m.Affinity()
    node_affinity = affinity.nodeAffinity or m.NodeAffinity()
    node_affinity = msgspec.structs.replace(
        node_affinity, requiredDuringSchedulingIgnoredDuringExecution=m.NodeSelector(nodeSelectorTerms=[term])
    )
    tolerations = list(template_spec.tolerations or ())
    wanted = [*DAEMON_TOLERATIONS, *((NETWORK_UNAVAILABLE,) if template_spec.hostNetwork else ())]
    for key, effect in wanted:
        if not any(t.key == key and t.effect == effect for t in tolerations):
            tolerations.append(m.Toleration(key=key, operator="Exists", effect=effect))
    return msgspec.structs.replace(
        template_spec, affinity=msgspec.structs.replace(affinity, nodeAffinity=node_affinity), tolerations=tolerations
    )


def should_run(template_spec: m.PodSpec, node: m.Node) -> tuple[bool, bool]:
    """Whether a daemon pod should be placed on `node`, and whether one there may stay
    (upstream's `NodeShouldRunDaemonPod`: the node selector and required affinity, the taints
    the pod does not tolerate — NoSchedule for placing, NoExecute for both)."""
    meta = meta_of(node)
    name = present(meta.name, "the node's name")
    tolerations = daemon_spec(template_spec, name).tolerations
    affinity = RequiredNodeAffinity(core_v1.Pod(spec=template_spec))
    if not affinity.matches(name, meta.labels):
        return False, False
    taints = node.spec.taints if node.spec else None
    if find_untolerated_taint(taints, tolerations, effects=("NoExecute",)) is not None:
        return False, False
    placing = find_untolerated_taint(taints, tolerations, effects=("NoSchedule",)) is None
    return placing, True


def _target(pod: m.Pod) -> str | None:
    """The node a daemon pod is for: where it runs, or the node its affinity names."""
    spec = present(pod.spec, "the pod's spec")
    if spec.nodeName:
        return str(spec.nodeName)
    affinity = spec.affinity.nodeAffinity if spec.affinity else None
    required = affinity.requiredDuringSchedulingIgnoredDuringExecution if affinity else None
    for term in (required.nodeSelectorTerms if required else None) or ():
        for field in term.matchFields or ():
            if field.key == "metadata.name" and field.operator == "In" and field.values:
                return str(field.values[0])
    return None


class DaemonSetController:
    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        self._sets = ctx.informers(apps_v1.DaemonSet)
        self._pods = ctx.informers(core_v1.Pod)
        self._nodes = ctx.informers(core_v1.Node)
        self._queue: WorkQueue[Key] = WorkQueue(ctx.clock)
        self._control = PodControl(ctx.cluster, self._pods, ctx.recorder("daemonset-controller"))
        self._sets.add_handler(enqueue_on_change(self._queue))
        self._pods.add_handler(enqueue_controller(self._queue, "DaemonSet"))
        self._nodes.add_handler(self._on_node)

    def _on_node(self, type_: str, node: core_v1.Node, old: core_v1.Node | None) -> None:
        if old is not None and type_ != "DELETED":
            same = (labels_of(old), old.spec.taints if old.spec else None) == (
                labels_of(node),
                node.spec.taints if node.spec else None,
            )
            if same:
                return
        for ds in self._sets.items():
            self._queue.add(key_of(ds))

    async def run(self) -> None:
        await work(self._queue, self.sync, name="daemonset")

    async def sync(self, key: Key) -> None:
        ds = self._sets.get(key)
        if ds is None:
            return
        spec = _spec(ds)
        pods = self._pods.controlled_by(uid_of(ds))
        revision = template_hash(spec.template)
        by_node: dict[str, list[core_v1.Pod]] = defaultdict(list)
        for pod in pods:
            if is_active(pod) and (target := _target(pod)) is not None:
                by_node[target].append(pod)
        nodes = {present(meta_of(n).name, "a node's name"): n for n in self._nodes.items()}
        desired = misscheduled = 0
        if meta_of(ds).deletionTimestamp is None:
            for name, node in sorted(nodes.items()):
                place, stay = should_run(_template_spec(ds), node)
                here = by_node.get(name, [])
                desired += place
                if place and not here:
                    await self._create(ds, name, revision)
                elif here and not stay:
                    misscheduled += 1
                    for pod in here:
                        await self._control.delete(pod, ds)
                elif len(here) > 1:
                    for pod in sorted(here, key=_created)[1:]:
                        await self._control.delete(pod, ds)
            for name, here in by_node.items():
                if name not in nodes:
                    for pod in here:
                        await self._control.delete(pod, ds)
            await self._roll(ds, by_node, nodes, revision)
        await self._write_status(ds, revision, desired, misscheduled)

    async def _create(self, ds: apps_v1.DaemonSet, node: str, revision: str) -> None:
        template = _spec(ds).template
        spec = daemon_spec(_template_spec(ds), node)
        pod = from_template(template, ds, labels={REVISION_HASH: revision}, spec=spec)
        await self._control.create(pod, ds)

    async def _roll(
        self,
        ds: apps_v1.DaemonSet,
        by_node: dict[str, list[core_v1.Pod]],
        nodes: dict[str, core_v1.Node],
        revision: str,
    ) -> None:
        """RollingUpdate: old-template pods deleted while the unavailable stay within
        maxUnavailable (their nodes get the new template's pod on the next sync)."""
        spec = _spec(ds)
        update = spec.updateStrategy
        if update is None or update.type != "RollingUpdate":
            return
        now = self._ctx.clock.now()
        wanted = sum(1 for n in nodes if by_node.get(n))
        max_unavailable = (
            _scaled(update.rollingUpdate.maxUnavailable if update.rollingUpdate else 1, wanted, round_up=True) or 1
        )
        unavailable = sum(
            1 for n in nodes if not any(is_available(p, spec.minReadySeconds, now) for p in by_node.get(n, ()))
        )
        for name in sorted(by_node):
            old = [p for p in by_node[name] if (labels_of(p) or {}).get(REVISION_HASH) != revision]
            if not old:
                continue
            available = any(is_available(p, spec.minReadySeconds, now) for p in by_node[name])
            if available and unavailable >= max_unavailable:
                continue
            for pod in old:
                await self._control.delete(pod, ds)
            unavailable += available

    async def _write_status(self, ds: apps_v1.DaemonSet, revision: str, desired: int, misscheduled: int) -> None:
        now = self._ctx.clock.now()
        min_ready = _spec(ds).minReadySeconds
        active = [p for p in self._pods.owned_by(uid_of(ds)) if is_active(p)]
        scheduled = {_target(p) for p in active if node_of(p)}
        available = sum(1 for p in active if is_available(p, min_ready, now))
        status = {
            "desiredNumberScheduled": desired,
            "currentNumberScheduled": len(scheduled),
            "numberMisscheduled": misscheduled,
            "numberReady": sum(1 for p in active if is_ready(p)),
            "numberAvailable": available,
            "updatedNumberScheduled": sum(
                1 for p in active if node_of(p) and (labels_of(p) or {}).get(REVISION_HASH) == revision
            ),
            "observedGeneration": meta_of(ds).generation,
            "numberUnavailable": max(0, desired - available),
        }
        current = ds.status
        if current is not None and all((getattr(current, k) or 0) == v for k, v in status.items()):
            return
        await write_status(self._ctx.cluster, self._sets, ds, status)


def _spec(ds: apps.DaemonSet) -> apps.DaemonSetSpec:
    return present(ds.spec, "the daemon set's spec")


def _template_spec(ds: apps.DaemonSet) -> m.PodSpec:
    return present(_spec(ds).template.spec, "the daemon set's pod template spec")


def _created(pod: m.Pod) -> datetime:
    return present(meta_of(pod).creationTimestamp, "a pod's creationTimestamp")
