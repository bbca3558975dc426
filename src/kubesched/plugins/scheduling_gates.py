"""SchedulingGates: keep a pod out of activeQ while `spec.schedulingGates` is non-empty (KEP-3521)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from kubesched.framework.events import POD, ActionType, ClusterEvent, ClusterEventWithHint
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.cache import PodInfo
    from kubesched.framework.interface import Handle

NAME = "SchedulingGates"


class SchedulingGates:
    name: ClassVar[str] = NAME

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        gates = pod.pod.spec.schedulingGates if pod.pod.spec is not None else None
        if not gates:
            return None
        # Gate names are listed the way Go prints a string slice: "[a b]".
        names = " ".join(gate.name for gate in gates)
        return Status.unresolvable(f"waiting for scheduling gates: [{names}]")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Gates can only be removed; removing the last one is the event that can let the pod in.
        return [ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED))]


def new(args: Any, handle: Handle) -> SchedulingGates:
    """SchedulingGates takes no arguments."""
    return SchedulingGates()
