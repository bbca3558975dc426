"""5.1.6 — Three ways to make every node refuse: a pod that asks for more CPU than any node has,
one that does not tolerate the taint every node carries, one whose node selector no node matches.
Each gets the FailedScheduling message kube-scheduler v1.36.2 writes, naming the plugin's reason
for every node."""

from __future__ import annotations

from lightkube.resources import core_v1

from kubesched.lab.harness import lab_cluster
from kubesched.lab.result import Check, LabResult
from kubesched.sim import NodeTemplate, make_nodes
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.1.6", "Three ways to make every node refuse"
NODES = 3
TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
PREEMPTION_NOT_HELPFUL = f"preemption: 0/{NODES} nodes are available: {NODES} Preemption is not helpful for scheduling."
# What v1.36.2 prints for each (noderesources/fit.go, tainttoleration, nodeaffinity reasons; the
# diagnosis' summary and the preemption tail as schedule_one.go and preemption.go format them).
EXPECTED = {
    # more than a node's allocatable is unresolvable there (fit.go), so preemption cannot help
    "too-big": f"0/{NODES} nodes are available: {NODES} Insufficient cpu. no new claims to deallocate, "
    f"{PREEMPTION_NOT_HELPFUL}",
    "intolerant": f"0/{NODES} nodes are available: {NODES} node(s) had untolerated taint(s). "
    f"no new claims to deallocate, {PREEMPTION_NOT_HELPFUL}",
    "misdirected": f"0/{NODES} nodes are available: {NODES} node(s) didn't match Pod's node affinity/selector. "
    f"no new claims to deallocate, {PREEMPTION_NOT_HELPFUL}",
}
WHY = {
    "too-big": ("requests 8 CPUs; every node has 4", "NodeResourcesFit"),
    "intolerant": ("tolerates nothing; every node is tainted dedicated=infra:NoSchedule", "TaintToleration"),
    "misdirected": ("selects disktype=nvme; no node has the label", "NodeAffinity"),
}


def run(*, seed: int = 1, node_cpu: str = "4") -> LabResult:
    """Three 4-CPU nodes, all tainted except when a pod tolerates it; `node_cpu` other than "4"
    changes the nodes (a way to make the claim false)."""
    template = NodeTemplate(capacity={"cpu": node_cpu, "memory": "16Gi", "pods": "110"}, zones=(), taints=[TAINT])
    lab = lab_cluster(seed=seed, nodes=make_nodes(NODES, template))
    toleration = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    pods = {
        "too-big": make_pod("too-big", {"cpu": "8"}, tolerations=toleration),
        "intolerant": make_pod("intolerant", {"cpu": "100m"}),
        "misdirected": make_pod(
            "misdirected", {"cpu": "100m"}, tolerations=toleration, nodeSelector={"disktype": "nvme"}
        ),
    }

    async def body() -> None:
        for pod in pods.values():
            await lab.cluster.create(pod)
        await lab.clock.sleep(5.0)

    lab.run(body)
    seen = lab.failed_scheduling()
    steps = []
    for name, (why, plugin) in WHY.items():
        failed = lab.records("cycle.failed", pod=f"default/{name}")
        first = failed[0] if failed else None
        steps.append(
            Step(
                round(first.time - lab.start, 3) if first else 0.0,
                f"{name} {why}: {plugin} rejects every node — {seen.get(name, 'no FailedScheduling event')}",
                first.site if first else "",
                first.upstream if first else (cite("schedulePod"),),
            )
        )
    bound = [p.metadata.name for p in lab.store.list(core_v1.Pod).items if p.spec.nodeName]
    check = Check(
        claim="each of the three pods is refused by every node with kube-scheduler v1.36.2's exact message",
        evidence={"messages": seen, "expected": EXPECTED, "bound": bound},
        passed=seen == EXPECTED and not bound,
    )
    return LabResult(ID, TITLE, steps, check)
