"""The plugin API: everything a scheduling plugin needs, from one place.

In-tree plugins and out-of-tree packages alike import only this (and `kubesched.api` for the
object model). A plugin is a class with a `name` that subclasses the protocols of the extension
points it implements, built by a factory `(args, handle)`::

    from kubesched.plugin import CycleState, FilterPlugin, NodeInfo, PodInfo, Status

    class NoSundays(FilterPlugin):
        name = "NoSundays"

        def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
            if node.node.metadata.labels.get("day") == "sunday":
                return Status.unresolvable("node(s) rest on Sundays")
            return None

    def new(args, handle):
        return NoSundays()

Packages declare plugins under the entry-point group `kubesched.plugins` (entry name = plugin name,
value `module:attr`, attr a factory or a `PluginSpec`). `kubesched.plugin.testing` checks a plugin
against the framework; `kubesched.plugin.preemption` is the preemption library PostFilter plugins
use. See docs/plugins.md.
"""

from kubesched.cache import ImageState, NodeInfo, PodInfo, Resource, normalized_image_name
from kubesched.cache.podinfo import HostPort, host_ports
from kubesched.cache.resource import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.cache.table import Bool, Int, NodeTable, RowNodes
from kubesched.cluster.custom import custom_resource
from kubesched.cluster.errors import ApiError, Conflict, NotFound
from kubesched.framework.args import ArgsError, decode_args
from kubesched.framework.batch import fails, filter_memo, filter_per_node, score_per_node, zeros
from kubesched.framework.conformance import declares
from kubesched.framework.cycle_state import CycleState, StateData
from kubesched.framework.events import (
    ASSIGNED_POD,
    NODE,
    POD,
    UNSCHEDULED_POD,
    WILDCARD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from kubesched.framework.features import Features
from kubesched.framework.handle import Handle, Informer, InformerHandler, Listers, Workloads
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MAX_PERMIT_TIMEOUT,
    MIN_NODE_SCORE,
    BindPlugin,
    EnqueueExtensions,
    ExtensionPoint,
    FailureSignatures,
    FilterBatchPlugin,
    FilterPlugin,
    HintKeys,
    Mask,
    NodeToStatus,
    NormalizeScoreBatch,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortKey,
    QueueSortPlugin,
    ReservePlugin,
    Rows,
    ScoreBatchPlugin,
    ScoreExtensions,
    ScorePlugin,
    Scores,
)
from kubesched.framework.normalize import default_normalize_array, default_normalize_score
from kubesched.framework.queued import QueuedPodInfo
from kubesched.framework.registry import Factory, PluginSpec, Registry
from kubesched.framework.status import SKIP, Code, Status, StatusError
from kubesched.framework.waiting import WaitingPod
from kubesched.plugin import preemption

__all__ = [
    "ASSIGNED_POD",
    "CPU",
    "EPHEMERAL_STORAGE",
    "MAX_NODE_SCORE",
    "MAX_PERMIT_TIMEOUT",
    "MEMORY",
    "MIN_NODE_SCORE",
    "NODE",
    "POD",
    "PODS",
    "SKIP",
    "UNSCHEDULED_POD",
    "WILDCARD",
    "ActionType",
    "ApiError",
    "ArgsError",
    "BindPlugin",
    "Bool",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "Conflict",
    "CycleState",
    "EnqueueExtensions",
    "ExtensionPoint",
    "Factory",
    "FailureSignatures",
    "Features",
    "FilterBatchPlugin",
    "FilterPlugin",
    "Handle",
    "HintKeys",
    "HostPort",
    "ImageState",
    "Informer",
    "InformerHandler",
    "Int",
    "Listers",
    "Mask",
    "NodeInfo",
    "NodeTable",
    "NodeToStatus",
    "NormalizeScoreBatch",
    "NotFound",
    "PermitPlugin",
    "Plugin",
    "PluginSpec",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortKey",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "Registry",
    "ReservePlugin",
    "Resource",
    "RowNodes",
    "Rows",
    "ScoreBatchPlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "Scores",
    "StateData",
    "Status",
    "StatusError",
    "WaitingPod",
    "Workloads",
    "custom_resource",
    "declares",
    "decode_args",
    "default_normalize_array",
    "default_normalize_score",
    "fails",
    "filter_memo",
    "filter_per_node",
    "host_ports",
    "normalized_image_name",
    "preemption",
    "score_per_node",
    "zeros",
]
