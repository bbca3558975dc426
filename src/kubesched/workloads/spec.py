"""Workload definitions: a list of operations (createNodes, createPods, barrier), as scheduler_perf has."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CreateNodes:
    count: int
    capacity: dict[str, str] = field(default_factory=lambda: {"cpu": "4", "memory": "32Gi", "pods": "110"})


@dataclass(frozen=True)
class CreatePods:
    count: int
    requests: dict[str, str] = field(default_factory=lambda: {"cpu": "100m", "memory": "500Mi"})
    collect_metrics: bool = False
    schedulable: bool = True  # False: barriers do not wait for these pods (skipWaitToCompletion)


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


WORKLOADS = {"scheduling-basic": scheduling_basic, "unschedulable": unschedulable}
