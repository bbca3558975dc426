"""SchedulingGates: keep a pod out of activeQ while `spec.schedulingGates` is non-empty (KEP-3521)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from lightkube.models import core_v1 as m

from kubesched.api.objects import meta_of
from kubesched.plugin import POD, ActionType, ClusterEvent, ClusterEventWithHint, PreEnqueuePlugin, QueueingHint, Status
from kubesched.plugin.batch import HintKeys

if TYPE_CHECKING:
    from kubesched.plugin import Handle, PodInfo

NAME = "SchedulingGates"


class SchedulingGates(PreEnqueuePlugin, HintKeys):
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
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                hint=self._is_schedulable_after_gates_eliminated,
            )
        ]

    def hint_key(self, pod: object) -> Hashable:
        """The hint does not read the queued pod (beyond its identity, for its own updates)."""
        return ""

    # Any: the event's pod as served (metadata set), read without checks in this hint
    def _is_schedulable_after_gates_eliminated(self, pod: m.Pod, old: object, new: Any) -> QueueingHint:
        """Queue only when the pod whose gates were all removed is the queued pod itself."""
        if (new.metadata.uid or "") == (meta_of(pod).uid or ""):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def new(args: object, handle: Handle) -> SchedulingGates:
    """SchedulingGates takes no arguments."""
    return SchedulingGates()
