"""Cluster events: what changed (resource and action), how plugins register interest, and the
QueueingHint a plugin gives for one pod and one event."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, IntFlag
from typing import Any

from lightkube.models import core_v1


class ActionType(IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_NODE_DECLARED_FEATURE = 128
    UPDATE_POD_LABEL = 256
    UPDATE_POD_SCALE_DOWN = 512
    UPDATE_POD_TOLERATION = 1024
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 2048
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 4096
    UPDATE = 8188
    ALL = 8191
    NONE = 0


_ACTION_NAMES = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_NODE_DECLARED_FEATURE: "UpdateNodeDeclaredFeature",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.UPDATE: "Update",
    ActionType.ALL: "All",
}

POD = "Pod"
NODE = "Node"
ASSIGNED_POD = "AssignedPod"
UNSCHEDULED_POD = "UnschedulablePod"
WILDCARD = "*"
_POD_RESOURCES = (ASSIGNED_POD, UNSCHEDULED_POD)


@dataclass(frozen=True)
class ClusterEvent:
    """A change in the cluster: `resource` (Pod, Node, ... or `*`) and `action` bits."""

    resource: str
    action: ActionType
    custom_label: str = ""
    target_uid: str = ""  # a wildcard event meant for one pod only (ForceActivate of that pod)

    @property
    def label(self) -> str:
        """`NodeAdd`, `AssignedPodDelete`...; a registration of several actions reads
        `Node(Add|UpdateNodeAllocatable)`."""
        if self.custom_label:
            return self.custom_label
        name = _ACTION_NAMES.get(self.action)
        if name is not None:
            return f"{self.resource}{name}"
        parts = [n for a, n in ((ActionType.ADD, "Add"), (ActionType.DELETE, "Delete")) if a & self.action]
        if self.action & ActionType.UPDATE == ActionType.UPDATE:
            parts.append("Update")
        else:
            updates = self.action & ActionType.UPDATE
            parts += [
                n for a, n in _ACTION_NAMES.items() if a & updates and a not in (ActionType.UPDATE, ActionType.ALL)
            ]
        return f"{self.resource}({'|'.join(parts)})"

    def is_wildcard(self) -> bool:
        return self.resource == WILDCARD and self.action == ActionType.ALL

    def matches(self, incoming: ClusterEvent) -> bool:
        """Whether this registered event covers `incoming` (which must be at least as specific)."""
        if self.is_wildcard():
            return True
        resource_ok = (
            self.resource == incoming.resource
            or self.resource == WILDCARD
            or (self.resource == POD and incoming.resource in _POD_RESOURCES)
        )
        return resource_ok and bool(self.action & incoming.action) and incoming.action <= self.action


class QueueingHint(Enum):
    QUEUE_SKIP = 0
    QUEUE = 1


# (pod, old object, new object) -> hint.
# Any: each hint function takes the kinds of the events it registers for
HintFn = Callable[[Any, Any, Any], QueueingHint]


@dataclass(frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: HintFn | None = None  # None behaves as always Queue


UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(WILDCARD, ActionType.ALL, "ForceActivate")
WILDCARD_EVENT = ClusterEvent(WILDCARD, ActionType.ALL)


def _conditions(node: core_v1.Node) -> dict[str, str]:
    return {c.type: c.status for c in ((node.status.conditions if node.status else None) or [])}


# Any: served nodes (their metadata is set), read unchecked on the watch path
def node_update_events(old: Any, new: Any) -> list[ClusterEvent]:
    """The events a node update produces, one per aspect that changed."""
    events: list[ClusterEvent] = []
    old_alloc = old.status.allocatable if old.status else None
    new_alloc = new.status.allocatable if new.status else None
    if old_alloc != new_alloc:
        events.append(ClusterEvent(NODE, ActionType.UPDATE_NODE_ALLOCATABLE))
    if old.metadata.labels != new.metadata.labels:
        events.append(ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL))
    old_spec, new_spec = old.spec, new.spec
    old_unsched = bool(old_spec and old_spec.unschedulable)
    new_unsched = bool(new_spec and new_spec.unschedulable)
    if (old_spec.taints if old_spec else None) != (new_spec.taints if new_spec else None) or (
        old_unsched and not new_unsched
    ):
        events.append(ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT))
    if _conditions(old) != _conditions(new):
        events.append(ClusterEvent(NODE, ActionType.UPDATE_NODE_CONDITION))
    if old.metadata.annotations != new.metadata.annotations:
        events.append(ClusterEvent(NODE, ActionType.UPDATE_NODE_ANNOTATION))
    return events


def pod_update_events(
    resource: str,
    old: Any,  # Any: a served pod (its metadata and spec are set), read unchecked on the watch path
    new: Any,  # Any: as `old`'s
    *,
    requests: Callable[[core_v1.Pod], dict[str, int]],
) -> list[ClusterEvent]:
    """The events a pod update produces (`resource` is AssignedPod or UnschedulablePod)."""
    events: list[ClusterEvent] = []
    if old.metadata.labels != new.metadata.labels:
        events.append(ClusterEvent(resource, ActionType.UPDATE_POD_LABEL))
    old_req, new_req = requests(old), requests(new)
    if any(name not in new_req or new_req[name] < value for name, value in old_req.items()):
        events.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCALE_DOWN))
    if bool(old.spec.schedulingGates) and not new.spec.schedulingGates:
        events.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED))
    if len(old.spec.tolerations or []) != len(new.spec.tolerations or []):
        events.append(ClusterEvent(resource, ActionType.UPDATE_POD_TOLERATION))
    return events or [ClusterEvent(resource, ActionType.UPDATE)]
