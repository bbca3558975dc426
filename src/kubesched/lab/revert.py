"""5.6.1 — the revert: a node's memory goes back from 2560 MiB to 1536 MiB under four running
512 MiB pods. The scheduler reads the smaller allocatable at once and refuses a new pod
(`Insufficient memory`), yet moves nothing: it never evicts. The kubelet does nothing either while
it runs — admission happens once per pod — until it restarts, as a reverted machine does: then it
admits its pods anew, oldest first (the kubelet's HandlePodAdditions, `pkg/kubelet/kubelet.go`),
and the newest, which no longer fits, fails with `OutOfmemory` though it was running."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TypedDict

import msgspec
from lightkube.models import core_v1 as m
from lightkube.resources import core_v1

from kubesched.api.objects import present
from kubesched.api.quantity import format_bytes, int_value
from kubesched.api.resources import pod_requests
from kubesched.client import KubeCluster
from kubesched.clock import RealClock
from kubesched.cluster import ApiError
from kubesched.console import options
from kubesched.lab.harness import LabCluster, lab_cluster
from kubesched.lab.live import connect
from kubesched.lab.result import Check, LabResult, site_of
from kubesched.sim import FakeKubelets, KubeletConfig, NodeTemplate
from kubesched.trace import cite
from kubesched.trace.narrate import Step, steps
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.6.1", "The revert: 2560MB back to 1536MB"
NODE_NAME = "forge"
BEFORE, AFTER = "2560Mi", "1536Mi"
POD_MEMORY = "512Mi"
RUNNING = [f"app-{i}" for i in range(4)]
LATE = "late"
LAB_LABEL = "kubesched.io/lab"  # on a live cluster: the lab's node, and the taint keeping others off
WAIT = 30.0  # seconds a live cluster's scheduler and the lab's kubelet have for each step


class _Seen(TypedDict, total=False):
    """What the lab saw, on whichever cluster: by the names of RUNNING, the phases before the
    kubelet's restart and after and the reasons after; what the node's pods request, the late
    pod's FailedScheduling message and node, who the restarted kubelet rejected, and when (seconds
    since the start) each thing was seen."""

    revertedAt: float
    phases: dict[str, str]
    requested: int
    late: str
    lateAt: float
    checkedAt: float
    rejected: list[str]
    after: dict[str, str]
    reasons: dict[str, str | None]
    lateNode: str | None
    finishedAt: float


def _status(lab: LabCluster, name: str) -> m.PodStatus:
    return present(lab.pod(name).status, "the pod's status")


def _phases(lab: LabCluster) -> dict[str, str]:
    return {name: (_status(lab, name).phase or "") for name in RUNNING}


def _requested(lab: LabCluster) -> int:
    """The memory the node's live pods request: what the scheduler's cache holds against it."""
    live = [lab.pod(n) for n in RUNNING if _status(lab, n).phase not in ("Succeeded", "Failed")]
    return sum(pod_requests(p).get("memory", 0) for p in live)


def _revert(memory: str) -> dict[str, object]:
    return {"status": {"capacity": {"memory": memory}, "allocatable": {"memory": memory}}}


def run(*, seed: int = 1, revert_to: str = AFTER, kubeconfig: str | None = None, wait: float = WAIT) -> LabResult:
    """Four pods running on a 2560 MiB node whose memory is then set to `revert_to`; a fifth pod
    asks for room; then the node's kubelet restarts. With `revert_to` 2560Mi nothing shrinks, the
    fifth pod is bound and nobody is rejected, which makes the claim false. With `kubeconfig`, on
    that cluster (see `live`)."""
    if kubeconfig:
        return live(kubeconfig=kubeconfig, revert_to=revert_to, wait=wait)
    node = NodeTemplate(capacity={"cpu": "4", "memory": BEFORE, "pods": "110"}, zones=()).make(NODE_NAME, 0)
    lab = lab_cluster(seed=seed, nodes=[node])
    kubelets = FakeKubelets(lab.cluster, lab.clock, tracer=lab.tracer)
    seen: _Seen = {}

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
        seen.update(
            {"phases": _phases(lab), "requested": _requested(lab), "late": lab.failed_scheduling().get(LATE, "")}
        )
        seen["checkedAt"] = round(lab.clock.now() - lab.start, 3)
        seen["rejected"] = await kubelets.restart(NODE_NAME)
        await lab.clock.sleep(3.0)

    lab.run(body, actors=[kubelets])
    seen.update(
        {
            "after": _phases(lab),
            "reasons": {n: _status(lab, n).reason for n in RUNNING},
            "lateNode": lab.node_of(LATE),
            "finishedAt": round(lab.clock.now() - lab.start, 3),
        }
    )
    return _result(
        seen,
        node=NODE_NAME,
        revert_to=revert_to,
        scheduled=lab.told(LATE, kinds=("cycle.start", "cycle.failed", "bind.done")),
        restarted=steps(lab.tracer.records, since=lab.start, kinds=("kubelet.restarted", "kubelet.rejected")),
    )


def _result(
    seen: _Seen,
    *,
    node: str,
    revert_to: str,
    prefix: str = "",
    scheduled: Sequence[Step] = (),
    restarted: Sequence[Step] = (),
) -> LabResult:
    """The story and the verdict, the same whichever cluster it happened on. `seen` holds, by the
    names of RUNNING, the phases before the restart and after and the reasons after; what the
    node's pods request, the late pod's FailedScheduling message and node, and who the restarted
    kubelet rejected (`namespace/name`, the pods' names being `prefix` + RUNNING's). `scheduled`
    and `restarted`: the steps only the form that saw them can tell."""
    allocatable = int_value(revert_to)
    fits = allocatable // int_value(POD_MEMORY)
    before, after = seen["phases"], seen["after"]
    told = [
        Step(0.0, f"{node}: memory {BEFORE}; four {POD_MEMORY} pods running", upstream=(cite("fitsRequest"),)),
        Step(
            seen["revertedAt"],
            f"{node}'s memory set to {revert_to} (status.capacity and status.allocatable)",
            upstream=(cite("fitsRequest"),),
        ),
        *scheduled,
        Step(
            seen["checkedAt"],
            f"before the kubelet restarts: pods {before}; the node's pods request "
            f"{format_bytes(seen['requested'])} of {format_bytes(allocatable)} — the scheduler evicts nothing",
            upstream=(cite("fitsRequest"),),
        ),
        *restarted,
        Step(
            seen["finishedAt"],
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
            "beforeRestart": before,
            "requestedBeforeRestart": format_bytes(seen["requested"]),
            "lateFailedScheduling": seen["late"],
            "lateNode": seen["lateNode"],
            "rejectedAtRestart": seen["rejected"],
            "afterRestart": after,
        },
        passed=all(p == "Running" for p in before.values())
        and seen["requested"] > allocatable
        and "Insufficient memory" in seen["late"]
        and seen["lateNode"] is None
        and seen["rejected"] == [f"default/{prefix}{n}" for n in RUNNING[fits:]]
        and [n for n, p in after.items() if p == "Running"] == RUNNING[:fits]
        and all(seen["reasons"][n] == "OutOfmemory" for n in RUNNING[fits:]),
    )
    return LabResult(ID, TITLE, told, check)


async def _until(what: str, wait: float, ready: Callable[[], bool | Awaitable[bool]]) -> None:
    """Poll `ready` (a function, or a coroutine function) until it answers true; UsageError naming
    `what` did not happen after `wait` seconds."""
    deadline = time.monotonic() + wait
    while True:
        answer = ready()
        if await answer if inspect.isawaitable(answer) else answer:
            return
        if time.monotonic() > deadline:
            raise options.UsageError(f"lab {ID}: {what} within {wait:g} s")
        await asyncio.sleep(0.2)


def _phase(pod: core_v1.Pod) -> str:
    return (pod.status.phase if pod.status else None) or ""


def _reason(pod: core_v1.Pod) -> str | None:
    return pod.status.reason if pod.status else None


class _Live:
    """The lab's pods and node on a live cluster, named after `tag`, and its own kubelet of the node."""

    def __init__(self, cluster: KubeCluster, tag: str) -> None:
        self.cluster = cluster
        self.tag = tag
        self.selector = {LAB_LABEL: tag}
        self.taint = {"key": LAB_LABEL, "value": tag, "effect": "NoSchedule"}
        self.kubelets = FakeKubelets(cluster, RealClock(), serve={tag}, config=KubeletConfig(start_seconds=0.2))
        self.created: list[str] = []

    def node(self) -> core_v1.Node:
        """The node, not annotated as fake: no kubelet of the cluster's serves it, only the lab's."""
        capacity = {"cpu": "4", "memory": BEFORE, "pods": "110"}
        node = NodeTemplate(capacity=capacity, labels=self.selector, taints=[self.taint]).make(self.tag, 0)
        assert node.metadata is not None
        return msgspec.structs.replace(node, metadata=msgspec.structs.replace(node.metadata, annotations=None))

    async def create_pod(self, short: str) -> None:
        toleration = [{**self.taint, "operator": "Equal"}]
        name = f"{self.tag}-{short}"
        pod = make_pod(name, {"cpu": "250m", "memory": POD_MEMORY}, nodeSelector=self.selector, tolerations=toleration)
        await self.cluster.create(pod)
        self.created.append(short)

    async def pods(self) -> dict[str, core_v1.Pod]:
        """The lab's pods created so far, by short name."""
        return {n: await self.cluster.get(core_v1.Pod, f"{self.tag}-{n}", namespace="default") for n in self.created}

    async def running(self) -> bool:
        return all(_phase(p) == "Running" for p in (await self.pods()).values())

    async def failed_scheduling(self, short: str) -> str:
        """The message of the newest FailedScheduling event about the pod ('' if none yet)."""
        name = f"{self.tag}-{short}"
        events = (await self.cluster.list(core_v1.Event, namespace="default")).items
        about = [e for e in events if e.reason == "FailedScheduling" and e.involvedObject.name == name]
        return (about[-1].message or "") if about else ""

    async def decided(self, short: str) -> bool:
        """Whether the scheduler bound the pod or told why not."""
        pod = (await self.pods())[short]
        return bool(pod.spec and pod.spec.nodeName) or bool(await self.failed_scheduling(short))

    async def clean(self) -> None:
        for short in self.created:
            with contextlib.suppress(ApiError):
                await self.cluster.delete(
                    core_v1.Pod, f"{self.tag}-{short}", namespace="default", grace_period_seconds=0
                )
        with contextlib.suppress(ApiError):
            await self.cluster.delete(core_v1.Node, self.tag)


