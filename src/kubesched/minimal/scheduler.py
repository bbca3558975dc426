"""A Kubernetes scheduler from scratch: watch, pick a node, POST a Binding. Nothing else.

It keeps its own picture of each node's free CPU, memory and pod slots, from a list and the watch
after it: a pod counts against a node once the API server has told us it is bound there. It does
NOT assume: after binding a pod it does not subtract the pod from the node's free resources
itself, and it has no cache of in-flight decisions. Until the watch event for a binding
arrives, the node looks as empty as before, so a burst of pods all lands on the same "emptiest"
node and the kubelet there rejects the ones that do not fit. kube-scheduler avoids this by
assuming the pod into its cache before the bind is even sent (see docs/minimal.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.errors import FieldError
from kubesched.api.quantity import int_value, milli_value
from kubesched.api.resources import pod_requests
from kubesched.clock import Clock
from kubesched.cluster import ADDED, DELETED, MODIFIED, ApiError, Cluster
from kubesched.cluster.events import NORMAL, WARNING, EventRecorder
from kubesched.trace import Tracer

NAME = "minimal-scheduler"


@dataclass
class NodeView:
    """What this scheduler believes about one node."""

    cpu: int  # allocatable milli-CPU
    memory: int  # allocatable bytes
    pods: int  # allocatable pod slots
    used_cpu: int = 0
    used_memory: int = 0
    placed: set[str] = field(default_factory=set)  # uids of pods counted here

    def free_cpu(self) -> int:
        return self.cpu - self.used_cpu

    def free_memory(self) -> int:
        return self.memory - self.used_memory

    def fits(self, cpu: int, memory: int) -> bool:
        return len(self.placed) < self.pods and cpu <= self.free_cpu() and memory <= self.free_memory()


def _node_view(node: Any) -> NodeView:  # Any: a Node, read duck-typed to stay short
    alloc = (node.status.allocatable if node.status else None) or {}
    return NodeView(
        cpu=milli_value(alloc.get("cpu", 0), field="status.allocatable[cpu]"),
        memory=int_value(alloc.get("memory", 0), field="status.allocatable[memory]"),
        pods=int_value(alloc.get("pods", 0), field="status.allocatable[pods]"),
    )


class MinimalScheduler:
    """Schedules pods whose `spec.schedulerName` is `name`, onto the fitting node with the most free CPU."""

    def __init__(self, cluster: Cluster, clock: Clock, *, name: str = NAME, tracer: Tracer | None = None) -> None:
        self.cluster = cluster
        self.clock = clock
        self.name = name
        self.nodes: dict[str, NodeView] = {}
        self.pending: dict[str, Any] = {}  # Any: uid -> pod waiting for room
        self._counted: dict[str, tuple[str, int, int]] = {}  # uid -> (node, cpu, memory)
        self._trace = tracer or Tracer(clock.now)
        self._events = EventRecorder(cluster, clock, component=name)

    async def run(self) -> None:
        """List, then watch nodes and pods from the lists' versions until cancelled."""
        nodes, pods = await self.sync()
        await asyncio.gather(
            self._watch(core_v1.Node, nodes, self._on_node), self._watch(core_v1.Pod, pods, self._on_pod)
        )

    async def sync(self) -> tuple[str, str]:
        """Read every node, then every pod (binding ours that wait), as informers list before they
        watch: no pod is placed before the nodes are known. The two lists' resourceVersions."""
        nodes = await self.cluster.list(core_v1.Node)
        for node in nodes.items:
            await self._on_node(ADDED, node)
        pods = await self.cluster.list(core_v1.Pod)
        for pod in pods.items:
            await self._on_pod(ADDED, pod)
        return nodes.resource_version, pods.resource_version  # Any below: a kind, its objects duck-typed

    async def _watch(self, kind: type[Any], version: str, handle: Callable[[str, Any], Awaitable[None]]) -> None:
        async for event in self.cluster.watch(kind, resource_version=version):
            if event.type in (ADDED, MODIFIED, DELETED):  # a bookmark carries no object of its own
                await handle(event.type, event.object)

    async def _on_node(self, kind: str, node: Any) -> None:  # Any: a Node, duck-typed
        name = node.metadata.name
        if kind == DELETED:
            self.nodes.pop(name, None)
            return
        try:
            view = _node_view(node)
        except FieldError:
            return
        old = self.nodes.get(name)
        if old is not None:
            view.used_cpu, view.used_memory, view.placed = old.used_cpu, old.used_memory, old.placed
        self.nodes[name] = view
        await self._retry_pending()

    async def _on_pod(self, kind: str, pod: Any) -> None:  # Any: a Pod, duck-typed
        uid = pod.metadata.uid
        finished = pod.status is not None and pod.status.phase in ("Succeeded", "Failed")
        if kind == DELETED or finished:
            self.pending.pop(uid, None)
            if self._forget(uid):
                await self._retry_pending()
        elif pod.spec.nodeName:
            self.pending.pop(uid, None)
            self._count(pod)
        elif pod.spec.schedulerName == self.name and pod.metadata.deletionTimestamp is None:
            await self.schedule(pod)

    def _count(self, pod: Any) -> None:  # Any: a Pod, duck-typed
        """A bound pod, as the watch reports it, uses room on its node from now on."""
        uid = pod.metadata.uid
        view = self.nodes.get(pod.spec.nodeName)
        if uid in self._counted or view is None:
            return
        try:
            req = pod_requests(pod)
        except FieldError:
            return
        cpu, memory = req.get("cpu", 0), req.get("memory", 0)
        view.used_cpu += cpu
        view.used_memory += memory
        view.placed.add(uid)
        self._counted[uid] = (pod.spec.nodeName, cpu, memory)

    def _forget(self, uid: str) -> bool:
        counted = self._counted.pop(uid, None)
        if counted is None:
            return False
        node, cpu, memory = counted
        view = self.nodes.get(node)
        if view is not None:
            view.used_cpu -= cpu
            view.used_memory -= memory
            view.placed.discard(uid)
        return True

    async def _retry_pending(self) -> None:
        for pod in list(self.pending.values()):
            await self.schedule(pod)

    def pick(self, cpu: int, memory: int) -> str | None:
        """The fitting node with the most free CPU (ties: the first name in order)."""
        best: str | None = None
        for name in sorted(self.nodes):
            view = self.nodes[name]
            if view.fits(cpu, memory) and (best is None or view.free_cpu() > self.nodes[best].free_cpu()):
                best = name
        return best

    async def schedule(self, pod: Any) -> None:  # Any: a Pod, duck-typed
        """One attempt: pick a node and POST the Binding. There is no assume step here."""
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        try:
            req = pod_requests(pod)
        except FieldError as e:
            self._trace.emit("minimal.invalid", pod=key, error=str(e))
            return
        node = self.pick(req.get("cpu", 0), req.get("memory", 0))
        if node is None:
            if pod.metadata.uid not in self.pending:
                self.pending[pod.metadata.uid] = pod
                message = f"0/{len(self.nodes)} nodes are available: no node has room for this pod."
                self._trace.emit("minimal.unschedulable", pod=key)
                await self._events.record(pod, WARNING, "FailedScheduling", message)
            return
        self.pending.pop(pod.metadata.uid, None)
        view = self.nodes[node]
        self._trace.emit(
            "minimal.picked", pod=key, node=node, free_cpu_seen=view.free_cpu(), free_memory_seen=view.free_memory()
        )
        binding = core_v1.Binding(
            metadata=meta_v1.ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace, uid=pod.metadata.uid),
            target=m.ObjectReference(kind="Node", name=node, apiVersion="v1"),
        )
        try:
            await self.cluster.bind(binding, namespace=pod.metadata.namespace)
        except ApiError as e:
            self._trace.emit("minimal.bind_failed", pod=key, node=node, error=e.message)
            return
        await self._events.record(pod, NORMAL, "Scheduled", f"Successfully assigned {key} to {node}")
