"""DynamicResources (DRA) for pods without resource claims.

ResourceClaims, ResourceSlices and DeviceClasses are not modelled, so the plugin behaves as
upstream does for a pod that references no claim: PreEnqueue lets it in, PreFilter returns Skip,
Filter passes, Score is 0 on every node, PostFilter has nothing to deallocate, and Reserve,
Unreserve and PreBind have nothing to do. It is still a Score plugin (weight 2 in the default
profile) and its PostFilter message is part of every FailedScheduling text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

import msgspec

from kubesched.plugin import (
    MAX_NODE_SCORE,
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    NodeToStatus,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    ReservePlugin,
    Status,
    decode_args,
    default_normalize_score,
)
from kubesched.plugin.batch import Int, NormalizeScoreBatch, ScoreBatchPlugin, default_normalize_array, zeros
from kubesched.plugins.skipping import SkippingFilter

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, Handle, NodeInfo, PodInfo
    from kubesched.plugin.batch import NodeTable

NAME = "DynamicResources"
NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"

RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
DEVICE_CLASS = "resource.k8s.io/DeviceClass"

DEFAULT_FILTER_TIMEOUT = "10s"
DEFAULT_BINDING_TIMEOUT = "600s"  # upstream default when device binding conditions are enabled


class DynamicResourcesArgs(msgspec.Struct, omit_defaults=True):
    """Arguments of DynamicResources (Go durations such as "10s"; unset means the default)."""

    filterTimeout: str | None = None
    bindingTimeout: str | None = None


class DynamicResources(
    SkippingFilter,
    PreEnqueuePlugin,
    PostFilterPlugin,
    ScoreBatchPlugin,
    NormalizeScoreBatch,
    ReservePlugin,
    PreBindPlugin,
    EnqueueExtensions,
):
    name: ClassVar[str] = NAME

    def __init__(self, args: DynamicResourcesArgs | None = None) -> None:
        self.args = args or DynamicResourcesArgs()

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        return None

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        return None, Status.unschedulable(NO_CLAIMS_TO_DEALLOCATE)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return 0

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        return zeros(rows)  # Score is 0 on every node

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[int]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_score_batch(self, state: CycleState, pod: PodInfo, scores: Int) -> Int:
        return default_normalize_array(MAX_NODE_SCORE, False, scores)

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        return None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_CLAIM, add_update)),
            ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, add_update)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, add_update)),
        ]


def new(args: object, handle: Handle) -> DynamicResources:
    return DynamicResources(decode_args(args, DynamicResourcesArgs))
