"""Coscheduling (scheduler-plugins `pkg/coscheduling`): the pods of a PodGroup are scheduled all
together or not at all.

A pod joins a group with the label `scheduling.x-k8s.io/pod-group: <name>`; the PodGroup says how
many pods must run together (`minMember`), what the whole group needs (`minResources`) and how long
its pods wait for each other at Permit (`scheduleTimeoutSeconds`).

- QueueSort: higher priority first; then the group's creation time (a group that failed recently
  counts from its failure, so it goes behind newer groups; a pod in no group counts from when it
  first entered the queue); then `<namespace>/<pod name>`.
- PreFilter (UnschedulableAndUnresolvable when it refuses): a group that failed within
  `podGroupBackoffSeconds`; fewer pods in the group than `minMember`; too many of them gated; and,
  with `minResources`, the cluster's free resources (the group's own pods counted as free) short of
  them — checked once per `permitWaitingTimeSeconds`.
- Permit: each pod that gets here is counted as assigned; until `minMember` are, it waits (the
  group's `scheduleTimeoutSeconds`, else `permitWaitingTimeSeconds`), and the first one activates
  its siblings; the pod that completes the quorum allows every waiting sibling.
- PostFilter: when a pod of the group cannot be placed and the group is still short by more than
  `podGroupRejectPercentage` percent of `minMember`, the waiting siblings are rejected (their
  Unreserve frees what they held) and the group may back off.
- Unreserve: the pod is no longer assigned, and its waiting siblings are rejected.

Deviations: the pods of a group are the non-terminal pods the scheduler watches (upstream's lister
also counts Succeeded and Failed ones); `resource gap` prints canonical quantities (`map[cpu:2
memory:1Gi]`) where Go prints its internal structures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import msgspec
from lightkube.resources import core_v1

from kubesched.api.errors import FieldError
from kubesched.api.quantity import format_bytes, format_milli_cpu, int_value, milli_value
from kubesched.plugin import (
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EnqueueExtensions,
    Handle,
    NodeInfo,
    NodeToStatus,
    PermitPlugin,
    PluginSpec,
    PodInfo,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterPlugin,
    PreFilterResult,
    QueuedPodInfo,
    QueueSortPlugin,
    ReservePlugin,
    Status,
    decode_args,
)
from kubesched.plugin.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched_scheduler_plugins.apis import POD_GROUP_RESOURCE, PodGroup, pod_group_full_name, pod_group_label

NAME = "Coscheduling"
PERMIT_STATE_KEY = "PermitCoscheduling"
DEFAULT_WAIT_SECONDS = 60.0
PERMITTED_TTL = 3.0  # the default expiry of the cache of groups whose minResources were found
BACKED_OFF_TTL = 10.0


class CoschedulingArgs(msgspec.Struct, forbid_unknown_fields=True):
    """scheduler-plugins' CoschedulingArgs (kubescheduler.config.k8s.io/v1), with its defaults."""

    permitWaitingTimeSeconds: int = 60
    podGroupBackoffSeconds: int = 0
    podGroupRejectPercentage: int = 10
    kind: str = ""
    apiVersion: str = ""

    def validate(self, path: str = "") -> None:
        def at(name: str) -> str:
            return f"{path}.{name}" if path else name

        errors = []
        if self.permitWaitingTimeSeconds < 0:
            errors.append(
                FieldError(at("permitWaitingTimeSeconds"), self.permitWaitingTimeSeconds, "must be greater than 0")
            )
        if self.podGroupBackoffSeconds < 0:
            errors.append(
                FieldError(at("podGroupBackoffSeconds"), self.podGroupBackoffSeconds, "must be greater than 0")
            )
        if not 0 <= self.podGroupRejectPercentage <= 100:
            errors.append(
                FieldError(at("podGroupRejectPercentage"), self.podGroupRejectPercentage, "must be between 0 and 100")
            )
        if errors:
            raise ValueError(str(errors[0]) if len(errors) == 1 else "[" + ", ".join(map(str, errors)) + "]")


class _Expiring:
    """Keys that expire: adding a key already there (and not expired) changes nothing."""

    def __init__(self, handle: Handle, default: float) -> None:
        self._clock = handle.clock
        self._default = default
        self._until: dict[str, float] = {}

    def add(self, key: str, ttl: float) -> None:
        if not self.has(key):
            self._until[key] = self._clock.now() + (ttl or self._default)

    def has(self, key: str) -> bool:
        until = self._until.get(key)
        if until is None:
            return False
        if until <= self._clock.now():
            del self._until[key]
            return False
        return True

    def delete(self, key: str) -> None:
        self._until.pop(key, None)


@dataclass
class _PermitState:
    activate: bool

    def clone(self) -> _PermitState:
        return self


