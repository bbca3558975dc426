"""`NodeInfo`: a node with the pods on it and what they use, kept incrementally."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

from lightkube.models import core_v1

from kubesched.api.errors import FieldError
from kubesched.api.quantity import int_value, milli_value
from kubesched.cache.podinfo import HostPort, PodInfo
from kubesched.cache.resource import CPU, Resource

_generations = itertools.count(1)


def next_generation() -> int:
    """A process-wide, increasing counter stamped on every NodeInfo change."""
    return next(_generations)


class ImageState:
    """An image's size and the nodes that have it; shared by every NodeInfo listing the image,
    so `num_nodes` is always current."""

    __slots__ = ("nodes", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.nodes: set[str] = set()

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)


def parse_allocatable(node: core_v1.Node) -> Resource:
    """The node's `status.allocatable` as a Resource (an unparsable quantity counts as 0)."""
    resource = Resource()
    for name, qty in ((node.status.allocatable if node.status else None) or {}).items():
        try:
            resource.set(name, milli_value(qty) if name == CPU else int_value(qty))
        except FieldError:
            resource.set(name, 0)
    return resource


def normalized_image_name(name: str) -> str:
    """An image name with `:latest` added when it has no tag (as ImageLocality compares names)."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


class NodeInfo:
    """What the scheduler knows about one node. `node` is None for a node that was deleted while
    pods still referenced it."""

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_cpu",
        "non_zero_memory",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    # Any: a served Node (metadata set), as the plugin API's signature has it
    def __init__(self, node: Any | None = None, name: str = "") -> None:
        self.node = node
        self.name = node.metadata.name if node is not None else name
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.requested = Resource()
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        self.allocatable = parse_allocatable(node) if node is not None else Resource()
        self.used_ports: Counter[HostPort] = Counter()
        self.image_states: dict[str, ImageState] = {}
        self.generation = next_generation()

    # Any: a served Node (metadata set), as the plugin API's signature has it
    def set_node(self, node: Any) -> None:
        self.node = node
        self.name = node.metadata.name
        self.allocatable = parse_allocatable(node)
        self.generation = next_generation()

    def add_pod(self, pod: PodInfo) -> None:
        self.pods.append(pod)
        if pod.has_affinity:
            self.pods_with_affinity.append(pod)
        if pod.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pod)
        self.requested.add(pod.requests)
        self.non_zero_cpu += pod.non_zero_cpu
        self.non_zero_memory += pod.non_zero_memory
        for port in pod.host_ports:
            self.used_ports[port] += 1
        self.generation = next_generation()

    def remove_pod(self, uid: str) -> bool:
        """Remove the pod with this UID; False if it is not on this node."""
        pod = next((p for p in self.pods if p.uid == uid), None)
        if pod is None:
            return False
        self.pods = [p for p in self.pods if p.uid != uid]
        self.pods_with_affinity = [p for p in self.pods_with_affinity if p.uid != uid]
        self.pods_with_required_anti_affinity = [p for p in self.pods_with_required_anti_affinity if p.uid != uid]
        self.requested.add(pod.requests, -1)
        self.non_zero_cpu -= pod.non_zero_cpu
        self.non_zero_memory -= pod.non_zero_memory
        for port in pod.host_ports:
            self.used_ports[port] -= 1
            if self.used_ports[port] <= 0:
                del self.used_ports[port]
        self.generation = next_generation()
        return True

    def port_conflicts(self, want: HostPort) -> bool:
        """Whether a wanted host port clashes with one in use (0.0.0.0 clashes with every address)."""
        ip, protocol, port = want
        for used_ip, used_protocol, used_port in self.used_ports:
            if used_port == port and used_protocol == protocol and (ip == "0.0.0.0" or used_ip in (ip, "0.0.0.0")):
                return True
        return False

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.requested = self.requested.clone()
        c.non_zero_cpu = self.non_zero_cpu
        c.non_zero_memory = self.non_zero_memory
        c.allocatable = self.allocatable.clone()
        c.used_ports = Counter(self.used_ports)
        c.image_states = dict(self.image_states)
        c.generation = self.generation
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)}, requested={self.requested})"
