"""What the UI may change in the cluster, when it is allowed to (`cluster up --ui-actions`; never
`kubesched run`): create a pod from the built-in template, delete a pod, cordon or uncordon a node,
add nodes. Each goes through the cluster's API as a client's request would, so the API's own
answers (AlreadyExists, Invalid, NotFound) are what the page is told."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.cluster import Cluster

PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"
MOST_NODES = 100  # nodes one request may add


class ActionError(ValueError):
    """A request the UI refuses before asking the API: its message names the field (a 400)."""


@dataclass(frozen=True, slots=True)
class Actions:
    """The cluster the UI acts on, and how it makes node `i` when asked to add nodes."""

    cluster: Cluster
    make_node: Callable[[int], core_v1.Node]

    async def create_pod(self, body: Mapping[str, object]) -> core_v1.Pod:
        """A pod of one pause container: `name` (required), `namespace` (default), `cpu` and
        `memory` requests, `priorityClassName`, `schedulerName`, `labels`."""
        name = _text(body, "name", required=True)
        namespace = _text(body, "namespace") or "default"
        requests = {r: value for r in ("cpu", "memory") if (value := _text(body, r))}
        labels = body.get("labels") or {}
        if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
            raise ActionError("labels: expected an object of strings")
        pod = core_v1.Pod(
            metadata=meta_v1.ObjectMeta(name=name, namespace=namespace, labels=dict(labels) or None),
            spec=m.PodSpec(
                containers=[
                    m.Container(
                        name="pause", image=PAUSE_IMAGE, resources=m.ResourceRequirements(requests=requests or None)
                    )
                ],
                priorityClassName=_text(body, "priorityClassName") or None,
                schedulerName=_text(body, "schedulerName") or None,
            ),
        )
        created: core_v1.Pod = await self.cluster.create(pod)
        return created

    async def delete_pod(self, namespace: str, name: str) -> None:
        await self.cluster.delete(core_v1.Pod, name, namespace=namespace)

    async def cordon(self, name: str, *, cordoned: bool) -> core_v1.Node:
        node: core_v1.Node = await self.cluster.patch(
            core_v1.Node, name, {"spec": {"unschedulable": True if cordoned else None}}
        )
        return node

    async def add_nodes(self, body: Mapping[str, object], existing: set[str]) -> list[str]:
        """`count` nodes (1 to MOST_NODES) from the cluster's template, at the first free indexes."""
        count = body.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MOST_NODES:
            raise ActionError(f"count: expected a number of nodes from 1 to {MOST_NODES}, got {count!r}")
        added: list[str] = []
        index = 0
        while len(added) < count and index <= len(existing) + count:  # every index past these is free
            node = self.make_node(index)
            index += 1
            name = node.metadata.name if node.metadata is not None else None
            if not name or name in existing:
                continue
            await self.cluster.create(node)
            added.append(name)
        return added


def _text(body: Mapping[str, object], field: str, *, required: bool = False) -> str:
    value = body.get(field)
    if value is None or value == "":
        if required:
            raise ActionError(f"{field}: required")
        return ""
    if not isinstance(value, str):
        raise ActionError(f"{field}: expected a string, got {value!r}")
    return value