def _requests(min_resources: dict[str, Any]) -> dict[str, int]:
    """A ResourceList in the scheduler's units (milli-CPU, bytes, counts)."""
    return {name: milli_value(q) if name == CPU else int_value(q) for name, q in min_resources.items()}


def _quantity(name: str, amount: int) -> str:
    if name == CPU:
        return format_milli_cpu(amount)
    if name in (MEMORY, EPHEMERAL_STORAGE) or name.startswith("hugepages-"):
        return format_bytes(amount)
    return str(amount)


def _free(node: NodeInfo, group: str) -> dict[str, int]:
    """What the node has left, counting the group's own pods on it as gone."""
    own = [p for p in node.pods if pod_group_full_name(p.pod) == group]
    alloc, used = node.allocatable, node.requested
    free = {
        PODS: alloc.pods - (len(node.pods) - len(own)),
        CPU: alloc.cpu - used.cpu + sum(p.requests.cpu for p in own),
        MEMORY: alloc.memory - used.memory + sum(p.requests.memory for p in own),
        EPHEMERAL_STORAGE: alloc.ephemeral - used.ephemeral + sum(p.requests.ephemeral for p in own),
    }
    for name, amount in alloc.scalar.items():
        free[name] = amount - used.scalar.get(name, 0) + sum(p.requests.scalar.get(name, 0) for p in own)
    return free


