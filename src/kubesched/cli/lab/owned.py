"""5.5.4 — build artifact 2: a scoring plugin in a scheduler you own. The out-of-tree package's
NodeResourcesAllocatable (found through its `kubesched.plugins` entry point) is the only Score
plugin of a second scheduler, `allocatable-scheduler`, which runs beside the default one over the
same cluster, as scheduler-plugins' own example configures it. Pods naming it go to the smallest
nodes; the default scheduler's pods, on the same nodes, go where the most room is."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kubesched.cli import options
from kubesched.cli.capstone import PACKAGE
from kubesched.cli.lab.harness import LabCluster, lab_cluster
from kubesched.cli.lab.result import Check, LabResult
from kubesched.framework.registry import IN_TREE
from kubesched.sim import NodeTemplate
from kubesched.trace import cite, extension_point
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.5.4", "Build artifact 2: a scoring plugin in a scheduler you own"
PLUGIN = "NodeResourcesAllocatable"
OWNED = "allocatable-scheduler"
SIZES = {"small": "2", "medium": "8", "large": "32"}  # CPUs; two nodes of each


def owned_profile(mode: str) -> dict[str, Any]:
    """scheduler-plugins' configuration for the plugin (`manifests/noderesources/`): every default
    Score plugin off, NodeResourcesAllocatable alone, cpu weighted 1,000,000 to memory's 1."""
    args = {"mode": mode, "resources": [{"name": "cpu", "weight": 1_000_000}, {"name": "memory", "weight": 1}]}
    return {
        "schedulerName": OWNED,
        "plugins": {"score": {"enabled": [{"name": PLUGIN}], "disabled": [{"name": "*"}]}},
        "pluginConfig": [{"name": PLUGIN, "args": args}],
    }


def _nodes() -> list[Any]:
    nodes: list[Any] = []
    for size, cpu in SIZES.items():
        template = NodeTemplate(capacity={"cpu": cpu, "memory": f"{4 * int(cpu)}Gi", "pods": "110"}, zones=())
        nodes += [template.make(f"{size}-{i}", len(nodes)) for i in range(2)]
    return nodes


def _sizes(lab: LabCluster, names: list[str]) -> Counter[str]:
    return Counter((lab.pod(n).spec.nodeName or "pending").split("-")[0] for n in names)


def run(*, seed: int = 1, mode: str = "Least") -> LabResult:
    """Six nodes of three sizes; six 500m pods for each scheduler, created in turn. With `mode`
    Most the plugin prefers the largest nodes, as the default does, which makes the claim false.
    UsageError when the package is not installed."""
    lab = lab_cluster(seed=seed, nodes=_nodes())
    entry = lab.registry.get(PLUGIN)
    if entry is None:
        raise options.UsageError(
            f"lab {ID} runs the out-of-tree plugin {PLUGIN}: install its package (pip install "
            f"contrib/scheduler-plugins; package {PACKAGE} not found)"
        )
    lab.second_scheduler(identity=OWNED, profiles=[owned_profile(mode)])
    names = {"default-scheduler": [f"default-{i}" for i in range(6)], OWNED: [f"owned-{i}" for i in range(6)]}

    async def body() -> None:
        await lab.clock.sleep(0.5)
        for i in range(6):
            for scheduler, pods in names.items():
                await lab.cluster.create(make_pod(pods[i], {"cpu": "500m"}, schedulerName=scheduler))
                await lab.clock.sleep(0.1)
        await lab.clock.sleep(5.0)

    lab.run(body)
    placed = {scheduler: _sizes(lab, pods) for scheduler, pods in names.items()}
    by_owned = {r.pod for r in lab.records("cycle.start") if r.details.get("profile") == OWNED}
    steps = [
        Step(
            0.0,
            f"{PLUGIN} registered from {entry.source}; {OWNED} scores with it alone "
            f"(mode {mode}, cpu weight 1000000, memory 1)",
            upstream=(extension_point("score"),),
        ),
        *(
            Step(
                0.0,
                f"{scheduler}: pods per node size {dict(sorted(sizes.items()))}",
                upstream=(cite("sortedNodeScores"),),
            )
            for scheduler, sizes in placed.items()
        ),
        *lab.told(names[OWNED][0], kinds=("cycle.scored", "cycle.selected", "bind.done")),
    ]
    owned_small = placed[OWNED].get("small", 0)
    check = Check(
        claim=f"the out-of-tree plugin, in a scheduler of its own, puts every pod naming {OWNED} on the smallest "
        "nodes, while the default scheduler's pods, on the same cluster, go elsewhere",
        evidence={
            "source": entry.source,
            "placedBy": {k: dict(sorted(v.items())) for k, v in placed.items()},
            "scheduledByOwned": len(by_owned),
        },
        passed=entry.source != IN_TREE
        and by_owned == {f"default/{n}" for n in names[OWNED]}
        and owned_small == len(names[OWNED])
        and placed["default-scheduler"].get("small", 0) == 0
        and "pending" not in placed["default-scheduler"],
    )
    return LabResult(ID, TITLE, steps, check)
