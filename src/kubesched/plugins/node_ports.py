"""NodePorts: a pod's host ports must be free on the node.

QueueingHint: only the deletion of a bound (or nominated) pod holding a host port the pod wants
can free one; a new node is always worth a retry (no hint, as upstream).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from lightkube.models import core_v1 as m

from kubesched.plugin import (
    NODE,
    POD,
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    NodeInfo,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    Status,
)
from kubesched.plugin.batch import Bool, FilterBatchPlugin, HintKeys, Int, filter_per_node
from kubesched.plugin.resources import host_ports

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, Handle, PodInfo
    from kubesched.plugin.batch import NodeTable
    from kubesched.plugin.resources import HostPort

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME


@dataclass(frozen=True)
class _PreFilterState:
    """The host ports the pod wants, as (hostIP, protocol, port)."""

    ports: tuple[HostPort, ...]

    def clone(self) -> _PreFilterState:
        return self  # not affected by adding or removing other pods


def fits_ports(wanted: Sequence[HostPort], node: NodeInfo) -> bool:
    """Whether none of the wanted host ports clashes with one already used on the node."""
    return not any(port > 0 and node.port_conflicts((ip, proto, port)) for ip, proto, port in wanted)


class NodePorts(PreFilterPlugin, FilterBatchPlugin, HintKeys):
    name: ClassVar[str] = NAME

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.host_ports:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(tuple(pod.host_ports)))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        data = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(data, _PreFilterState):
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not fits_ports(data.ports, node):
            return Status.unschedulable(ERR_REASON)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Bool | None:
        if not isinstance(state.get(PRE_FILTER_STATE_KEY), _PreFilterState):
            return filter_per_node(self.filter, state, pod, table, rows)  # the same error on every node
        # No wanted port clashes with a node that uses none; the others are checked one by one.
        return filter_per_node(self.filter, state, pod, table, rows, flag="used_ports")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Ports are immutable, so only a deleted pod (freeing its ports) or a new node can help.
        return [
            ClusterEventWithHint(ClusterEvent(POD, ActionType.DELETE), hint=self._is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)),
        ]

    def hint_key(self, pod: object) -> Hashable:
        """The pod's host ports: all the hint reads of the pod."""
        return frozenset(host_ports(pod))

    # Any: the deleted pod as served (spec set), read without checks in this hint
    def _is_schedulable_after_pod_deleted(self, pod: m.Pod, old: Any, new: object) -> QueueingHint:
        """Queue when the deleted pod was bound or nominated and held a host port clashing with one
        the queued pod wants."""
        if not old.spec.nodeName and not (old.status is not None and old.status.nominatedNodeName):
            return QueueingHint.QUEUE_SKIP
        freed = host_ports(old)
        if not freed:
            return QueueingHint.QUEUE_SKIP
        in_use = NodeInfo()
        in_use.used_ports.update(freed)
        return QueueingHint.QUEUE_SKIP if fits_ports(host_ports(pod), in_use) else QueueingHint.QUEUE


def new(args: object, handle: Handle) -> NodePorts:
    """NodePorts takes no arguments."""
    return NodePorts()
