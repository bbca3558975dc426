"""`PodInfo`: a pod and what the scheduler derives from it once, so no hot loop parses anything."""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.api.priority import pod_priority
from kubesched.api.resources import pod_request_summary
from kubesched.api.selectors import RequiredNodeAffinity
from kubesched.cache.resource import Resource

HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort)


# Any: a served pod (spec set), as the plugin API's signature has it
def host_ports(pod: Any) -> list[HostPort]:
    """Host ports of the app containers and of restartable (sidecar) init containers."""
    ports: list[HostPort] = []
    sidecars = [c for c in pod.spec.initContainers or () if c.restartPolicy == "Always"]
    for c in [*(pod.spec.containers or ()), *sidecars]:
        for p in c.ports or ():
            if p.hostPort:
                ports.append((p.hostIP or "0.0.0.0", p.protocol or "TCP", p.hostPort))
    return ports


class PodInfo:
    """A pod with its parsed requests, priority, ports and affinity. Built once per pod version.

    `requests` are the pod's effective requests (init containers, sidecars, overhead);
    `non_zero_cpu`/`non_zero_memory` count a container without a request as 100m / 200Mi.
    """

    __slots__ = (
        "_required_affinity",
        "host_ports",
        "key",
        "name",
        "namespace",
        "non_zero_cpu",
        "non_zero_memory",
        "pod",
        "priority",
        "requests",
        "uid",
    )

    # Any: a served pod (metadata and spec set), as the plugin API's signature has it
    def __init__(self, pod: Any) -> None:
        meta = pod.metadata
        self.pod = pod
        self.name: str = meta.name
        self.namespace: str = meta.namespace or "default"
        self.key = f"{self.namespace}/{self.name}"
        self.uid: str = meta.uid or ""
        requests, self.non_zero_cpu, self.non_zero_memory = pod_request_summary(pod)
        self.requests = Resource.from_amounts(requests)
        self.priority = pod_priority(pod)
        self.host_ports = host_ports(pod)
        self._required_affinity: RequiredNodeAffinity | None = None

    @property
    def node_name(self) -> str:
        return self.pod.spec.nodeName or ""

    @property
    def required_affinity(self) -> RequiredNodeAffinity:
        """spec.nodeSelector and required node affinity, compiled on first use."""
        if self._required_affinity is None:
            self._required_affinity = RequiredNodeAffinity(self.pod)
        return self._required_affinity

    @property
    def has_affinity(self) -> bool:
        affinity = self.pod.spec.affinity
        return affinity is not None and (affinity.podAffinity is not None or affinity.podAntiAffinity is not None)

    @property
    def has_required_anti_affinity(self) -> bool:
        affinity = self.pod.spec.affinity
        anti = affinity.podAntiAffinity if affinity is not None else None
        return anti is not None and bool(anti.requiredDuringSchedulingIgnoredDuringExecution)

    def with_node(self, node_name: str) -> PodInfo:
        """A copy of this PodInfo whose pod is bound to `node_name` (the pod object is copied shallowly)."""
        clone = PodInfo.__new__(PodInfo)
        for slot in PodInfo.__slots__:
            setattr(clone, slot, getattr(self, slot))
        clone.pod = msgspec.structs.replace(self.pod, spec=msgspec.structs.replace(self.pod.spec, nodeName=node_name))
        return clone

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"
