"""CapacityScheduling (scheduler-plugins `pkg/capacityscheduling`): each namespace's ElasticQuota
guarantees it `min` and caps it at `max`; a namespace may borrow what others leave unused of their
min, and gives it back by preemption when they need it.

- PreFilter: the pod's namespace would go over its `max` (counting the pods nominated there with at
  least its priority), or every quota's usage together would go over every quota's min together
  (counting nominated pods of other namespaces still within their min): Unschedulable.
- AddPod / RemovePod keep the cycle's copy of the quotas current, for preemption's dry runs.
- PostFilter: preemption (`kubesched.plugin.preemption.Evaluator`) with the quota's victim rules:
  a pod whose namespace would go over its min may only evict lower-priority pods of its own
  namespace; one within its min may evict pods of namespaces using more than their min, whatever
  their priority; pods of namespaces without a quota are never victims of a pod with one, and the
  other way round. A node is no candidate if, its victims gone, the quotas would still refuse the
  pod (`global quota max exceeded`).
- Reserve / Unreserve: the pod's request counts against its quota from Reserve on.

A quota's usage is the requests of its namespace's pods that are reserved or bound and not
finished. A pod's request is the sum of its containers' requests, at least each init container's,
plus the pod overhead. `min` or `max` absent: 0 and no limit (for cpu, memory and
ephemeral-storage); a resource absent from a given `max` has a max of 0.

Victims are removed before the scheduler takes another pod (the Evaluator's synchronous mode,
whatever the SchedulerAsyncPreemption gate says), as upstream's plugin removes them before
PostFilter returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from lightkube.resources import core_v1

from kubesched.api.priority import PREEMPT_NEVER, preemption_policy
from kubesched.api.quantity import int_value, milli_value
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
    PluginSpec,
    PodInfo,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
    ReservePlugin,
    Status,
)
from kubesched.plugin.preemption import Budget, Evaluator, importance, split_by_pdb
from kubesched.plugin.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched_scheduler_plugins.apis import ELASTIC_QUOTA_RESOURCE, ElasticQuota

NAME = "CapacityScheduling"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
SNAPSHOT_KEY = "ElasticQuotaSnapshot"
MAX_INT64 = 2**63 - 1
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_STATE = "not eligible due to failed to read from cycleState"
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
GLOBAL_MAX_EXCEEDED = "global quota max exceeded"
_FIELDS = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)

Amounts = dict[str, int]  # cpu in milli-CPU, the rest in units


def _is_scalar(name: str) -> bool:
    """Resources besides cpu, memory, ephemeral-storage and pods that a quota counts."""
    if name.startswith(("hugepages-", "attachable-volumes-", "kubernetes.io/")):
        return True
    domain = name.split("/", 1)[0] if "/" in name else ""
    return bool(domain) and domain != "kubernetes.io" and not domain.endswith(".kubernetes.io")


def amounts(resources: Mapping[str, Any] | None) -> Amounts:
    """A ResourceList in the scheduler's units; names a quota does not count are left out."""
    out: Amounts = {}
    for name, quantity in (resources or {}).items():
        if name == CPU:
            out[CPU] = out.get(CPU, 0) + milli_value(quantity)
        elif name in (MEMORY, EPHEMERAL_STORAGE, PODS) or _is_scalar(name):
            out[name] = out.get(name, 0) + int_value(quantity)
    return out


def _requests(container: Any) -> Mapping[str, Any]:
    return (container.resources.requests if container.resources else None) or {}


def pod_request(pod: Any) -> Amounts:
    """The containers' requests summed, at least each init container's, plus the overhead."""
    total: Amounts = {}
    for container in pod.spec.containers or ():
        for name, value in amounts(_requests(container)).items():
            total[name] = total.get(name, 0) + value
    for init in pod.spec.initContainers or ():
        for name, value in amounts(_requests(init)).items():
            if name != PODS and value > total.get(name, 0):
                total[name] = value
    for name, value in amounts(pod.spec.overhead).items():
        total[name] = total.get(name, 0) + value
    return total


def over(x1: Amounts, x2: Amounts, y: Amounts, bound: int) -> bool:
    """Whether x1 + x2 exceeds y in any resource (a scalar y lacks: `bound`)."""
    for name in _FIELDS:
        if x1.get(name, 0) + x2.get(name, 0) > y.get(name, 0):
            return True
    return any(x1[name] + x2.get(name, 0) > y.get(name, bound) for name in x1 if name not in _FIELDS)


