"""The from-scratch scheduler decides from what its watch has delivered: pods created together are
each placed before the bindings of the ones before them come back, so one node is chosen more times
than it has room for, and its kubelet rejects the surplus at admission. kube-scheduler assumes each
pod into its cache before binding (schedule_one.go's assume), which is what the from-scratch one
lacks.

5.2.5 — the node that fits ten times: ten 1-CPU pods on one 4-CPU node, the surplus `OutOfcpu`.
5.2.1 — the OOM you were promised: eight 1 GiB pods on one 4 GiB node, the surplus `OutOfmemory`.
The fake kubelet runs no containers, so the overcommitment shows where a real kubelet first catches
it: admission, which refuses a pod whose requests exceed what is left of the node's allocatable."""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.api.quantity import format_bytes, int_value, milli_value
from kubesched.cli.lab.harness import NODE
from kubesched.cli.lab.result import Check, LabResult
from kubesched.cli.scenario import Placement, run_minimal
from kubesched.sim import NodeTemplate
from kubesched.trace import cite
from kubesched.trace.narrate import Step


@dataclass(frozen=True)
class Burst:
    """Pods created at once onto one node: how many, what each asks, and the resource they overrun."""

    id: str
    title: str
    pods: int
    cpu: str
    memory: str
    node: NodeTemplate
    resource: str  # "cpu" or "memory"

    def fits(self) -> int:
        capacity = self.node.capacity[self.resource]
        if self.resource == "cpu":
            return milli_value(capacity) // milli_value(self.cpu)
        return int_value(capacity) // int_value(self.memory)

    def seen(self, p: Placement) -> str:
        if self.resource == "cpu":
            return f"{p.free_cpu_seen}m CPU"
        return f"{format_bytes(p.free_memory_seen or 0)} memory"


CPU_BURST = Burst(
    "5.2.5",
    "The node that fits ten times because the cache has not caught up",
    10,
    "1",
    "128Mi",
    NODE,
    "cpu",
)
MEMORY_BURST = Burst(
    "5.2.1",
    "The OOM you were promised, produced on purpose",
    8,
    "100m",
    "1Gi",
    NodeTemplate(capacity={"cpu": "16", "memory": "4Gi", "pods": "110"}, zones=()),
    "memory",
)


def _run(burst: Burst, *, seed: int, interval: float) -> LabResult:
    result = run_minimal(
        nodes=1,
        pods=burst.pods,
        seed=seed,
        interval=interval,
        cpu_choices=(burst.cpu,),
        memory=burst.memory,
        template=burst.node,
    )
    (node,) = result.nodes
    fits = burst.fits()
    reason = "OutOfcpu" if burst.resource == "cpu" else "OutOfmemory"
    chosen = [p for p in result.placements if p.node == node]
    picked = {r.pod: r for r in result.trace if r.kind == "minimal.picked"}
    start = min((r.time for r in picked.values()), default=0.0)
    steps = []
    for p in chosen:
        record = picked.get(f"default/{p.pod}")
        steps.append(
            Step(
                round(record.time - start, 3) if record else 0.0,
                f"{p.pod} placed on {node} seeing {burst.seen(p)} free; kubelet: {p.phase}"
                + (f" ({p.reason})" if p.reason else ""),
                record.site if record else "",
                (cite("assume"),),  # what kube-scheduler does here and the from-scratch one does not
            )
        )
    rejected = [p.pod for p in chosen if p.reason == reason]
    check = Check(
        claim=f"the node is chosen more times than it fits ({fits}), and its kubelet rejects the surplus with {reason}",
        evidence={"node": node, "fits": fits, "chosen": len(chosen), f"rejected{reason}": rejected},
        passed=len(chosen) > fits and len(rejected) == len(chosen) - fits,
    )
    return LabResult(burst.id, burst.title, steps, check)


def run(*, seed: int = 1, interval: float = 0.0) -> LabResult:
    """5.2.5: the ten pods created at once (or one every `interval` seconds, which lets the watch
    catch up and makes the claim false)."""
    return _run(CPU_BURST, seed=seed, interval=interval)


def run_memory(*, seed: int = 1, interval: float = 0.0) -> LabResult:
    """5.2.1: the eight pods created at once (`interval` as for 5.2.5)."""
    return _run(MEMORY_BURST, seed=seed, interval=interval)
