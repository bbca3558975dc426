"""5.3.4 — Insufficient cpu: the line that formats it. NodeResourcesFit's fitsRequest names the
resource a node lacks (`Insufficient <resource>`); FitError.Error counts the reasons over the nodes
into the FailedScheduling message. Whether preemption can help depends on the status code the same
check gives: Unschedulable while other pods hold the room, UnschedulableAndUnresolvable when the
request is more than the node's whole allocatable."""

from __future__ import annotations

import inspect

from kubesched.lab.harness import NODE, lab_cluster
from kubesched.lab.result import Check, LabResult
from kubesched.plugins import noderesources_fit
from kubesched.sim import make_nodes
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.3.4", "Insufficient cpu — the line that formats it"
NODES = 3
TAIL = "no new claims to deallocate, preemption: 0/3 nodes are available: 3"
# v1.36.2's messages: room held by pods of the same priority (preemption finds no victims), and a
# request larger than any node (preemption is not tried on those nodes).
REFUSED = f"0/{NODES} nodes are available: {NODES} Insufficient cpu."
EXPECTED = {
    "crowded": f"{REFUSED} {TAIL} No preemption victims found for incoming pod.",
    "too-big": f"{REFUSED} {TAIL} Preemption is not helpful for scheduling.",
}


def formatting_line() -> str:
    """kubesched's `module:line` of the expression that writes `Insufficient <resource>`."""
    lines, first = inspect.getsourcelines(noderesources_fit.fits_request)
    offset = next(i for i, line in enumerate(lines) if 'f"Insufficient {name}"' in line)
    return f"{noderesources_fit.__name__}:{first + offset}"


def run(*, seed: int = 1, resource: str = "cpu") -> LabResult:
    """Three 4-CPU, 16 GiB nodes, each running a pod of 3 CPUs and 12 GiB. `crowded` asks for 2 of
    `resource`'s units beyond what is left; `too-big` for more than a node has. With `resource`
    memory the messages say `Insufficient memory`, which makes the claim about cpu false."""
    nodes = make_nodes(NODES, NODE)
    running = [make_pod(f"running-{i}", {"cpu": "3", "memory": "12Gi"}, nodeName=f"node-{i}") for i in range(NODES)]
    asks = {"cpu": ({"cpu": "2"}, {"cpu": "8"}), "memory": ({"memory": "8Gi"}, {"memory": "32Gi"})}[resource]
    lab = lab_cluster(seed=seed, nodes=nodes, pods=running)

    async def body() -> None:
        await lab.cluster.create(make_pod("crowded", asks[0]))
        await lab.cluster.create(make_pod("too-big", asks[1]))
        await lab.clock.sleep(5.0)

    lab.run(body)
    seen = lab.failed_scheduling()
    line = formatting_line()
    steps = [
        Step(
            0.0,
            'NodeResourcesFit writes the reason from the resource\'s name: "Insufficient " + name',
            line,
            (cite("fitsRequest"),),
        ),
    ]
    for name in ("crowded", "too-big"):
        failed = lab.records("cycle.failed", pod=f"default/{name}")
        at = round(failed[0].time - lab.start, 3) if failed else 0.0
        steps.append(
            Step(
                at,
                f"{name}: {seen.get(name, 'no FailedScheduling event')}",
                failed[0].site if failed else "",
                (cite("FitError.Error"), cite("FailedScheduling event")),
                f"default/{name}",
            )
        )
    check = Check(
        claim="every node's refusal reads `Insufficient cpu`; preemption finds no victims where pods hold the room "
        "and is not tried where the request exceeds the node",
        evidence={"messages": seen, "expected": EXPECTED, "formattedAt": line},
        passed=seen == EXPECTED,
    )
    return LabResult(ID, TITLE, steps, check)
