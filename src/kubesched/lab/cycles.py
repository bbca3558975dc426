"""The two cycles. kube-scheduler runs one scheduling cycle at a time and hands each chosen pod to a
binding goroutine, so the API calls of binding overlap while the decisions stay serial.

5.1.3 — two cycles, one thread: with a slow PreBind, scheduling cycles never overlap; binding
cycles do.
5.3.2 — pod B is scheduled while pod A is still being bound: B's cycle starts before A's Bind
returns, and sees A assumed on its node."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubesched.lab.drill.c4 import SlowPreBind
from kubesched.lab.harness import NODE, LabCluster, lab_cluster
from kubesched.lab.result import Check, LabResult
from kubesched.scheduler.explain import explain_pod
from kubesched.sim import make_nodes
from kubesched.trace import Record
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

CYCLES_ID, CYCLES_TITLE = "5.1.3", "Two cycles, one thread"
WHILE_ID, WHILE_TITLE = "5.3.2", "Pod B is scheduled while pod A is still being bound"
CYCLE_KINDS = ("cycle.start", "cycle.permitted", "cycle.failed", "bind.started", "bind.prebound", "bind.done")


@dataclass(frozen=True)
class Interval:
    pod: str
    start: float
    end: float

    def overlaps(self, other: Interval) -> bool:
        return self.start < other.end and other.start < self.end


def _lab(seed: int, *, nodes: int, slow: bool) -> LabCluster:
    profile: dict[str, object] = {"schedulerName": "default-scheduler"}
    if slow:
        profile["plugins"] = {"preBind": {"enabled": [{"name": SlowPreBind.name}]}}
    return lab_cluster(seed=seed, nodes=make_nodes(nodes, NODE), plugins=[SlowPreBind], profiles=[profile])


def _intervals(records: Sequence[Record], begin: str, end: str, *, by_order: bool = False) -> list[Interval]:
    """Each pod's span from its `begin` record to its `end` record: in virtual time, or with
    `by_order` in the trace's order (a cycle takes no virtual time, so only the order of what
    happened inside it can show two cycles interleaving)."""
    opened: dict[str, float] = {}
    out = []
    for i, r in enumerate(records):
        at = float(i) if by_order else r.time
        if r.kind == begin and r.pod:
            opened[r.pod] = at
        elif r.kind == end and r.pod in opened:
            out.append(Interval(r.pod, opened.pop(r.pod), at))
    return out


def _overlapping(intervals: list[Interval]) -> list[tuple[str, str]]:
    return [(a.pod, b.pod) for i, a in enumerate(intervals) for b in intervals[i + 1 :] if a.overlaps(b)]


def as_two_workers_would_tell(records: Sequence[Record]) -> list[Record]:
    """The trace as a scheduler popping a second pod before its first cycle ends would write it:
    the second cycle's start moved up beside the first's (a wrong answer, for the check to refuse)."""
    out = list(records)
    starts = [i for i, r in enumerate(out) if r.kind == "cycle.start"]
    if len(starts) >= 2:
        out.insert(starts[0] + 1, out.pop(starts[1]))
    return out


def run_cycles(
    *, seed: int = 1, slow: bool = True, retell: Callable[[Sequence[Record]], list[Record]] | None = None
) -> LabResult:
    """Three nodes, four pods created at once, each binding through a PreBind that takes half a
    second (a slow API server). Without the slow PreBind (`slow` False) each binding ends at the
    instant it began, so no two overlap: the claim is then false; the trace retold as two workers
    would write it (`retell`) shows two cycles interleaving, which makes it false too."""
    lab = _lab(seed, nodes=3, slow=slow)
    names = [f"pod-{i}" for i in range(4)]

    async def body() -> None:
        await lab.clock.sleep(0.5)
        for name in names:
            await lab.cluster.create(make_pod(name, {"cpu": "1"}))
        await lab.clock.sleep(5.0)

    lab.run(body)
    records = retell(lab.tracer.records) if retell is not None else lab.tracer.records
    cycles = _intervals(records, "cycle.start", "cycle.permitted", by_order=True)
    bindings = _intervals(records, "bind.started", "bind.done")
    told = lab.told(*names, kinds=CYCLE_KINDS)
    check = Check(
        claim="scheduling cycles never overlap; binding cycles do",
        evidence={
            "cycles": len(cycles),
            "overlappingCycles": _overlapping(cycles),
            "overlappingBindings": _overlapping(bindings),
        },
        passed=len(cycles) == len(names) and not _overlapping(cycles) and bool(_overlapping(bindings)),
    )
    return LabResult(CYCLES_ID, CYCLES_TITLE, told, check)


def run_while_bound(*, seed: int = 1, slow: bool = True) -> LabResult:
    """Two 4-CPU nodes; pods A and B ask for 3 CPUs each and are created together. A is assumed on
    its node and its binding waits half a second in PreBind; B's cycle runs meanwhile, counts A on
    that node, and goes to the other. Without the slow PreBind (`slow` False) A is bound before B's
    cycle begins, which makes the claim false."""
    lab = _lab(seed, nodes=2, slow=slow)

    async def body() -> None:
        await lab.clock.sleep(0.5)
        await lab.cluster.create(make_pod("a", {"cpu": "3"}))
        await lab.clock.sleep(0.001)
        await lab.cluster.create(make_pod("b", {"cpu": "3"}))
        await lab.clock.sleep(5.0)

    lab.run(body)
    a_bound = next((r.time for r in lab.records("bind.done", pod="default/a")), None)
    b_start = next((r.time for r in lab.records("cycle.start", pod="default/b")), None)
    a_node, b_node = lab.node_of("a"), lab.node_of("b")
    attempt = explain_pod(lab.scheduler, "default/b")["attempts"][0]
    rejected = {n: g["reasons"] for g in attempt["filter"] for n in g.get("nodes", ())}
    told = lab.told("a", "b", kinds=(*CYCLE_KINDS, "cache.assumed"))
    told.append(
        Step(
            round(attempt["time"] - lab.start, 3),
            f"b's Filter on {a_node}: {rejected.get(a_node or '', ['passed'])} — a is assumed there, not yet bound",
            told[0].site if told else "",
            told[0].upstream if told else (),
            "default/b",
        )
    )
    began_first = a_bound is not None and b_start is not None and b_start < a_bound
    check = Check(
        claim="b's scheduling cycle starts before a's Bind returns, and b's Filter counts a (assumed) on its node",
        evidence={
            "aBoundAt": round((a_bound or 0) - lab.start, 3),
            "bCycleAt": round((b_start or 0) - lab.start, 3),
            "aNode": a_node,
            "bNode": b_node,
            "bRejectedOnANode": rejected.get(a_node or ""),
        },
        passed=began_first and a_node != b_node and rejected.get(a_node or "") == ["Insufficient cpu"],
    )
    return LabResult(WHILE_ID, WHILE_TITLE, told, check)
