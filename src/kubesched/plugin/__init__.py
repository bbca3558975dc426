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
value `module:attr`, attr a factory or a `PluginSpec`).

This module holds what most plugins need; the rest comes in tiers of its own: `batch` (Filter and
Score over the node table at once), `handle` (what the Handle hands out: informers, listers,
feature gates), `resources` (resource names and amounts, images, host ports), `cluster` (the API's
errors, custom resources), `registry` (plugins by name), `events` (the rarer event resources),
`preemption` (the library PostFilter plugins use), `testing` (a plugin checked against the
framework) and `controllers`. Every tier's names and signatures are pinned by a test; `PLUGIN_API`
says which version of the surface this is, and docs/plugins.md what may change between versions.
See docs/plugins.md.
"""

from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.args import ArgsError, decode_args
from kubesched.framework.cycle_state import CycleState, StateData
from kubesched.framework.events import (
    ASSIGNED_POD,
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MAX_PERMIT_TIMEOUT,
    MIN_NODE_SCORE,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    NodeToStatus,
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
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kubesched.framework.normalize import default_normalize_score
from kubesched.framework.queued import QueuedPodInfo
from kubesched.framework.registry import PluginSpec
from kubesched.framework.status import SKIP, Code, Status, StatusError
from kubesched.framework.waiting import WaitingPod

PLUGIN_API = "1.2"  # the version of this surface (all tiers); docs/plugins.md says what a change of it means

__all__ = [
    "ASSIGNED_POD",
    "MAX_NODE_SCORE",
    "MAX_PERMIT_TIMEOUT",
    "MIN_NODE_SCORE",
    "NODE",
    "PLUGIN_API",
    "POD",
    "SKIP",
    "ActionType",
    "ArgsError",
    "BindPlugin",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "EnqueueExtensions",
    "FilterPlugin",
    "Handle",
    "NodeInfo",
    "NodeToStatus",
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
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "StateData",
    "Status",
    "StatusError",
    "WaitingPod",
    "decode_args",
    "default_normalize_score",
]
