"""The scheduling framework: extension points, statuses, cycle state, the handle, the registry and the runtime."""

from kubesched.framework.assembly import FrameworkError, ProfilePlugins
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from kubesched.framework.handle import FrameworkHandle, Handle, Listers, Services
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    ExtensionPoint,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.registry import PluginSpec, Registry
from kubesched.framework.runtime import Framework, PluginScores
from kubesched.framework.status import SKIP, Code, Status, StatusError

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "SKIP",
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "ExtensionPoint",
    "Framework",
    "FrameworkError",
    "FrameworkHandle",
    "Handle",
    "Listers",
    "NodeToStatus",
    "PluginScores",
    "PluginSpec",
    "PostFilterResult",
    "PreFilterResult",
    "ProfilePlugins",
    "QueueingHint",
    "Registry",
    "Services",
    "Status",
    "StatusError",
]
