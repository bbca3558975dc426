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

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass

from lightkube.resources import core_v1

from kubesched.api.quantity import format_bytes, int_value, milli_value
from kubesched.api.resources import pod_requests
from kubesched.client import KubeCluster
from kubesched.clock import RealClock
from kubesched.cluster import ApiError
from kubesched.console import options
from kubesched.lab.harness import NODE
from kubesched.lab.live import connect
from kubesched.lab.result import Check, LabResult
from kubesched.minimal import NAME
from kubesched.minimal.scheduler import MinimalScheduler
from kubesched.sim import NodeTemplate
from kubesched.trace import Record, Tracer, cite
from kubesched.trace.narrate import Step
from kubesched.workloads.burst import Placement, run_minimal
from kubesched.workloads.runner import make_pod

SETTLED_WITHIN = 60.0  # seconds the kubelet has to run or refuse each pod of a live burst
SMALL_CPU, SMALL_MEMORY = 10, 16 * 2**20  # what each pod asks of the resource it does not overrun


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


def _told(
    burst: Burst,
    node: str,
    fits: int,
    chosen: list[Placement],
    picked: dict[str, Record],
    setting: str,
    more: dict[str, object] | None = None,
) -> LabResult:
    """The story and the check, from where the pods went and what the scheduler saw when it chose."""
    reason = "OutOfcpu" if burst.resource == "cpu" else "OutOfmemory"
    start = min((r.time for r in picked.values()), default=0.0)
    steps = [Step(0.0, setting, upstream=(cite("assume"),))]
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
        evidence={"node": node, "fits": fits, "chosen": len(chosen), f"rejected{reason}": rejected, **(more or {})},
        passed=len(chosen) > fits and len(rejected) == len(chosen) - fits,
    )
    return LabResult(burst.id, burst.title, steps, check)


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
    chosen = [p for p in result.placements if p.node == node]
    picked = {r.pod or "": r for r in result.trace if r.kind == "minimal.picked"}
    setting = (
        f"{burst.pods} pods asking {burst.cpu} CPU and {burst.memory} each, created at once for the from-scratch "
        f"scheduler; {node} has {burst.node.capacity[burst.resource]} {burst.resource}"
        + (f" (no burst: one every {interval:g}s)" if interval else "")
    )
    return _told(burst, node, burst.fits(), chosen, picked, setting)


@dataclass(frozen=True)
class Sized:
    """The burst scaled to the node of a live cluster the from-scratch scheduler will choose."""

    node: str
    cpu: int  # milli-CPU each pod asks
    memory: int  # bytes each pod asks
    fits: int  # how many of them the node has room for


