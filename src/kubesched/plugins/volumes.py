"""The volume plugins of the default profile: VolumeRestrictions, NodeVolumeLimits, VolumeBinding
and VolumeZone.

Volumes (PersistentVolumes, claims, CSI drivers, storage classes) are not modelled, so each plugin
behaves as upstream does for a pod that needs none of them: PreFilter returns Skip (so Filter does
not run), Filter passes, VolumeBinding's PreScore skips its Score and its Reserve, Unreserve and
PreBind have nothing to do. They keep their upstream names, extension points and event
registrations so that profiles, weights and queueing behave as with the real plugins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

import msgspec

from kubesched.api.errors import FieldError
from kubesched.plugin import (
    NODE,
    POD,
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    PreBindPlugin,
    PreScorePlugin,
    ReservePlugin,
    Status,
    decode_args,
)
from kubesched.plugin.batch import Int, ScoreBatchPlugin, zeros
from kubesched.plugin.registry import Factory
from kubesched.plugins.skipping import SkippingFilter

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, Handle, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable

VOLUME_RESTRICTIONS = "VolumeRestrictions"
NODE_VOLUME_LIMITS = "NodeVolumeLimits"
VOLUME_BINDING = "VolumeBinding"
VOLUME_ZONE = "VolumeZone"

# Event resources of the storage objects (names as the scheduler's EventResource values).
PERSISTENT_VOLUME = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
CSI_NODE = "storage.k8s.io/CSINode"
CSI_DRIVER = "storage.k8s.io/CSIDriver"
CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
STORAGE_CLASS = "storage.k8s.io/StorageClass"
VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"

DEFAULT_BIND_TIMEOUT_SECONDS = 600

_ADD_UPDATE = ActionType.ADD | ActionType.UPDATE


def _events(*pairs: tuple[str, ActionType]) -> list[ClusterEventWithHint]:
    return [ClusterEventWithHint(ClusterEvent(resource, action)) for resource, action in pairs]


class VolumeRestrictions(SkippingFilter, EnqueueExtensions):
    """Disk conflicts between pods on a node and ReadWriteOncePod claims already in use."""

    name: ClassVar[str] = VOLUME_RESTRICTIONS

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return _events((POD, ActionType.DELETE), (NODE, ActionType.ADD), (PERSISTENT_VOLUME_CLAIM, ActionType.ADD))


class NodeVolumeLimits(SkippingFilter, EnqueueExtensions):
    """Per-node limits on attachable CSI volumes."""

    name: ClassVar[str] = NODE_VOLUME_LIMITS

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return _events(
            (CSI_NODE, ActionType.ADD),
            (POD, ActionType.DELETE),
            (PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
            (VOLUME_ATTACHMENT, ActionType.DELETE),
        )


class VolumeZone(SkippingFilter, EnqueueExtensions):
    """Zone labels of the PersistentVolumes a pod's claims are bound to."""

    name: ClassVar[str] = VOLUME_ZONE

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return _events(
            (STORAGE_CLASS, ActionType.ADD),
            (NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            (PERSISTENT_VOLUME_CLAIM, _ADD_UPDATE),
            (PERSISTENT_VOLUME, _ADD_UPDATE),
        )


class UtilizationShapePoint(msgspec.Struct):
    utilization: int
    score: int


class VolumeBindingArgs(msgspec.Struct, omit_defaults=True):
    """Arguments of VolumeBinding. `shape` is only used by the (alpha) storage capacity scoring."""

    bindTimeoutSeconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: list[UtilizationShapePoint] | None = None


def validate_volume_binding_args(args: VolumeBindingArgs) -> None:
    if args.bindTimeoutSeconds < 0:
        raise FieldError(
            "bindTimeoutSeconds", args.bindTimeoutSeconds, "invalid BindTimeoutSeconds, should not be a negative value"
        )


class VolumeBinding(SkippingFilter, PreScorePlugin, ScoreBatchPlugin, ReservePlugin, PreBindPlugin, EnqueueExtensions):
    """Binding of a pod's unbound claims to PersistentVolumes (or their provisioning) at PreBind."""

    name: ClassVar[str] = VOLUME_BINDING

    def __init__(self, args: VolumeBindingArgs | None = None) -> None:
        self.args = args or VolumeBindingArgs()
        validate_volume_binding_args(self.args)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        # Without statically bound volumes (and with capacity scoring off) there is nothing to score.
        return SKIP

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return 0

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        return zeros(rows)  # Score is 0 on every node

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        return None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return _events(
            (STORAGE_CLASS, _ADD_UPDATE),
            (PERSISTENT_VOLUME_CLAIM, _ADD_UPDATE),
            (PERSISTENT_VOLUME, _ADD_UPDATE),
            (NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            (CSI_NODE, _ADD_UPDATE),
            (CSI_DRIVER, ActionType.UPDATE),
            (CSI_STORAGE_CAPACITY, _ADD_UPDATE),
        )


def new_volume_restrictions(args: object, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions()


def new_node_volume_limits(args: object, handle: Handle) -> NodeVolumeLimits:
    return NodeVolumeLimits()


def new_volume_binding(args: object, handle: Handle) -> VolumeBinding:
    return VolumeBinding(decode_args(args, VolumeBindingArgs))


def new_volume_zone(args: object, handle: Handle) -> VolumeZone:
    return VolumeZone()


# Plugin name → (factory, args type or None), for registering all four at once.
PLUGINS: dict[str, tuple[Factory, type[object] | None]] = {
    VOLUME_RESTRICTIONS: (new_volume_restrictions, None),
    NODE_VOLUME_LIMITS: (new_node_volume_limits, None),
    VOLUME_BINDING: (new_volume_binding, VolumeBindingArgs),
    VOLUME_ZONE: (new_volume_zone, None),
}
