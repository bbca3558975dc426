"""5.3.5 and 5.3.6 — percentageOfNodesToScore. Below 100 nodes the knob cannot move anything: every
node is evaluated whatever it says. Above, the scheduler stops looking once it has found as many
feasible nodes as numFeasibleNodesToFind allows (schedule_one.go): the configured percentage, or
the adaptive one (50 % less one per 125 nodes, at least 5 %), and never fewer than 100."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from lightkube.resources import core_v1

from kubesched.api.objects import present
from kubesched.api.quantity import milli_value
from kubesched.lab.harness import NODE, lab_cluster
from kubesched.lab.result import Check, LabResult, site_of
from kubesched.scheduler.fit_error import num_feasible_nodes_to_find
from kubesched.sim import make_nodes
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

MIN_FEASIBLE_NODES = 100  # minFeasibleNodesToFind
MIN_FEASIBLE_PERCENTAGE = 5  # minFeasibleNodesPercentageToFind
BASE_PERCENTAGE = 50  # basePercentageOfNodesToScore


def upstream_count(nodes: int, percentage: int) -> int:
    """numFeasibleNodesToFind as v1.36.2 computes it, restated here to check the scheduler by."""
    if nodes < MIN_FEASIBLE_NODES:
        return nodes
    if percentage <= 0:
        percentage = max(BASE_PERCENTAGE - nodes // 125, MIN_FEASIBLE_PERCENTAGE)
    return max(nodes * percentage // 100, MIN_FEASIBLE_NODES)


def _found(nodes: int, percentage: int, *, seed: int) -> tuple[int, int]:
    """Schedule one pod on `nodes` empty nodes with `percentage`; the nodes its cycle evaluated
    and found feasible."""
    lab = lab_cluster(seed=seed, nodes=make_nodes(nodes, NODE), percentageOfNodesToScore=percentage)

    async def body() -> None:
        await lab.cluster.create(make_pod("probe", {"cpu": "100m"}))
        await lab.clock.sleep(2.0)

    lab.run(body)
    selected = lab.records("cycle.selected", pod="default/probe")
    if not selected:
        return 0, 0
    return int(selected[0].details["evaluated"]), int(selected[0].details["feasible"])


def _lab(
    lab_id: str,
    title: str,
    claim: str,
    cases: Sequence[tuple[int, int]],
    expect: Callable[[int, int], int],
    *,
    seed: int,
    stops_early: bool = False,
) -> LabResult:
    """Each case (nodes, percentage) measured; the check: the feasible nodes found equal
    `expect(nodes, percentage)` in every case (and, with `stops_early`, are fewer than the nodes)."""
    steps, rows, passed = [], [], True
    for nodes, percentage in cases:
        evaluated, feasible = _found(nodes, percentage, seed=seed)
        expected = expect(nodes, percentage)
        setting = f"{percentage} %" if percentage else "adaptive (0)"
        steps.append(
            Step(
                0.0,
                f"{nodes} nodes, percentageOfNodesToScore {setting}: {evaluated} evaluated, {feasible} feasible "
                f"(numFeasibleNodesToFind: {upstream_count(nodes, percentage)})",
                site_of(num_feasible_nodes_to_find),
                (cite("numFeasibleNodesToFind"),),
            )
        )
        rows.append({"nodes": nodes, "percentage": percentage, "evaluated": evaluated, "feasible": feasible})
        passed = passed and feasible == expected and evaluated >= feasible and (not stops_early or feasible < nodes)
    return LabResult(lab_id, title, steps, Check(claim, {"cases": rows}, passed))


def run_below_floor(*, seed: int = 1, nodes: int = 50) -> LabResult:
    """5.3.5: `nodes` (fewer than 100 unless a test says otherwise) at 10, 50 and 100 %."""
    return _lab(
        "5.3.5",
        "The knob that cannot move here",
        f"with {nodes} nodes every node is evaluated, whatever percentageOfNodesToScore says",
        [(nodes, p) for p in (10, 50, 100)],
        lambda n, _: n,
        seed=seed,
    )


ADAPTIVE_NODES, PROBES = 5000, 40
LOADS = ("500m", "1", "1500m", "2", "2500m", "3", "3500m")  # what runs on a loaded 4-CPU node


def _loaded_cluster(*, seed: int, empty: int | None) -> list[core_v1.Pod]:
    """Each of the 5,000 nodes runs one pod of a seeded size; with `empty`, every node runs
    3500m except `empty` nodes spread over the cluster, which run nothing."""
    rng = random.Random(seed)
    pods = []
    for i in range(ADAPTIVE_NODES):
        if empty is None:
            cpu = rng.choice(LOADS)
        elif i % (ADAPTIVE_NODES // empty) == 0:
            continue
        else:
            cpu = LOADS[-1]
        pods.append(make_pod(f"load-{i}", {"cpu": cpu}, nodeName=f"node-{i}"))
    return pods


def _placements(percentage: int, *, seed: int, empty: int | None) -> tuple[list[float], list[int]]:
    """Forty small pods on the loaded cluster at `percentage`: the CPU share each chosen node had
    in use, and the nodes each attempt evaluated."""
    loads = {present(p.spec, "the pod's spec").nodeName: p for p in _loaded_cluster(seed=seed, empty=empty)}
    lab = lab_cluster(
        seed=seed,
        nodes=make_nodes(ADAPTIVE_NODES, NODE),
        pods=list(loads.values()),
        percentageOfNodesToScore=percentage,
    )

    async def body() -> None:
        for i in range(PROBES):
            await lab.cluster.create(make_pod(f"probe-{i}", {"cpu": "100m"}))
            await lab.clock.sleep(0.05)
        await lab.clock.sleep(2.0)

    lab.run(body)
    used, evaluated = [], []
    for record in lab.records("cycle.selected"):
        load = loads.get(str(record.node))
        used.append(_requested_cpu(load) / 4000 if load else 0.0)
        evaluated.append(int(record.details["evaluated"]))
    return used, evaluated


def _requested_cpu(pod: core_v1.Pod) -> int:
    """The millicores the pod's one container requests."""
    resources = present(present(pod.spec, "the pod's spec").containers[0].resources, "its container's resources")
    return milli_value(present(resources.requests, "its requests")["cpu"])


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 1.0


