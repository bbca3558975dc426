"""The scheduling framework: extension points, statuses, cycle state, the registry and the runtime."""

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Handle,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework, FrameworkError, PluginScores, ProfilePlugins
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
    "Framework",
    "FrameworkError",
    "Handle",
    "NodeToStatus",
    "PluginScores",
    "PostFilterResult",
    "PreFilterResult",
    "ProfilePlugins",
    "QueueingHint",
    "Registry",
    "Status",
    "StatusError",
]