class Coscheduling(QueueSortPlugin, PreFilterPlugin, PostFilterPlugin, PermitPlugin, ReservePlugin, EnqueueExtensions):
    name: ClassVar[str] = NAME

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.schedule_timeout = float(args.permitWaitingTimeSeconds)
        self.reject_threshold = args.podGroupRejectPercentage / 100.0
        self.backoff = float(args.podGroupBackoffSeconds)
        self.pod_groups = handle.informer(PodGroup)
        self._members: dict[str, dict[str, Any]] = {}  # group -> pod key -> pod: every pod of the group
        self._assigned: dict[str, set[str]] = {}  # group -> names of its pods assumed, waiting or bound
        self._permitted = _Expiring(handle, PERMITTED_TTL)
        self._backed_off = _Expiring(handle, BACKED_OFF_TTL)
        self._last_failed: dict[str, float] = {}
        handle.informer(core_v1.Pod).add_handler(self._on_pod)

    # -- the group's pods ----------------------------------------------------------------------------

    def _on_pod(self, old: Any | None, new: Any | None) -> None:
        for pod, present in ((old, False), (new, True)):
            if pod is None or not (group := pod_group_full_name(pod)):
                continue
            key = pod.metadata.name
            members = self._members.setdefault(group, {})
            if present:
                members[key] = pod
            elif new is None or pod_group_full_name(new) != group:
                members.pop(key, None)
                if not members:
                    del self._members[group]
        if old is None and new is not None and new.spec.nodeName and pod_group_label(new):
            self._assigned.setdefault(pod_group_full_name(new), set()).add(new.metadata.name)
        if new is None and old is not None and old.spec.nodeName:
            self._forget(old)

    def _forget(self, pod: Any) -> None:
        group = pod_group_full_name(pod)
        assigned = self._assigned.get(group)
        if assigned is not None:
            assigned.discard(pod.metadata.name)
            if not assigned:
                del self._assigned[group]

    def _group(self, pod: Any) -> tuple[str, Any | None]:
        label = pod_group_label(pod)
        if not label:
            return "", None
        namespace = pod.metadata.namespace or "default"
        return f"{namespace}/{label}", self.pod_groups.get(label, namespace)

    @staticmethod
    def _min_member(pg: Any) -> int:
        return pg.spec.minMember if pg.spec is not None else 0

    def _reject_waiting(self, group: str, message: str) -> None:
        for waiting in self.handle.iterate_over_waiting_pods():
            if pod_group_full_name(waiting.pod.pod) == group:
                waiting.reject(NAME, message)

    def _failed(self, group: str) -> None:
        self._permitted.delete(group)
        self._last_failed[group] = self.handle.clock.now()

    # -- QueueSort ----------------------------------------------------------------------------------------

    def _since(self, qpi: QueuedPodInfo) -> float:
        initial = qpi.initial_attempt or qpi.timestamp
        group, pg = self._group(qpi.pod_info.pod)
        if not group:
            return initial
        failed = self._last_failed.get(group)
        if failed is not None:
            return failed
        created = pg.metadata.creationTimestamp if pg is not None and pg.metadata is not None else None
        return created.timestamp() if created is not None else initial

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod_info.priority, b.pod_info.priority
        if pa != pb:
            return pa > pb
        ta, tb = self._since(a), self._since(b)
        if ta == tb:
            return a.pod_info.key < b.pod_info.key
        return ta < tb

    # -- PreFilter ------------------------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        group, pg = self._group(pod.pod)
        if pg is None:
            return None, None
        refused = self._refusal(pod, group, pg)
        return None, (Status.unresolvable(refused) if refused else None)

    def _refusal(self, pod: PodInfo, group: str, pg: Any) -> str:
        if self._backed_off.has(group):
            return f"podGroup {group} failed recently"
        pods = list(self._members.get(group, {}).values())
        min_member = self._min_member(pg)
        gap = min_member - len(pods)
        if gap > 0:
            return (
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods number: {len(pods)}, "
                f"minMember of group: {min_member}"
            )
        for sibling in pods:
            if sibling.spec.schedulingGates:
                gap += 1
            if gap > 0:
                return f"pre-filter pod {pod.name} cannot proceed due to gated pods in the same PodGroup"
        min_resources = pg.spec.minResources if pg.spec is not None else None
        if min_resources is None or self._permitted.has(group):
            return ""
        wanted = _requests(min_resources)
        wanted[PODS] = min_member
        short = self._cluster_shortfall(self.handle.snapshot.node_info_list, wanted, group)
        if short:
            listed = " ".join(f"{name}:{_quantity(name, amount)}" for name, amount in sorted(short.items()))
            return f"resource gap: map[{listed}]"
        self._permitted.add(group, self.schedule_timeout)
        return ""

    @staticmethod
    def _cluster_shortfall(nodes: Sequence[NodeInfo], wanted: dict[str, int], group: str) -> dict[str, int]:
        """What the cluster's free resources, node after node, leave of `wanted` ({} when all of it)."""
        remaining = dict(wanted)
        for node in nodes:
            if node.node is None:
                continue
            free = _free(node, group)
            for name in list(remaining):
                left = remaining[name] - free.get(name, 0)
                if left <= 0:
                    del remaining[name]
                else:
                    remaining[name] = left
            if not remaining:
                return {}
        return remaining

    # -- PostFilter -------------------------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        untouched = PostFilterResult(mode="noop")
        group, pg = self._group(pod.pod)
        if pg is None:
            return untouched, Status.unschedulable("can not find pod group")
        assigned = len(self._assigned.get(group, ()))
        min_member = self._min_member(pg)
        if assigned >= min_member:
            return untouched, Status.unschedulable()
        if (min_member - assigned) / min_member <= self.reject_threshold:
            return untouched, Status.unschedulable()  # a small gap: the group may still make it
        self._reject_waiting(group, "optimistic rejection in PostFilter")
        if self.backoff > 0 and len(self._members.get(group, ())) >= min_member:
            self._backed_off.add(group, self.backoff)
        self._failed(group)
        message = f"PodGroup {group} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter"
        return untouched, Status.unschedulable(message)

    # -- Permit, Reserve ------------------------------------------------------------------------------------------

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        group, pg = self._group(pod.pod)
        if not group:
            return None, 0.0
        if pg is None:
            return Status.unschedulable("PodGroup not found"), 0.0
        assigned = self._assigned.setdefault(group, set())
        assigned.add(pod.name)
        if len(assigned) >= self._min_member(pg):
            self._last_failed.pop(group, None)
            for waiting in self.handle.iterate_over_waiting_pods():
                if pod_group_full_name(waiting.pod.pod) == group:
                    waiting.allow(NAME)
            return None, 0.0
        if len(assigned) == 1:  # the first pod of the group activates its siblings
            state.write(PERMIT_STATE_KEY, _PermitState(activate=True))
        timeout = self._wait_time(pg) or self.schedule_timeout
        self._activate_siblings(pod, group, state)
        return Status(Code.WAIT), timeout

    def _wait_time(self, pg: Any) -> float:
        seconds = pg.spec.scheduleTimeoutSeconds if pg.spec is not None else None
        if seconds is not None:
            return float(seconds)
        return self.schedule_timeout or DEFAULT_WAIT_SECONDS

    def _activate_siblings(self, pod: PodInfo, group: str, state: CycleState) -> None:
        permit = state.get(PERMIT_STATE_KEY)
        if not isinstance(permit, _PermitState) or not permit.activate:
            return
        siblings = [p for p in self._members.get(group, {}).values() if p.metadata.uid != pod.uid]
        if siblings:
            self.handle.activate([PodInfo(p) for p in siblings])

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        group, pg = self._group(pod.pod)
        if pg is None:
            return
        self._forget(pod.pod)
        self._reject_waiting(group, "rejection in Unreserve")
        self._failed(group)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(POD, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(POD_GROUP_RESOURCE, ActionType.ADD | ActionType.UPDATE)),
        ]


def new(args: object, handle: Handle) -> Coscheduling:
    decoded = decode_args(args, CoschedulingArgs)
    decoded.validate()
    return Coscheduling(decoded, handle)


SPEC = PluginSpec(new, CoschedulingArgs, name=NAME)