def _bound(value: int) -> Amounts:
    return {CPU: value, MEMORY: value, EPHEMERAL_STORAGE: value}


@dataclass
class QuotaInfo:
    """One namespace's quota: its bounds, what its pods use, and which pods those are."""

    namespace: str
    min: Amounts
    max: Amounts
    used: Amounts = field(default_factory=dict)
    pods: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, quota: Any) -> QuotaInfo:
        spec = quota.spec
        low = spec.min if spec is not None else None
        high = spec.max if spec is not None else None
        return cls(
            quota.metadata.namespace or "default",
            amounts(low) if low is not None else _bound(0),
            amounts(high) if high is not None else _bound(MAX_INT64),
        )

    def clone(self) -> QuotaInfo:
        return QuotaInfo(self.namespace, dict(self.min), dict(self.max), dict(self.used), set(self.pods))

    def add_pod(self, pod: Any) -> None:
        uid = pod.metadata.uid or ""
        if uid in self.pods:
            return
        self.pods.add(uid)
        for name, value in pod_request(pod).items():
            self.used[name] = self.used.get(name, 0) + value

    def remove_pod(self, pod: Any) -> None:
        uid = pod.metadata.uid or ""
        if uid not in self.pods:
            return
        self.pods.discard(uid)
        for name, value in pod_request(pod).items():
            self.used[name] = self.used.get(name, 0) - value

    def over_min_with(self, request: Amounts) -> bool:
        return over(request, self.used, self.min, 0)

    def over_max_with(self, request: Amounts) -> bool:
        return over(request, self.used, self.max, MAX_INT64)

    def over_min(self) -> bool:
        return over(self.used, {}, self.min, 0)


class Quotas(dict[str, QuotaInfo]):
    """The quotas by namespace."""

    def clone(self) -> Quotas:
        return Quotas({ns: info.clone() for ns, info in self.items()})

    def aggregated_over_min_with(self, request: Amounts) -> bool:
        used: Amounts = dict(request)
        low: Amounts = {}
        for info in self.values():
            for name, value in info.used.items():
                used[name] = used.get(name, 0) + value
            for name, value in info.min.items():
                low[name] = low.get(name, 0) + value
        return over(used, {}, low, 0)


@dataclass
class _Snapshot:
    quotas: Quotas

    def clone(self) -> _Snapshot:
        return _Snapshot(self.quotas.clone())


@dataclass
class _PreFilterState:
    request: Amounts
    nominated_in_quota: Amounts  # with the pod's own request
    nominated_all: Amounts

    def clone(self) -> _PreFilterState:
        return self


def _plus(a: Amounts, b: Amounts) -> None:
    for name, value in b.items():
        a[name] = a.get(name, 0) + value