def _size(burst: Burst, probe: MinimalScheduler) -> Sized:
    """Each pod a `burst.fits()`-th of what the chosen node (the most free CPU) has left of the
    overrun resource, and little of the other."""
    node = probe.pick(0, 0)
    if node is None:
        raise options.UsageError(f"lab {burst.id}: the cluster has no node with a free pod slot")
    view, share = probe.nodes[node], burst.fits()
    if burst.resource == "cpu":
        cpu, memory = view.free_cpu() // share, min(SMALL_MEMORY, view.free_memory() // burst.pods)
        fits = view.free_cpu() // cpu if cpu else 0
    else:
        cpu, memory = min(SMALL_CPU, view.free_cpu() // burst.pods), view.free_memory() // share
        fits = view.free_memory() // memory if memory else 0
    if min(cpu, memory) <= 0 or probe.pick(cpu, memory) != node:
        raise options.UsageError(f"lab {burst.id}: node {node} has too little left to overrun on purpose")
    return Sized(node, cpu, memory, fits)


async def _perform_live(
    cluster: KubeCluster, burst: Burst, *, interval: float, settled_within: float
) -> tuple[Sized, list[Placement], dict[str, Record]]:
    clock = RealClock()
    name = f"{NAME}-{uuid.uuid4().hex[:6]}"  # this run's own scheduler: no other pod names it
    probe = MinimalScheduler(cluster, clock, name=f"{name}-probe")
    await probe.sync()
    sized = _size(burst, probe)
    tracer = Tracer(clock.now, keep=True)
    scheduler = MinimalScheduler(cluster, clock, name=name, tracer=tracer)
    pods = [f"{name}-{i}" for i in range(burst.pods)]
    requests = {"cpu": f"{sized.cpu}m", "memory": str(sized.memory)}
    task = None
    try:
        if interval:  # the scheduler watches while they come one by one
            task = asyncio.ensure_future(scheduler.run())
        for pod in pods:  # otherwise they wait for it, all of them, when it starts
            await cluster.create(make_pod(pod, requests, schedulerName=name))
            await asyncio.sleep(interval)
        task = task or asyncio.ensure_future(scheduler.run())
        placed = await _settled(cluster, pods, within=settled_within)
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        for pod in pods:
            with contextlib.suppress(ApiError):
                await cluster.delete(core_v1.Pod, pod, namespace="default", grace_period_seconds=0)
    picked = {r.pod or "": r for r in tracer.records if r.kind == "minimal.picked"}
    return (
        sized,
        [_placement(pod, picked.get(f"default/{name}")) for name, pod in zip(pods, placed, strict=True)],
        picked,
    )


async def _settled(cluster: KubeCluster, pods: list[str], *, within: float) -> list[core_v1.Pod]:
    """The pods once each is Running or Failed (or `within` seconds have passed)."""
    deadline = time.monotonic() + within
    while True:
        seen = [await cluster.get(core_v1.Pod, pod, namespace="default") for pod in pods]
        phases = [(p.status.phase if p.status else None) for p in seen]
        if all(phase in ("Running", "Failed") for phase in phases) or time.monotonic() > deadline:
            return seen
        await asyncio.sleep(0.2)


def _placement(pod: core_v1.Pod, picked: Record | None) -> Placement:
    assert pod.metadata is not None and pod.spec is not None
    status = pod.status
    return Placement(
        pod.metadata.name or "",
        f"{pod_requests(pod).get('cpu', 0)}m",
        pod.spec.nodeName,
        (status.phase if status else None) or "Pending",
        status.reason if status else None,
        status.message if status else None,
        picked.details["free_cpu_seen"] if picked else None,
        picked.details["free_memory_seen"] if picked else None,
    )


def _run_live(burst: Burst, *, kubeconfig: str, interval: float, settled_within: float) -> LabResult:
    async def main() -> tuple[Sized, list[Placement], dict[str, Record]]:
        cluster = connect(kubeconfig)
        try:
            return await _perform_live(cluster, burst, interval=interval, settled_within=settled_within)
        finally:
            await cluster.close()

    sized, placed, picked = asyncio.run(main())
    chosen = [p for p in placed if p.node == sized.node]
    each = {"cpu": f"{sized.cpu}m", "memory": format_bytes(sized.memory)}
    elsewhere = sorted({p.node or "pending" for p in placed if p.node != sized.node})
    setting = (
        f"{burst.pods} pods asking {each['cpu']} CPU and {each['memory']} each, "
        + (f"created one every {interval:g}s while" if interval else "waiting when")
        + f" the from-scratch scheduler starts; {sized.node}, with the most free CPU, has room for {sized.fits}"
    )
    return _told(burst, sized.node, sized.fits, chosen, picked, setting, {"each": each, "elsewhere": elsewhere})


def run(
    *, seed: int = 1, interval: float = 0.0, kubeconfig: str | None = None, settled_within: float = SETTLED_WITHIN
) -> LabResult:
    """5.2.5: the ten pods created at once (or one every `interval` seconds, which lets the watch
    catch up and makes the claim false). With `kubeconfig`, on that cluster: the pods, sized to the
    node the scheduler will choose, wait for it when it starts, and the node's own kubelet decides."""
    if kubeconfig:
        return _run_live(CPU_BURST, kubeconfig=kubeconfig, interval=interval, settled_within=settled_within)
    return _run(CPU_BURST, seed=seed, interval=interval)


def run_memory(
    *, seed: int = 1, interval: float = 0.0, kubeconfig: str | None = None, settled_within: float = SETTLED_WITHIN
) -> LabResult:
    """5.2.1: the eight pods created at once (`interval` and `kubeconfig` as for 5.2.5)."""
    if kubeconfig:
        return _run_live(MEMORY_BURST, kubeconfig=kubeconfig, interval=interval, settled_within=settled_within)
    return _run(MEMORY_BURST, seed=seed, interval=interval)
