"""5.2.5 — The node that fits ten times because the cache has not caught up. The from-scratch
scheduler decides from what its watch has delivered; pods created together are each placed before
the bindings of the ones before them come back, so one node is chosen more times than it has room
for, and its kubelet rejects the surplus (OutOfcpu). kube-scheduler assumes each pod into its cache
before binding (schedule_one.go's assume), which is what the from-scratch one lacks."""

from __future__ import annotations

from kubesched.api.quantity import milli_value
from kubesched.cli.lab.result import Check, LabResult, Step
from kubesched.cli.scenario import run_minimal
from kubesched.trace import cite

ID, TITLE = "5.2.5", "The node that fits ten times because the cache has not caught up"
PODS, CPU = 10, "1"


def run(*, seed: int = 1, interval: float = 0.0) -> LabResult:
    """One 4-CPU node and ten 1-CPU pods, created at once (or one every `interval` seconds, which
    lets the watch catch up and makes the claim false)."""
    result = run_minimal(nodes=1, pods=PODS, seed=seed, interval=interval, cpu_choices=(CPU,))
    ((node, allocatable),) = result.nodes.items()
    fits = allocatable // milli_value(CPU)
    chosen = [p for p in result.placements if p.node == node]
    picked = {r.pod: r for r in result.trace if r.kind == "minimal.picked"}
    start = min((r.time for r in picked.values()), default=0.0)
    steps = []
    for p in chosen:
        record = picked.get(f"default/{p.pod}")
        steps.append(
            Step(
                round(record.time - start, 3) if record else 0.0,
                f"{p.pod} placed on {node} seeing {p.free_cpu_seen}m free; kubelet: {p.phase}"
                + (f" ({p.reason})" if p.reason else ""),
                record.site if record else "",
                (cite("assume"),),  # what kube-scheduler does here and the from-scratch one does not
            )
        )
    rejected = [p.pod for p in chosen if p.reason == "OutOfcpu"]
    check = Check(
        claim=f"the node is chosen more times than it fits ({fits}), and its kubelet rejects the surplus with OutOfcpu",
        evidence={"node": node, "fits": fits, "chosen": len(chosen), "rejectedOutOfcpu": rejected},
        passed=len(chosen) > fits and len(rejected) == len(chosen) - fits,
    )
    return LabResult(ID, TITLE, steps, check)
