"""5.6.2 — the same workload, two profiles, two distributions: NodeResourcesFit's LeastAllocated
(upstream's default) spreads pods toward the most free room, MostAllocated packs them, measured by
`kubesched compare` on identical fake clusters (`kubesched compare --plot` draws the picture)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from kubesched.config import default_config
from kubesched.lab.result import Check, LabResult
from kubesched.scheduler.discovery import plugin_registry
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.workloads.compare import Workload, WorkloadFile, compare

ID, TITLE = "5.6.2", "The same workload, two profiles, two distributions"
POD = {
    "spec": {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]
    }
}
WORKLOAD = {
    "name": "six-nodes-twelve-pods",
    "description": "Six 4-CPU nodes and twelve 500m pods, one every 0.2 s.",
    "horizon": 30,
    "nodes": [
        {
            "count": 6,
            "prefix": "node-",
            "template": {"status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}},
        }
    ],
    "pods": [{"count": 12, "name": "web-{i}", "at": 0, "every": 0.2, "template": POD}],
}


def _profile(strategy: str) -> dict[str, object]:
    fit = {
        "scoringStrategy": {
            "type": strategy,
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    }
    return {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit", "args": fit}]}


def run(*, seed: int = 1, second: str = "MostAllocated") -> LabResult:
    """The workload under LeastAllocated, then under `second` (LeastAllocated again makes the
    claim false: the same distribution twice)."""
    registry = plugin_registry()
    workload = Workload(msgspec.convert(WORKLOAD, WorkloadFile), Path("."))
    configs = [(s, default_config(registry, profiles=[_profile(s)])) for s in ("LeastAllocated", second)]
    spread, packed = compare(workload, configs, registry, seed=seed)
    steps = [
        Step(
            0.0,
            f"{r.config}: {r.nodes_used} of {len(r.nodes)} nodes used; pods per node "
            f"{[len(n.pods) for n in r.nodes]}; CPU utilisation stdev {r.spread:.3f}",
            upstream=(cite("prioritizeNodes"),),
        )
        for r in (spread, packed)
    ]
    check = Check(
        claim="LeastAllocated uses every node; MostAllocated fills nodes one after another and leaves some empty",
        evidence={
            "nodesUsed": {spread.config: spread.nodes_used, f"{packed.config} (second)": packed.nodes_used},
            "pending": len(spread.pending) + len(packed.pending),
        },
        passed=spread.nodes_used == len(spread.nodes)
        and packed.nodes_used < len(packed.nodes)
        and not spread.pending
        and not packed.pending,
    )
    return LabResult(ID, TITLE, steps, check)
