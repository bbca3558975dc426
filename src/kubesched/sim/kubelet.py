"""Fake kubelets: node-side admission, pods that start and run, graceful termination.

One `FakeKubelets` serves every fake node (those carrying the fake-node annotation) through a
single pod watch, as KWOK does. For each pod bound to one of its nodes it does what a kubelet
does that matters to scheduling: admit the pod against the node's allocatable given the pods
already admitted there (or reject it, `OutOfcpu` and friends), start it after a delay, and when
the pod is deleted, stop it within its grace period and remove it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from lightkube.resources import core_v1

from kubesched.api.errors import FieldError
from kubesched.api.objects import key_of, meta_of, name_of, present
from kubesched.api.quantity import int_value, milli_value
from kubesched.api.resources import pod_requests
from kubesched.clock import Clock
from kubesched.clock.base import rfc3339
from kubesched.cluster import DELETED, ApiError, Cluster
from kubesched.cluster.events import NORMAL, WARNING, EventRecorder
from kubesched.cluster.protocol import BOOKMARK
from kubesched.sim.nodes import FAKE_NODE_ANNOTATION
from kubesched.trace import Tracer

RUN_SECONDS_ANNOTATION = "kubesched.io/run-seconds"
EXIT_CODE_ANNOTATION = "kubesched.io/exit-code"
_CORE_ORDER = ("cpu", "memory", "ephemeral-storage")


@dataclass(frozen=True)
class KubeletConfig:
    """`start_seconds`: from admission to Running. `stop_seconds`: how long containers take to
    exit after SIGTERM (None: they ignore it and are killed when the grace period ends).
    `complete_seconds`: how long the containers of a pod that is not restarted
    (restartPolicy Never or OnFailure, a Job's) run before they exit, unless the pod's
    `kubesched.io/run-seconds` annotation says; they exit with the code of its
    `kubesched.io/exit-code` annotation (0 by default: the pod Succeeded; else Failed)."""

    start_seconds: float = 1.0
    stop_seconds: float | None = 1.0
    complete_seconds: float = 5.0


@dataclass
class _Node:
    allocatable: dict[str, int]
    pod_cidr: str | None = None
    admitted: dict[str, dict[str, int]] = field(default_factory=dict)  # pod uid -> requests
    started: int = 0  # pods started so far, for pod IPs

    def next_pod_ip(self) -> str | None:
        if not self.pod_cidr:
            return None
        prefix = self.pod_cidr.split("/")[0].rsplit(".", 1)[0]
        self.started += 1
        return f"{prefix}.{self.started % 253 + 2}"


def _allocatable(node: core_v1.Node) -> dict[str, int]:
    out: dict[str, int] = {}
    for res, qty in ((node.status.allocatable if node.status else None) or {}).items():
        field_ = f"status.allocatable[{res}]"
        out[res] = milli_value(qty, field=field_) if res == "cpu" else int_value(qty, field=field_)
    return out


def admission_failure(node: _Node, requests: dict[str, int]) -> tuple[str, str] | None:
    """The kubelet's verdict for a pod on this node: None if it fits, else (reason, message)
    for the first resource that does not fit (pods, then cpu, memory, ephemeral-storage, others)."""
    used: dict[str, int] = {}
    for reqs in node.admitted.values():
        for res, v in reqs.items():
            used[res] = used.get(res, 0) + v
    checks = [("pods", 1, len(node.admitted))]
    extra = sorted(r for r in requests if r not in _CORE_ORDER)
    for res in (*_CORE_ORDER, *extra):
        if requests.get(res, 0) > 0:
            checks.append((res, requests[res], used.get(res, 0)))
    for res, want, in_use in checks:
        capacity = node.allocatable.get(res, 0)
        if want > capacity - in_use:
            message = (
                f"Node didn't have enough resource: {res}, requested: {want}, used: {in_use}, capacity: {capacity}"
            )
            return f"OutOf{res}", message
    return None


def _scheduled(pod: core_v1.Pod) -> list[dict[str, str]]:
    """The pod's PodScheduled condition, kept as the scheduler wrote it when the kubelet writes
    the conditions anew."""
    out = []
    for c in (pod.status.conditions if pod.status else None) or ():
        if c.type == "PodScheduled":
            condition = {"type": c.type, "status": c.status}
            if c.lastTransitionTime is not None:
                condition["lastTransitionTime"] = rfc3339(c.lastTransitionTime.timestamp())
            out.append(condition)
    return out


def _uid(pod: core_v1.Pod) -> str:
    return meta_of(pod).uid or ""


def _name(pod: core_v1.Pod) -> str:
    """`namespace/name`, as the kubelet's trace names a pod."""
    meta = meta_of(pod)
    return f"{meta.namespace}/{meta.name}"


class FakeKubelets:
    """The kubelets of every fake node, driven by one watch on pods and one on nodes."""

    def __init__(
        self,
        cluster: Cluster,
        clock: Clock,
        *,
        config: KubeletConfig | None = None,
        tracer: Tracer | None = None,
        serve: Collection[str] = (),
    ) -> None:
        """`serve`: the nodes to be the kubelet of by name, annotated or not (none given: every node
        annotated as fake)."""
        self._cluster = cluster
        self._serve = frozenset(serve)
        self._clock = clock
        self.config = config or KubeletConfig()
        self._trace = tracer or Tracer(clock.now)
        self._events = EventRecorder(cluster, clock, component="kubelet")
        self.nodes: dict[str, _Node] = {}
        self._host_ips: dict[str, str] = {}
        self._waiting: dict[str, list[core_v1.Pod]] = {}  # pods bound to a node not seen yet
        self._stopping: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Serve until cancelled."""
        await asyncio.gather(self._watch_nodes(), self._watch_pods())

    async def _watch_nodes(self) -> None:
        async for event in self._cluster.watch(core_v1.Node):
            if event.type == BOOKMARK:  # a live API server's: a version, no node
                continue
            node = event.object
            name = name_of(node)
            if event.type == DELETED or not self._serves(node):
                self.nodes.pop(name, None)
                continue
            try:
                allocatable = _allocatable(node)
            except FieldError:
                continue
            pod_cidr = node.spec.podCIDR if node.spec else None
            addresses = (node.status.addresses if node.status else None) or []
            internal = next((a.address for a in addresses if a.type == "InternalIP"), None)
            if internal is not None:
                self._host_ips[name] = internal
            if name in self.nodes:
                self.nodes[name].allocatable = allocatable
            else:
                self.nodes[name] = _Node(allocatable, pod_cidr)
                for pod in self._waiting.pop(name, []):
                    self._on_pod(pod, deleted=False)

    def _serves(self, node: core_v1.Node) -> bool:
        meta = meta_of(node)
        if self._serve:
            return meta.name in self._serve
        return FAKE_NODE_ANNOTATION in (meta.annotations or {})

    async def _watch_pods(self) -> None:
        async for event in self._cluster.watch(core_v1.Pod):
            if event.type == BOOKMARK:
                continue
            self._on_pod(event.object, deleted=event.type == DELETED)

    def _on_pod(self, pod: core_v1.Pod, *, deleted: bool) -> None:
        node_name = present(pod.spec, "the pod's spec").nodeName
        if not node_name or (self._serve and node_name not in self._serve):
            return
        node = self.nodes.get(node_name)
        meta = meta_of(pod)
        uid = _uid(pod)
        if deleted:
            if node is not None:
                node.admitted.pop(uid, None)
            self._stopping.discard(uid)
            return
        if node is None:
            self._waiting.setdefault(node_name, []).append(pod)
            return
        phase = pod.status.phase if pod.status else None
        if phase in ("Succeeded", "Failed"):
            node.admitted.pop(uid, None)
            return
        if meta.deletionTimestamp is not None:
            if uid in node.admitted and uid not in self._stopping:
                self._stopping.add(uid)
                self._spawn(self._stop(pod))
            return
        if uid in node.admitted or phase != "Pending":
            return
        self._admit(node, pod)

    def _admit(self, node: _Node, pod: core_v1.Pod) -> None:
        key = _name(pod)
        node_name = present(pod.spec, "the pod's spec").nodeName
        try:
            requests = pod_requests(pod)
        except FieldError as e:
            self._spawn(self._reject(pod, "UnexpectedAdmissionError", str(e)))
            return
        failure = admission_failure(node, requests)
        if failure is not None:
            reason, message = failure
            self._trace.emit("kubelet.rejected", pod=key, node=node_name, reason=reason, message=message)
            self._spawn(self._reject(pod, reason, message))
            return
        node.admitted[_uid(pod)] = requests
        self._trace.emit("kubelet.admitted", pod=key, node=node_name)
        self._spawn(self._start(pod))

    async def restart(self, node_name: str) -> list[str]:
        """The kubelet of `node_name` restarts. As a kubelet does on start, it admits every pod bound
        to the node anew, oldest first, against the allocatable the node has now, so a pod that ran
        before is rejected (Failed, `OutOf…`) when what is older no longer leaves it room. The
        rejected pods' `namespace/name`, in that order; KeyError for a node it does not serve."""
        node = self.nodes[node_name]
        listed = await self._cluster.list(core_v1.Pod, field_selector=f"spec.nodeName={node_name}")
        alive = [
            p
            for p in listed.items
            if (p.status.phase if p.status else None) not in ("Succeeded", "Failed")
            and meta_of(p).deletionTimestamp is None
        ]
        alive.sort(key=lambda p: (meta_of(p).creationTimestamp, name_of(p)))
        node.admitted.clear()
        self._trace.emit("kubelet.restarted", node=node_name, pods=len(alive))
        rejected = []
        for pod in alive:
            key = "/".join(key_of(pod))
            try:
                requests = pod_requests(pod)
            except FieldError as e:
                await self._reject(pod, "UnexpectedAdmissionError", str(e))
                rejected.append(key)
                continue
            failure = admission_failure(node, requests)
            if failure is None:
                node.admitted[_uid(pod)] = requests
                if (pod.status.phase if pod.status else None) == "Pending":
                    self._trace.emit("kubelet.admitted", pod=key, node=node_name)
                    self._spawn(self._start(pod))
                continue
            reason, message = failure
            self._trace.emit("kubelet.rejected", pod=key, node=node_name, reason=reason, message=message)
            await self._reject(pod, reason, message)
            rejected.append(key)
        return rejected

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:  # Any: a coroutine's yield and send types
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reject(self, pod: core_v1.Pod, reason: str, message: str) -> None:
        status = {"phase": "Failed", "reason": reason, "message": f"Pod was rejected: {message}"}
        if await self._patch_status(pod, status):
            await self._events.record(pod, WARNING, reason, message, host=present(pod.spec, "the pod's spec").nodeName)

    async def _start(self, pod: core_v1.Pod) -> None:
        await self._clock.sleep(self.config.start_seconds)
        if not self._still_admitted(pod):
            return
        spec = present(pod.spec, "the pod's spec")
        now = rfc3339(self._clock.now())
        ready = [
            {"type": t, "status": "True", "lastTransitionTime": now}
            for t in ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")
        ]
        running: dict[str, object] = {
            "phase": "Running",
            "startTime": now,
            "conditions": [*ready, *_scheduled(pod)],
            "containerStatuses": [
                {
                    "name": c.name,
                    "image": c.image or "",
                    "imageID": "",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": now}},
                }
                for c in spec.containers
            ],
        }
        node = self.nodes.get(spec.nodeName or "")
        ip = node.next_pod_ip() if node is not None else None
        if ip is not None:
            running["podIP"] = ip
            running["podIPs"] = [{"ip": ip}]
        host_ip = self._host_ips.get(spec.nodeName or "")
        if host_ip is not None:
            running["hostIP"] = host_ip
            running["hostIPs"] = [{"ip": host_ip}]
        if not await self._patch_status(pod, running):
            return
        self._trace.emit("kubelet.running", pod=_name(pod), node=spec.nodeName)
        for c in spec.containers:
            await self._event(pod, "Pulled", f'Container image "{c.image}" already present on machine')
            await self._event(pod, "Created", f"Created container: {c.name}")
            await self._event(pod, "Started", f"Started container {c.name}")
        annotations = meta_of(pod).annotations or {}
        run_for = annotations.get(RUN_SECONDS_ANNOTATION)
        if run_for is None and spec.restartPolicy in ("Never", "OnFailure"):
            run_for = self.config.complete_seconds
        if run_for is not None:
            await self._clock.sleep(float(run_for))
            if self._still_admitted(pod):
                await self._exit(pod, int(annotations.get(EXIT_CODE_ANNOTATION, 0)))

    async def _exit(self, pod: core_v1.Pod, code: int) -> None:
        """The containers exit with `code`: the pod Succeeded (0) or Failed."""
        spec = present(pod.spec, "the pod's spec")
        now = rfc3339(self._clock.now())
        reason = "Completed" if code == 0 else "Error"
        terminated = [
            {
                "name": c.name,
                "image": c.image or "",
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "started": False,
                "state": {"terminated": {"exitCode": code, "reason": reason, "finishedAt": now}},
            }
            for c in spec.containers
        ]
        conditions = [
            {"type": "PodReadyToStartContainers", "status": "False", "lastTransitionTime": now},
            {"type": "Initialized", "status": "True", "lastTransitionTime": now, "reason": "PodCompleted"},
            *(
                {"type": t, "status": "False", "lastTransitionTime": now, "reason": "PodCompleted"}
                for t in ("ContainersReady", "Ready")
            ),
            *_scheduled(pod),
        ]
        status = {
            "phase": "Succeeded" if code == 0 else "Failed",
            "containerStatuses": terminated,
            "conditions": conditions,
        }
        if await self._patch_status(pod, status):
            self._trace.emit("kubelet.exited", pod=_name(pod), node=spec.nodeName, code=code)

    async def _event(self, pod: core_v1.Pod, reason: str, message: str) -> None:
        await self._events.record(pod, NORMAL, reason, message, host=present(pod.spec, "the pod's spec").nodeName)

    async def _stop(self, pod: core_v1.Pod) -> None:
        meta, spec = meta_of(pod), present(pod.spec, "the pod's spec")
        grace = meta.deletionGracePeriodSeconds or 0
        for c in spec.containers:
            await self._event(pod, "Killing", f"Stopping container {c.name}")
        stop = self.config.stop_seconds
        await self._clock.sleep(grace if stop is None else min(grace, stop))
        self._trace.emit("kubelet.killed", pod=_name(pod), node=spec.nodeName, grace=grace)
        with contextlib.suppress(ApiError):
            await self._cluster.delete(core_v1.Pod, name_of(pod), namespace=meta.namespace, grace_period_seconds=0)

    def _still_admitted(self, pod: core_v1.Pod) -> bool:
        node = self.nodes.get(present(pod.spec, "the pod's spec").nodeName or "")
        uid = _uid(pod)
        return node is not None and uid in node.admitted and uid not in self._stopping

    async def _patch_status(self, pod: core_v1.Pod, status: Mapping[str, object]) -> bool:
        meta = meta_of(pod)
        patch = {"metadata": {"uid": meta.uid}, "status": status}
        try:
            await self._cluster.patch(core_v1.Pod, name_of(pod), patch, namespace=meta.namespace, subresource="status")
        except ApiError:
            return False
        return True
