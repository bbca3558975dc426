"""Preemption's labs, on drill 5.C2's cluster (three full 4-CPU nodes and `urgent`, priority 1000).

5.5.1 — the preemptor gets a claim, not the node: PostFilter nominates a node
(`status.nominatedNodeName`), the victims are deleted, and only a later attempt binds the preemptor.
5.5.2 — a PDB that makes preemption fail, and says so: what kube-scheduler v1.36.2 really does.
A budget is a preference among candidates, not a veto: when every candidate violates one, the pod
is still preempted and the violation counted. Preemption fails when no node has victims enough —
and the FailedScheduling message says so."""

from __future__ import annotations

from lightkube.models import meta_v1
from lightkube.resources import scheduling_v1

from kubesched.lab.drill.c2 import run_c2
from kubesched.lab.drill.story import int_of, list_of, mapping_of
from kubesched.lab.harness import NODE, lab_cluster
from kubesched.lab.result import Check, LabResult
from kubesched.sim import make_nodes
from kubesched.workloads.runner import make_pod

CLAIM_ID, CLAIM_TITLE = "5.5.1", "The preemptor gets a claim, not the node"
BUDGET_ID, BUDGET_TITLE = "5.5.2", "A PDB that makes preemption fail, and says so"
ORDER = ("nomination.set", "preemption.victim", "bind.done")
NO_VICTIMS = (
    "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are "
    "available: 2 No preemption victims found for incoming pod."
)


def run_claim(*, seed: int = 1, spare_node: bool = False) -> LabResult:
    """5.C2's cluster; with `spare_node` an empty node is there, `urgent` binds at once and nothing
    is nominated, which makes the claim false."""
    story = run_c2(spare_node=spare_node)
    mine = [s for s in story.lines if s.pod == "default/urgent" or s.kind == "preemption.victim"]
    firsts = {kind: next((i for i, s in enumerate(mine) if s.kind == kind), None) for kind in ORDER}
    nominated = (story.preemption or {}).get("nominatedNode")
    node = story.placements.get("urgent")
    positions = [firsts[k] for k in ORDER]
    in_order = all(p is not None for p in positions) and positions == sorted(p for p in positions if p is not None)
    check = Check(
        claim="urgent is nominated to a node before its victims go, and bound there only after: a claim first, "
        "the node later",
        evidence={
            "order": {k: (mine[i].time if i is not None else None) for k, i in firsts.items()},
            "nominated": nominated,
            "node": node,
        },
        passed=in_order and nominated == node,
    )
    return LabResult(CLAIM_ID, CLAIM_TITLE, story.lines, check)


def run_budget(*, seed: int = 1, pdb_blocks: bool = True) -> LabResult:
    """Two parts. 5.C2 with `pdb_blocks`: the only node where preemption can make room runs pods
    under a budget that allows no disruption; they are preempted anyway, with the violation
    counted (without `pdb_blocks` another node needs no violation, which makes the claim false).
    Then two nodes full of pods as important as the preemptor: no victims, no preemption, and the
    message that says so."""
    story = run_c2(pdb_blocks=pdb_blocks)
    chosen = next((s for s in story.lines if s.kind == "preemption.chosen"), None)
    victims = [s.pod for s in story.lines if s.kind == "preemption.victim"]
    preempted = story.preemption or {}
    candidates = [mapping_of(c, "a candidate") for c in list_of(preempted.get("candidates", []), "the candidates")]
    violated = any(
        c["node"] == preempted.get("nominatedNode") and int_of(c["pdbViolations"], "its PDB violations") > 0
        for c in candidates
    )

    classes = [scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name="critical"), value=1000)]
    full = [make_pod(f"peer-{i}", {"cpu": "3"}, priorityClassName="critical", nodeName=f"node-{i}") for i in range(2)]
    lab = lab_cluster(seed=seed, nodes=make_nodes(2, NODE), pods=full, objects=classes)

    async def body() -> None:
        await lab.cluster.create(make_pod("late", {"cpu": "2"}, priorityClassName="critical"))
        await lab.clock.sleep(5.0)

    lab.run(body)
    message = lab.failed_scheduling().get("late")
    told = [*story.lines, *lab.told("late", kinds=("cycle.failed",))]
    cache_evicted = bool(victims) and all(v.startswith("default/cache-") for v in victims)
    check = Check(
        claim="a budget is a preference, not a veto: when every candidate violates one, its pods are preempted and "
        "the violation counted; preemption fails only when no node has victims enough, and the message says so",
        evidence={
            "chosen": chosen.text if chosen else None,
            "victims": victims,
            "noVictimsMessage": message,
            "expected": NO_VICTIMS,
        },
        passed=violated and cache_evicted and message == NO_VICTIMS,
    )
    return LabResult(BUDGET_ID, BUDGET_TITLE, told, check)