async def _perform_live(cluster: KubeCluster, tag: str, *, revert_to: str, wait: float) -> _Seen:
    start = time.monotonic()
    lab = _Live(cluster, tag)
    kubelet = lab.kubelets
    served = asyncio.ensure_future(kubelet.run())
    try:
        await cluster.create(lab.node())
        await _until("the lab's kubelet did not see its node", wait, lambda: tag in kubelet.nodes)
        for short in RUNNING:
            await lab.create_pod(short)
            await asyncio.sleep(1.0)  # creation timestamps a second apart: the kubelet's order
        needs = "no scheduler bound the lab's pods (the cluster needs one: kubesched cluster up --scheduler)"
        await _until(needs, wait, lab.running)
        reverted_at = round(time.monotonic() - start, 3)
        await cluster.patch(core_v1.Node, tag, _revert(revert_to), subresource="status")
        reverted = int_value(revert_to)
        await _until(
            "the revert did not reach the node", wait, lambda: kubelet.nodes[tag].allocatable["memory"] == reverted
        )
        await asyncio.sleep(1.0)  # as long for the scheduler's informer
        await lab.create_pod(LATE)
        await _until(f"the scheduler neither bound nor refused {tag}-{LATE}", wait, lambda: lab.decided(LATE))
        before = await lab.pods()
        alive = [p for n, p in before.items() if n in RUNNING and _phase(p) == "Running"]
        seen: _Seen = {
            "revertedAt": reverted_at,
            "phases": {n: _phase(before[n]) for n in RUNNING},
            "requested": sum(pod_requests(p).get("memory", 0) for p in alive),
            "late": await lab.failed_scheduling(LATE),
            "lateAt": round(time.monotonic() - start, 3),
            "checkedAt": round(time.monotonic() - start, 3),
            "rejected": await kubelet.restart(tag),
        }
        await asyncio.sleep(0.5)
        after = await lab.pods()
        late = after[LATE]
        return seen | {
            "after": {n: _phase(after[n]) for n in RUNNING},
            "reasons": {n: _reason(after[n]) for n in RUNNING},
            "lateNode": late.spec.nodeName if late.spec else None,
            "finishedAt": round(time.monotonic() - start, 3),
        }
    finally:
        served.cancel()
        await asyncio.gather(served, return_exceptions=True)
        await lab.clean()


