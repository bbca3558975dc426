"""5.3.5 and 5.3.6 — percentageOfNodesToScore. Below 100 nodes the knob cannot move anything: every
node is evaluated whatever it says. Above, the scheduler stops looking once it has found as many
feasible nodes as numFeasibleNodesToFind allows (schedule_one.go): the configured percentage, or
the adaptive one (50 % less one per 125 nodes, at least 5 %), and never fewer than 100."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kubesched.cli.lab.harness import NODE, lab_cluster
from kubesched.cli.lab.result import Check, LabResult, site_of
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


def run_above_floor(*, seed: int = 1, sizes: Sequence[int] = (150, 5000)) -> LabResult:
    """5.3.6: clusters of `sizes` fake nodes, adaptive and at 20 %."""
    return _lab(
        "5.3.6",
        "Above the floor at last: a hundred nodes that do not exist",
        "the scheduler stops before the end of the cluster, at numFeasibleNodesToFind feasible nodes: the "
        "percentage (or the adaptive one) of the cluster, never fewer than 100",
        [(n, p) for n in sizes for p in (0, 20)],
        upstream_count,
        seed=seed,
        stops_early=True,
    )
