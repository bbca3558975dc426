"""5.6.1 — the revert: a node's memory goes back from 2560 MiB to 1536 MiB under four running
512 MiB pods. The scheduler reads the smaller allocatable at once and refuses a new pod
(`Insufficient memory`), yet moves nothing: it never evicts. The kubelet does nothing either while
it runs — admission happens once per pod — until it restarts, as a reverted machine does: then it
admits its pods anew, oldest first (the kubelet's HandlePodAdditions, `pkg/kubelet/kubelet.go`),
and the newest, which no longer fits, fails with `OutOfmemory` though it was running."""

from __future__ import annotations

from typing import Any

from lightkube.resources import core_v1

from kubesched.api.quantity import format_bytes, int_value
from kubesched.api.resources import pod_requests
from kubesched.cli.lab.harness import LabCluster, lab_cluster
from kubesched.cli.lab.result import Check, LabResult, site_of
from kubesched.sim import FakeKubelets, NodeTemplate
from kubesched.trace import cite
from kubesched.trace.narrate import Step, steps
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.6.1", "The revert: 2560MB back to 1536MB"
NODE_NAME = "forge"
BEFORE, AFTER = "2560Mi", "1536Mi"
POD_MEMORY = "512Mi"
RUNNING = [f"app-{i}" for i in range(4)]
LATE = "late"


def _phases(lab: LabCluster) -> dict[str, str]:
    return {name: (lab.pod(name).status.phase or "") for name in RUNNING}


def _requested(lab: LabCluster) -> int:
    """The memory the node's live pods request: what the scheduler's cache holds against it."""
    live = [lab.pod(n) for n in RUNNING if lab.pod(n).status.phase not in ("Succeeded", "Failed")]
    return sum(pod_requests(p).get("memory", 0) for p in live)


def _revert(memory: str) -> dict[str, Any]:
    return {"status": {"capacity": {"memory": memory}, "allocatable": {"memory": memory}}}


def run(*, seed: int = 1, revert_to: str = AFTER) -> LabResult:
    """Four pods running on a 2560 MiB node whose memory is then set to `revert_to`; a fifth pod
    asks for room; then the node's kubelet restarts. With `revert_to` 2560Mi nothing shrinks, the
    fifth pod is bound and nobody is rejected, which makes the claim false."""
    node = NodeTemplate(capacity={"cpu": "4", "memory": BEFORE, "pods": "110"}, zones=()).make(NODE_NAME, 0)
    lab = lab_cluster(seed=seed, nodes=[node])
    kubelets = FakeKubelets(lab.cluster, lab.clock, tracer=lab.tracer)
    seen: dict[str, Any] = {}

    async def body() -> None:
        await lab.clock.sleep(0.5)
        for name in RUNNING:
            await lab.cluster.create(make_pod(name, {"cpu": "250m", "memory": POD_MEMORY}))
            await lab.clock.sleep(1.0)  # creation timestamps a second apart: the kubelet's order
        await lab.clock.sleep(3.0)
        seen["revertedAt"] = round(lab.clock.now() - lab.start, 3)
        await lab.cluster.patch(core_v1.Node, NODE_NAME, _revert(revert_to), subresource="status")
        await lab.clock.sleep(2.0)
        await lab.cluster.create(make_pod(LATE, {"cpu": "250m", "memory": POD_MEMORY}))
        await lab.clock.sleep(3.0)
        seen.update(phases=_phases(lab), requested=_requested(lab), late=lab.failed_scheduling().get(LATE, ""))
        seen["checkedAt"] = round(lab.clock.now() - lab.start, 3)
        seen["rejected"] = await kubelets.restart(NODE_NAME)
        await lab.clock.sleep(3.0)

    lab.run(body, actors=[kubelets])
    after = _phases(lab)
    allocatable = int_value(revert_to)
    fits = allocatable // int_value(POD_MEMORY)
    late_node = lab.pod(LATE).spec.nodeName
    told = [
        Step(0.0, f"{NODE_NAME}: memory {BEFORE}; four {POD_MEMORY} pods running", upstream=(cite("fitsRequest"),)),
        Step(
            seen["revertedAt"],
            f"{NODE_NAME}'s memory set to {revert_to} (status.capacity and status.allocatable)",
            upstream=(cite("fitsRequest"),),
        ),
        *lab.told(LATE, kinds=("cycle.start", "cycle.failed", "bind.done")),
        Step(
            seen["checkedAt"],
            f"before the kubelet restarts: pods {seen['phases']}; the node's pods request "
            f"{format_bytes(seen['requested'])} of {format_bytes(allocatable)} — the scheduler evicts nothing",
            upstream=(cite("fitsRequest"),),
        ),
        *steps(lab.tracer.records, since=lab.start, kinds=("kubelet.restarted", "kubelet.rejected")),
        Step(
            round(lab.clock.now() - lab.start, 3),
            f"after the restart: pods {after}",
            site_of(FakeKubelets.restart),
            kind="kubelet.restarted",
        ),
    ]
    check = Check(
        claim=f"after the revert to {AFTER} the scheduler refuses a new pod (Insufficient memory) and evicts nothing, "
        "the running pods keep running until the kubelet restarts, and then the newest that no longer fit fail "
        "with OutOfmemory while the oldest run on",
        evidence={
            "beforeRestart": seen["phases"],
            "requestedBeforeRestart": format_bytes(seen["requested"]),
            "lateFailedScheduling": seen["late"],
            "lateNode": late_node,
            "rejectedAtRestart": seen["rejected"],
            "afterRestart": after,
        },
        passed=all(p == "Running" for p in seen["phases"].values())
        and seen["requested"] > allocatable
        and "Insufficient memory" in seen["late"]
        and late_node is None
        and seen["rejected"] == [f"default/{n}" for n in RUNNING[fits:]]
        and [n for n, p in after.items() if p == "Running"] == RUNNING[:fits]
        and all(lab.pod(n).status.reason == "OutOfmemory" for n in RUNNING[fits:]),
    )
    return LabResult(ID, TITLE, told, check)
