"""5.5.3 — why victim deletion left the scheduling thread (KEP-4832). The same pods scheduled twice
over an API server that takes a while to answer a pod's status patch and deletion: once with
SchedulerAsyncPreemption on (v1.36.2's default: the victims are removed in the background) and
once off (upstream's synchronous mode, kept for this lab: the scheduling thread takes no other
pod until every victim is patched and deleted). Among four preemptors come twenty-four pods that
need no preemption; how fast those are bound is the throughput the synchronous mode cost."""

from __future__ import annotations

from typing import TypeVar

from lightkube.models import meta_v1
from lightkube.resources import core_v1, scheduling_v1

from kubesched.api.objects import Served
from kubesched.clock import VirtualClock
from kubesched.framework.features import Features
from kubesched.framework.preemption import Evaluator
from kubesched.lab.harness import LabCluster, lab_cluster
from kubesched.lab.result import Check, LabResult, site_of
from kubesched.sim import NodeTemplate
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.trace.narrate import steps as steps_of
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.5.3", "Why victim deletion left the scheduling thread"
LATENCY = 0.25  # seconds the API server takes to answer a pod's status patch, and its deletion
ATTEMPT_SECONDS = 0.01  # what one scheduling attempt costs the scheduling thread
PREEMPTORS, OTHERS_EACH = 4, 6  # each preemptor followed by six pods that need no preemption
CLASSES = {"low": 10, "high": 1000}
R = TypeVar("R", bound=Served)


class SlowPodCalls(MemoryCluster):
    """The memory cluster over a slow link: a pod's status patch and its deletion each take
    `latency` seconds to be answered."""

    def __init__(self, store: MemoryStore, clock: VirtualClock, *, latency: float) -> None:
        super().__init__(store)
        self._clock, self._latency = clock, latency

    async def patch(
        self,
        kind: type[R],
        name: str,
        patch: object,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        patch_type: str = "merge",
    ) -> R:
        if kind is core_v1.Pod and subresource == "status":
            await self._clock.sleep(self._latency)
        return await super().patch(
            kind, name, patch, namespace=namespace, subresource=subresource, patch_type=patch_type
        )

    async def delete(
        self,
        kind: type[R],
        name: str,
        *,
        namespace: str | None = None,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
    ) -> R | None:
        if kind is core_v1.Pod:
            await self._clock.sleep(self._latency)
        return await super().delete(
            kind,
            name,
            namespace=namespace,
            grace_period_seconds=grace_period_seconds,
            propagation_policy=propagation_policy,
        )


def _cluster(*, seed: int, asynchronous: bool, latency: float) -> tuple[LabCluster, list[str]]:
    full = NodeTemplate(capacity={"cpu": "4", "memory": "16Gi", "pods": "110"}, zones=())
    small = NodeTemplate(capacity={"cpu": "2", "memory": "8Gi", "pods": "110"}, zones=())
    nodes = [full.make(f"full-{i}", i) for i in range(PREEMPTORS)]
    nodes += [small.make(f"small-{i}", PREEMPTORS + i) for i in range(4)]
    victims = [
        make_pod(f"low-{i}-{j}", {"cpu": "2"}, priorityClassName="low", nodeName=f"full-{i}")
        for i in range(PREEMPTORS)
        for j in range(2)
    ]
    lab = lab_cluster(
        seed=seed,
        nodes=nodes,
        pods=victims,
        objects=[scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name=n), value=v) for n, v in CLASSES.items()],
        features=Features(async_preemption=asynchronous),
        attempt_seconds=ATTEMPT_SECONDS,
        link=lambda store, clock: SlowPodCalls(store, clock, latency=latency),
    )
    others: list[str] = []

    async def body() -> None:
        await lab.clock.sleep(0.5)
        for i in range(PREEMPTORS):
            await lab.cluster.create(make_pod(f"urgent-{i}", {"cpu": "4"}, priorityClassName="high"))
            for j in range(OTHERS_EACH):
                name = f"web-{i}-{j}"
                others.append(name)
                await lab.cluster.create(make_pod(name, {"cpu": "250m"}, priorityClassName="high"))
        await lab.clock.sleep(15.0)

    lab.run(body, kubelets=True)
    return lab, others


def _throughput(lab: LabCluster, others: list[str]) -> tuple[float, float]:
    """The pods bound per second from their creation to the last one's binding, and that time."""
    keys = {f"default/{n}" for n in others}
    bound = [r.time for r in lab.records("bind.done") if r.pod in keys]
    if len(bound) < len(others):
        return 0.0, float("inf")
    took = max(bound) - (lab.start + 0.5)
    return len(others) / took, took


def run(*, seed: int = 1, latency: float = LATENCY) -> LabResult:
    """Both modes, `latency` seconds per pod call; with `latency` 0 the API answers at once, the
    synchronous mode costs nothing, and the claim is false."""
    measured = {}
    for mode, asynchronous in (("async", True), ("sync", False)):
        lab, others = _cluster(seed=seed, asynchronous=asynchronous, latency=latency)
        rate, took = _throughput(lab, others)
        preempted = {r.pod for r in lab.records("preemption.victim")}
        measured[mode] = (lab, rate, took, len(preempted))
    (_, fast_rate, fast_took, fast_victims), (slow, slow_rate, slow_took, slow_victims) = measured.values()
    factor = fast_rate / slow_rate if slow_rate else float("inf")
    steps = [
        Step(
            0.0,
            f"{mode}: {len(others)} pods needing no preemption bound in {took:.2f} s ({rate:.1f} pods/s); "
            f"{victims} victims preempted",
            site_of(Evaluator.prepare_candidate),
            (cite("PreemptPod"),),
        )
        for mode, (_, rate, took, victims) in measured.items()
    ]
    victims_of_first = {
        str(r.pod) for r in slow.records("preemption.victim") if r.details.get("preemptor") == "default/urgent-0"
    }
    steps += steps_of(
        slow.tracer.records,
        since=slow.start,
        kinds=("preemption.chosen", "preemption.victim", "bind.done"),
        pods={"default/urgent-0", "default/web-0-0", *victims_of_first},
    )
    check = Check(
        claim="with victims removed off the scheduling thread the pods that need no preemption are bound faster "
        "than when the thread waits for each preemption's API calls, by a measured factor",
        evidence={
            "latencySeconds": latency,
            "asyncSeconds": round(fast_took, 3),
            "syncSeconds": round(slow_took, 3),
            "factor": round(factor, 2),
            "victims": {"async": fast_victims, "sync": slow_victims},
        },
        passed=factor >= 1.5 and fast_victims == slow_victims == 2 * PREEMPTORS,
    )
    return LabResult(ID, TITLE, steps, check)
