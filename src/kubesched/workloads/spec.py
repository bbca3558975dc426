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


@dataclass(frozen=True)
class Barrier:
    """Wait until every pod created so far is scheduled."""


Operation = CreateNodes | CreatePods | Barrier


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


WORKLOADS = {"scheduling-basic": scheduling_basic}