class CapacityScheduling(PreFilterExtensions, PostFilterPlugin, ReservePlugin, EnqueueExtensions):
    name: ClassVar[str] = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.quotas = Quotas()
        self._quota_objects = handle.informer(ElasticQuota)
        self._quota_objects.add_handler(self._on_quota)
        handle.informer(core_v1.Pod).add_handler(self._on_pod)

    # -- the live quotas --------------------------------------------------------------------------------

    def _on_quota(self, old: Any | None, new: Any | None) -> None:
        if new is None:
            if old is not None:
                self.quotas.pop(old.metadata.namespace or "default", None)
            return
        info = QuotaInfo.of(new)
        if old is None:
            self.quotas.setdefault(info.namespace, info)
            return
        previous = self.quotas.get(old.metadata.namespace or "default")
        if previous is not None:
            info.pods, info.used = previous.pods, previous.used
        self.quotas[info.namespace] = info

    def _on_pod(self, old: Any | None, new: Any | None) -> None:
        """The pods with a node (client-go's filtered informer: assigned is Add, unassigned Delete)."""
        was = old is not None and bool(old.spec.nodeName)
        now = new is not None and bool(new.spec.nodeName)
        if new is not None and now and not was:
            self._add_assigned(new)
        elif old is not None and new is not None and was and now:
            old_phase = old.status.phase if old.status else None
            new_phase = new.status.phase if new.status else None
            if old_phase not in ("Succeeded", "Failed") and new_phase not in ("Running", "Pending"):
                info = self.quotas.get(new.metadata.namespace or "default")
                if info is not None:
                    info.remove_pod(new)
        elif old is not None and was:
            info = self.quotas.get(old.metadata.namespace or "default")
            if info is not None:
                info.remove_pod(old)

    def _add_assigned(self, pod: Any) -> None:
        namespace = pod.metadata.namespace or "default"
        info = self.quotas.get(namespace)
        if info is None:
            found = [q for q in self._quota_objects.list() if (q.metadata.namespace or "default") == namespace]
            if not found:
                return
            info = self.quotas[namespace] = QuotaInfo.of(found[0])
        info.add_pod(pod)

    # -- PreFilter and its extensions ------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        snapshot = self.quotas.clone()
        request = pod_request(pod.pod)
        state.write(SNAPSHOT_KEY, _Snapshot(snapshot))
        quota = snapshot.get(pod.namespace)
        if quota is None:
            state.write(PRE_FILTER_STATE_KEY, _PreFilterState(request, {}, {}))
            return None, None
        in_quota: Amounts = {}
        everywhere: Amounts = {}
        for node in self.handle.snapshot.node_info_list:
            for nominated in self.handle.nominator.pods_for_node(node.name):
                if nominated.uid == pod.uid:
                    continue
                theirs = self.quotas.get(nominated.namespace)
                if theirs is None:
                    continue
                wanted = pod_request(nominated.pod)
                if nominated.namespace == pod.namespace and nominated.priority >= pod.priority:
                    _plus(in_quota, wanted)
                    _plus(everywhere, wanted)
                elif nominated.namespace != pod.namespace and not theirs.over_min():
                    _plus(everywhere, wanted)
        _plus(in_quota, request)
        _plus(everywhere, request)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(request, in_quota, everywhere))
        if quota.over_max_with(in_quota):
            message = (
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because ElasticQuota {quota.namespace} "
                "is more than Max"
            )
            return None, Status.unschedulable(message)
        if snapshot.aggregated_over_min_with(everywhere):
            message = (
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because total ElasticQuota used is more "
                "than min"
            )
            return None, Status.unschedulable(message)
        return None, None

    def _snapshot(self, state: CycleState) -> Quotas | None:
        found = state.get(SNAPSHOT_KEY)
        return found.quotas if isinstance(found, _Snapshot) else None

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        return self._count(state, pod_to_add, added=True)

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        return self._count(state, pod_to_remove, added=False)

    def _count(self, state: CycleState, other: PodInfo, *, added: bool) -> Status | None:
        """Add or take `other` from its namespace's quota in this cycle's snapshot."""
        quotas = self._snapshot(state)
        if quotas is None:
            return Status.error(f'error reading "{SNAPSHOT_KEY}" from cycleState: not found')
        info = quotas.get(other.namespace)
        if info is not None:
            (info.add_pod if added else info.remove_pod)(other.pod)
        return None

    # -- PostFilter: preemption by quota --------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        evaluator = Evaluator(NAME, self.handle, _QuotaPreemption(self), asynchronous=False)
        return evaluator.preempt(state, pod, statuses)

    # -- Reserve ------------------------------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        info = self.quotas.get(pod.namespace)
        if info is not None:
            info.add_pod(pod.pod)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        info = self.quotas.get(pod.namespace)
        if info is not None:
            info.remove_pod(pod.pod)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(ELASTIC_QUOTA_RESOURCE, ActionType.ALL)),
        ]


