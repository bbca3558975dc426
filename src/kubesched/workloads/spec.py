"""Workload definitions: a list of operations (createNodes, createPods, barrier), as scheduler_perf has."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CreateNodes:
    count: int
    capacity: dict[str, str] = field(default_factory=lambda: {"cpu": "4", "memory": "32Gi", "pods": "110"})
    zones: tuple[str, ...] = ()  # topology.kubernetes.io/zone values, assigned round-robin


@dataclass(frozen=True)
class CreatePods:
    count: int
    requests: dict[str, str] = field(default_factory=lambda: {"cpu": "100m", "memory": "500Mi"})
    collect_metrics: bool = False
    schedulable: bool = True  # False: barriers do not wait for these pods (skipWaitToCompletion)
    labels: dict[str, str] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)  # more pod spec fields (affinity, constraints...)
    priority: int | None = None  # a PriorityClass of this value (made on first use) for the pods


@dataclass(frozen=True)
class Barrier:
    """Wait until every pod created so far is scheduled."""


@dataclass(frozen=True)
class Settle:
    """Wait until every pod created so far has been tried (none left to pop, none in flight) and
    the outcome written (events, conditions)."""


Operation = CreateNodes | CreatePods | Barrier | Settle


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    operations: tuple[Operation, ...]
    params: dict[str, Any] = field(default_factory=dict)


def scheduling_basic(*, nodes: int = 5000, initial: int = 1000, measured: int = 10000) -> Workload:
    """upstream's SchedulingBasic: plain pods (100m / 500Mi) onto 4-CPU nodes, no constraints."""
    return Workload(
        name="scheduling-basic",
        description=f"{nodes} nodes, {initial} initial pods, {measured} measured pods",
        operations=(
            CreateNodes(nodes),
            CreatePods(initial),
            Barrier(),
            CreatePods(measured, collect_metrics=True),
            Barrier(),
        ),
        params={"nodes": nodes, "initial": initial, "measured": measured},
    )


def unschedulable(*, nodes: int = 5000, initial: int = 2000, measured: int = 10000) -> Workload:
    """upstream's Unschedulable: `initial` pods asking for 9 CPUs (more than any node has) are
    tried and wait in the queue while `measured` plain pods are scheduled."""
    return Workload(
        name="unschedulable",
        description=f"{nodes} nodes, {initial} unschedulable pods, {measured} measured pods",
        operations=(
            CreateNodes(nodes),
            CreatePods(initial, requests={"cpu": "9"}, schedulable=False),
            Settle(),
            CreatePods(measured, collect_metrics=True),
            Barrier(),
        ),
        params={"nodes": nodes, "initial": initial, "measured": measured},
    )


ZONES = ("moon-1", "moon-2", "moon-3")
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _shaped(
    name: str,
    description: str,
    *,
    nodes: int,
    initial: int,
    measured: int,
    labels: dict[str, str],
    spec: dict[str, Any],
) -> Workload:
    """Nodes in three zones; `initial` then `measured` pods of one shape (labels and spec fields)."""
    return Workload(
        name=name,
        description=f"{nodes} nodes, {initial} initial and {measured} measured pods {description}",
        operations=(
            CreateNodes(nodes, zones=ZONES),
            CreatePods(initial, labels=labels, spec=spec),
            Barrier(),
            CreatePods(measured, collect_metrics=True, labels=labels, spec=spec),
            Barrier(),
        ),
        params={"nodes": nodes, "initial": initial, "measured": measured},
    )


def _term(key: str, value: str, topology: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {key: value}}, "topologyKey": topology}


def topology_spreading(*, nodes: int = 5000, initial: int = 1000, measured: int = 5000) -> Workload:
    """upstream's TopologySpreading: each pod spreads over the zones, maxSkew 5, DoNotSchedule."""
    constraint = {
        "maxSkew": 5,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    spec = {"topologySpreadConstraints": [constraint]}
    return _shaped(
        "topology-spreading",
        "spread over zones",
        nodes=nodes,
        initial=initial,
        measured=measured,
        labels={"color": "blue"},
        spec=spec,
    )


def pod_anti_affinity(*, nodes: int = 5000, initial: int = 1000, measured: int = 1000) -> Workload:
    """upstream's SchedulingPodAntiAffinity: at most one such pod per node (required anti-affinity)."""
    spec = {
        "affinity": {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("color", "green", HOSTNAME)]}
        }
    }
    return _shaped(
        "pod-anti-affinity",
        "with required anti-affinity per node",
        nodes=nodes,
        initial=initial,
        measured=measured,
        labels={"color": "green"},
        spec=spec,
    )


def pod_affinity(*, nodes: int = 5000, initial: int = 1000, measured: int = 5000) -> Workload:
    """upstream's SchedulingPodAffinity: pods want a zone holding another such pod (required affinity)."""
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("foo", "", ZONE)]}}}
    return _shaped(
        "pod-affinity",
        "with required affinity per zone",
        nodes=nodes,
        initial=initial,
        measured=measured,
        labels={"foo": ""},
        spec=spec,
    )


def preferred_pod_anti_affinity(*, nodes: int = 5000, initial: int = 1000, measured: int = 5000) -> Workload:
    """upstream's SchedulingPreferredPodAntiAffinity: pods prefer nodes without another such pod."""
    spec = {
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "podAffinityTerm": _term("color", "green", HOSTNAME)}
                ]
            }
        }
    }
    return _shaped(
        "preferred-pod-anti-affinity",
        "with preferred anti-affinity per node",
        nodes=nodes,
        initial=initial,
        measured=measured,
        labels={"color": "green"},
        spec=spec,
    )


def preemption_basic(*, nodes: int = 1000, initial: int = 4000, measured: int = 1000) -> Workload:
    """upstream's PreemptionBasic: `initial` low-priority pods (1 CPU each) fill 4-CPU nodes, then
    each of `measured` high-priority pods (1 CPU) must preempt one of them. The low-priority pods
    have no grace period, as pods without a kubelet to stop them."""
    low = {"cpu": "1", "memory": "100Mi"}
    return Workload(
        name="preemption-basic",
        description=f"{nodes} nodes filled with {initial} low-priority pods, {measured} high-priority pods",
        operations=(
            CreateNodes(nodes),
            CreatePods(initial, requests=low, priority=1, spec={"terminationGracePeriodSeconds": 0}),
            Barrier(),
            CreatePods(measured, requests=low, priority=1000, collect_metrics=True),
            Barrier(),
        ),
        params={"nodes": nodes, "initial": initial, "measured": measured},
    )


WORKLOADS = {
    "scheduling-basic": scheduling_basic,
    "unschedulable": unschedulable,
    "topology-spreading": topology_spreading,
    "pod-anti-affinity": pod_anti_affinity,
    "pod-affinity": pod_affinity,
    "preferred-pod-anti-affinity": preferred_pod_anti_affinity,
    "preemption-basic": preemption_basic,
}
