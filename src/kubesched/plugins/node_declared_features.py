"""NodeDeclaredFeatures (beta in 1.36): a pod that needs node features (inferred from its spec)
fits only nodes whose `status.declaredFeatures` list them.

No modelled pod field requires a declared feature, so PreFilter returns Skip and Filter passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from kubesched.plugin import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions
from kubesched.plugins.skipping import SkippingFilter

if TYPE_CHECKING:
    from kubesched.plugin import Handle

NAME = "NodeDeclaredFeatures"


class NodeDeclaredFeatures(SkippingFilter, EnqueueExtensions):
    name: ClassVar[str] = NAME

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE)),
            ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE)),
        ]


def new(args: object, handle: Handle) -> NodeDeclaredFeatures:
    """NodeDeclaredFeatures takes no arguments."""
    return NodeDeclaredFeatures()