def live(*, kubeconfig: str, revert_to: str = AFTER, wait: float = WAIT) -> LabResult:
    """Against the cluster of `kubeconfig`, whose own scheduler places the pods: on a node the lab
    registers (labelled and tainted so that only its pods land there) and is the kubelet of itself,
    so that it can restart that kubelet; the node and the pods are deleted afterwards."""
    tag = f"forge-{uuid.uuid4().hex[:4]}"

    async def main() -> _Seen:
        cluster = connect(kubeconfig)
        try:
            return await _perform_live(cluster, tag, revert_to=revert_to, wait=wait)
        finally:
            await cluster.close()

    seen = asyncio.run(main())
    late = f"{tag}-{LATE}: " + (f"FailedScheduling: {seen['late']}" if seen["late"] else f"bound to {seen['lateNode']}")
    restarted = (
        f"{tag}'s kubelet restarts and admits its pods anew, oldest first; it rejects {seen['rejected'] or 'none'}"
    )
    return _result(
        seen,
        node=tag,
        revert_to=revert_to,
        prefix=f"{tag}-",
        scheduled=[Step(seen["lateAt"], late, upstream=(cite("fitsRequest"),))],
        restarted=[Step(seen["checkedAt"], restarted, site_of(FakeKubelets.restart), kind="kubelet.restarted")],
    )