class _QuotaPreemption:
    """The quota's preemption policy, for the Evaluator."""

    def __init__(self, plugin: CapacityScheduling) -> None:
        self.plugin = plugin
        self.handle = plugin.handle

    def offset_and_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes  # every potential node is dry-run, from the first

    def ineligible(self, state: CycleState, pod: PodInfo, statuses: NodeToStatus) -> str:
        if preemption_policy(pod.pod) == PREEMPT_NEVER:
            return NOT_ELIGIBLE_NEVER
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return NOT_ELIGIBLE_STATE
        nominated = (pod.pod.status.nominatedNodeName if pod.pod.status else None) or ""
        if not nominated or statuses.get(nominated).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return ""
        quotas = self.plugin._snapshot(state)
        node = self.handle.snapshot.get(nominated)
        if quotas is None or node is None:
            return ""
        own = quotas.get(pod.namespace)
        if own is not None:
            over_min = own.over_min_with(pre.nominated_in_quota)
            for other in node.pods:
                theirs = quotas.get(other.namespace)
                if other.pod.metadata.deletionTimestamp is None or theirs is None:
                    continue
                if other.namespace == pod.namespace and other.priority < pod.priority:
                    return NOT_ELIGIBLE_TERMINATING
                if other.namespace != pod.namespace and not over_min and theirs.over_min():
                    return NOT_ELIGIBLE_TERMINATING
            return ""
        for other in node.pods:
            if other.namespace in quotas:
                continue
            if other.pod.metadata.deletionTimestamp is not None and other.priority < pod.priority:
                return NOT_ELIGIBLE_TERMINATING
        return ""

    def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, pdbs: Sequence[Budget]
    ) -> tuple[list[PodInfo], int, Status | None]:
        quotas = self.plugin._snapshot(state)
        if quotas is None:
            return [], 0, Status.unschedulable("Failed to read elasticQuotaSnapshot from cycleState")
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, _PreFilterState):
            return [], 0, Status.unschedulable("Failed to read preFilterState from cycleState")
        handle = self.handle

        def remove(victim: PodInfo) -> Status | None:
            node.remove_pod(victim.uid)
            return handle.run_pre_filter_extension_remove_pod(state, pod, victim, node)

        def add(victim: PodInfo) -> Status | None:
            node.add_pod(victim)
            return handle.run_pre_filter_extension_add_pod(state, pod, victim, node)

        key = importance(handle.clock.now())
        ordered = sorted(node.pods, key=key, reverse=True)  # least important first
        own = quotas.get(pod.namespace)
        potential: list[PodInfo] = []
        if own is not None:
            over_min = own.over_min_with(pre.nominated_in_quota)
            for other in ordered:
                theirs = quotas.get(other.namespace)
                if theirs is None:
                    continue
                if over_min:
                    chosen = other.namespace == pod.namespace and other.priority < pod.priority
                else:
                    chosen = other.namespace != pod.namespace and theirs.over_min()
                if chosen:
                    potential.append(other)
                    if (status := remove(other)) is not None:
                        return [], 0, status
        else:
            for other in ordered:
                if other.namespace in quotas or other.priority >= pod.priority:
                    continue
                potential.append(other)
                if (status := remove(other)) is not None:
                    return [], 0, status
        if not potential:
            return [], 0, Status.unresolvable(f"No victims found on node {node.name} for preemptor pod {pod.name}")
        if (status := handle.run_filter_plugins_with_nominated_pods(state, pod, node)) is not None:
            return [], 0, status
        if own is not None and (own.over_max_with(pre.request) or quotas.aggregated_over_min_with(pre.request)):
            return [], 0, Status.unschedulable(GLOBAL_MAX_EXCEEDED)
        potential.sort(key=key)
        violating, others = split_by_pdb(potential, pdbs)
        victims: list[PodInfo] = []
        violations = 0

        def reprieve(candidate: PodInfo) -> tuple[bool, Status | None]:
            if (status := add(candidate)) is not None:
                return False, status
            fits = handle.run_filter_plugins_with_nominated_pods(state, pod, node) is None
            if not fits:
                if (status := remove(candidate)) is not None:
                    return False, status
                victims.append(candidate)
            if own is not None and (
                own.over_max_with(pre.nominated_in_quota) or quotas.aggregated_over_min_with(pre.nominated_all)
            ):
                if fits:
                    if (status := remove(candidate)) is not None:
                        return False, status
                    victims.append(candidate)
                else:  # removed twice upstream: the second removal fails the node
                    return False, Status.error(f"no corresponding pod {candidate.name} in pods of node {node.name}")
            return fits, None

        for candidate in violating:
            fits, status = reprieve(candidate)
            if status is not None:
                return [], 0, status
            violations += not fits
        for candidate in others:
            _, status = reprieve(candidate)
            if status is not None:
                return [], 0, status
        if violating and others:
            victims.sort(key=key)
        return victims, violations, None


def new(args: object, handle: Handle) -> CapacityScheduling:
    return CapacityScheduling(handle)


SPEC = PluginSpec(new, name=NAME)
__all__ = ("NAME", "SPEC", "CapacityScheduling", "QuotaInfo", "Quotas", "pod_request")