def _adaptive(*, seed: int, empty: int | None) -> tuple[list[Step], dict[str, object], bool]:
    """The checklist's claim: adaptive against 100 % at 5,000 nodes, the work and the placements."""
    (fast_used, fast_work), (full_used, full_work) = (_placements(p, seed=seed, empty=empty) for p in (0, 100))
    work = _mean(full_work) / _mean(fast_work) if fast_work else 0.0
    loss = (_mean(fast_used) - _mean(full_used)) * 100
    steps = [
        Step(
            0.0,
            f"{ADAPTIVE_NODES} loaded nodes, {PROBES} small pods, {label}: {_mean(w):.0f} nodes evaluated per attempt, "
            f"the chosen nodes {_mean(u) * 100:.1f} % busy on average",
            site_of(num_feasible_nodes_to_find),
            (cite("numFeasibleNodesToFind"), cite("findNodesThatPassFilters")),
        )
        for label, u, w in (("adaptive", fast_used, fast_work), ("100 %", full_used, full_work))
    ]
    evidence: dict[str, object] = {
        "evaluatedPerAttempt": {"adaptive": round(_mean(fast_work)), "all": round(_mean(full_work))},
        "workFactor": round(work, 1),
        "qualityLossPoints": round(loss, 1),
    }
    return steps, evidence, len(fast_used) == len(full_used) == PROBES and work >= 5 and loss <= 5


def run_above_floor(*, seed: int = 1, sizes: Sequence[int] = (150, 5000), empty: int | None = None) -> LabResult:
    """5.3.6: clusters of `sizes` fake nodes, adaptive and at 20 %; then the checklist's claim on a
    loaded 5,000-node cluster. With `empty` nodes the only ones with room, a sample of a tenth of
    the cluster misses them and the claim is false; so is the formula below the floor (`sizes`)."""
    result = _lab(
        "5.3.6",
        "Above the floor at last: a hundred nodes that do not exist",
        "the scheduler stops before the end of the cluster, at numFeasibleNodesToFind feasible nodes: the "
        "percentage (or the adaptive one) of the cluster, never fewer than 100; and at 5,000 nodes the adaptive "
        "percentage evaluates at least 5 times fewer nodes than 100 % for placements within 5 points of theirs",
        [(n, p) for n in sizes for p in (0, 20)],
        upstream_count,
        seed=seed,
        stops_early=True,
    )
    assert result.check is not None
    steps, evidence, held = _adaptive(seed=seed, empty=empty)
    check = Check(result.check.claim, {**result.check.evidence, "adaptive": evidence}, result.check.passed and held)
    return LabResult(result.id, result.title, [*result.steps, *steps], check)
