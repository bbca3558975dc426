"""5.4.7 — SchedulingGated: a pod with scheduling gates is never attempted. PreEnqueue keeps it out
of activeQ (the SchedulingGates plugin), the store marks it PodScheduled=False/SchedulingGated, and
once the last gate is removed the update moves it to activeQ and it is scheduled."""

from __future__ import annotations

from lightkube.resources import core_v1

from kubesched.api.objects import present
from kubesched.lab.harness import NODE, lab_cluster
from kubesched.lab.result import Check, LabResult
from kubesched.sim import make_nodes
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.4.7", "SchedulingGated — a pod the scheduler declines to look at"
GATE = "example.com/wait"
GATED_SECONDS = 60.0
NARRATED = ("queue.move", "queue.pop", "cycle.start", "cycle.selected", "bind.done")


def run(*, seed: int = 1, gated: bool = True) -> LabResult:
    """One node; a pod created with a gate (none when `gated` is False, which makes the claim
    false), the gate removed after a minute."""
    lab = lab_cluster(seed=seed, nodes=make_nodes(1, NODE))
    gates = [{"name": GATE}] if gated else []
    seen: dict[str, object] = {}

    async def body() -> None:
        await lab.cluster.create(make_pod("held", {"cpu": "100m"}, schedulingGates=gates))
        await lab.clock.sleep(GATED_SECONDS)
        status = present(lab.pod("held").status, "the pod's status")
        condition = next((c for c in (status.conditions or []) if c.type == "PodScheduled"), None)
        seen["reason"] = condition.reason if condition else None
        seen["attemptsWhileGated"] = len(lab.records("cycle.start", pod="default/held"))
        await lab.cluster.patch(core_v1.Pod, "held", {"spec": {"schedulingGates": None}}, namespace="default")
        await lab.clock.sleep(5.0)

    lab.run(body)
    told = lab.told("held", kinds=NARRATED)
    node = lab.node_of("held")
    evidence = {**seen, "nodeAfterUngating": node}
    check = Check(
        claim="while gated the pod is never attempted and shows SchedulingGated; without the gate it is scheduled",
        evidence=evidence,
        passed=seen["attemptsWhileGated"] == 0 and seen["reason"] == "SchedulingGated" and node == "node-0",
    )
    return LabResult(ID, TITLE, told, check)
