"""The from-scratch scheduler's burst: fake nodes, fake kubelets, a wave of pods, virtual time."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.objects import present
from kubesched.api.quantity import milli_value
from kubesched.clock import VirtualClock
from kubesched.config import default_config
from kubesched.minimal import NAME, MinimalScheduler
from kubesched.queue import PendingPod
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import plugin_registry
from kubesched.scheduler.explain import explain_pod
from kubesched.sim import FakeKubelets, NodeTemplate, make_nodes
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import Record, Sink, Tracer

DEFAULT_CPU_CHOICES = ("250m", "500m", "750m", "1")
GATE = "example.com/hold"  # the scheduling gate of `extra_gated` pods


@dataclass(frozen=True)
class Placement:
    pod: str
    cpu: str
    node: str | None
    phase: str
    reason: str | None = None
    message: str | None = None
    free_cpu_seen: int | None = None  # milli-CPU the scheduler believed free when it picked
    free_memory_seen: int | None = None  # and bytes of memory


@dataclass
class BurstResult:
    placements: list[Placement]
    nodes: dict[str, int]  # node -> allocatable milli-CPU
    trace: list[Record] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # pod -> last FailedScheduling message
    queue: list[PendingPod] | None = None  # the kubesched scheduler's queue at the horizon
    pending: dict[str, int] | None = None  # and its pending counts
    explained: dict[str, dict[str, object]] = field(default_factory=dict)  # pod -> its attempts explained

    @property
    def rejected(self) -> list[Placement]:
        return [p for p in self.placements if p.phase == "Failed"]

    @property
    def bound(self) -> list[Placement]:
        return [p for p in self.placements if p.node]

    def to_json(self) -> dict[str, object]:
        return {
            "nodes": self.nodes,
            "placements": [p.__dict__ for p in self.placements],
            "rejected": len(self.rejected),
            "bound": len(self.bound),
        }


def make_pod(
    name: str, *, cpu: str, memory: str = "128Mi", scheduler: str = NAME, gates: Sequence[str] = ()
) -> core_v1.Pod:
    return core_v1.Pod(
        metadata=meta_v1.ObjectMeta(name=name, namespace="default", labels={"app": "burst"}),
        spec=m.PodSpec(
            schedulerName=scheduler,
            schedulingGates=[m.PodSchedulingGate(name=g) for g in gates] or None,
            containers=[
                m.Container(
                    name="app",
                    image="registry.k8s.io/pause:3.10",
                    resources=m.ResourceRequirements(requests={"cpu": cpu, "memory": memory}),
                )
            ],
        ),
    )


MINIMAL = "minimal"
KUBESCHED = "kubesched"


def run_minimal(**kwargs: Any) -> BurstResult:  # Any: run_burst's keyword arguments, passed on
    """The burst with the from-scratch scheduler (see `run_burst`)."""
    return run_burst(scheduler=MINIMAL, **kwargs)


def run_burst(
    *,
    scheduler: str = MINIMAL,
    nodes: int = 3,
    pods: int = 12,
    seed: int = 0,
    template: NodeTemplate | None = None,
    interval: float = 0.0,
    cpu_choices: Sequence[str] = DEFAULT_CPU_CHOICES,
    memory: str = "128Mi",
    watch_latency: float = 0.005,
    horizon: float = 30.0,
    sinks: Sequence[Sink] = (),
    extra_pods: Sequence[tuple[str, str]] = (),
    extra_gated: Sequence[tuple[str, str]] = (),
    explain: Sequence[str] = (),
) -> BurstResult:
    """Start a scheduler (`minimal`: the from-scratch one; `kubesched`: the framework scheduler
    with the default profile) and the kubelets on `nodes` fake nodes, create `pods` pods (all at
    once, or one every `interval` seconds; each asking for `memory`), then `extra_pods` (name,
    cpu) and `extra_gated` (name, cpu; with the scheduling gate `GATE`), run `horizon` seconds of
    virtual time and report where each pod went, what the kubelet made of it and, for kubesched,
    what is left in its queue and the attempts of the pods in `explain` (namespace/name), explained."""
    rng = random.Random(seed)
    clock = VirtualClock()
    store = _with_nodes(clock, nodes, template, seed=seed, watch_latency=watch_latency, sinks=sinks)
    tracer = store.tracer
    cluster = MemoryCluster(store)
    runner, scheduler_name = _scheduler(scheduler, cluster, clock, tracer, seed)
    kubelets = FakeKubelets(cluster, clock, tracer=tracer)
    specs = [(f"pod-{i:03d}", rng.choice(list(cpu_choices))) for i in range(pods)] + [*extra_pods, *extra_gated]
    gated = {name for name, _ in extra_gated}
    queue: list[PendingPod] | None = None
    pending: dict[str, int] | None = None
    explained: dict[str, dict[str, object]] = {}

    async def main() -> None:
        nonlocal queue, pending
        await clock.sleep(1.0)  # let both catch up with the nodes
        for name, cpu in specs:
            gates = [GATE] if name in gated else []
            await cluster.create(make_pod(name, cpu=cpu, memory=memory, scheduler=scheduler_name, gates=gates))
            if interval:
                await clock.sleep(interval)
        await clock.sleep(horizon)
        if isinstance(runner, Scheduler):
            queue, pending = runner.queue.snapshot(), runner.queue.pending()
            for key in explain:
                explained[key] = explain_pod(runner, key)

    clock.run_alongside(main(), [runner.run, kubelets.run])
    return BurstResult(
        placements=_placements(store, tracer, specs),
        nodes={n.metadata.name: milli_value(n.status.allocatable["cpu"]) for n in store.list(core_v1.Node).items},
        trace=tracer.records,
        failures=_failures(store),
        queue=queue,
        pending=pending,
        explained=explained,
    )


def _with_nodes(
    clock: VirtualClock,
    nodes: int,
    template: NodeTemplate | None,
    *,
    seed: int,
    watch_latency: float,
    sinks: Sequence[Sink],
) -> MemoryStore:
    """A store of `nodes` fake nodes, its trace kept and sent to `sinks`."""
    tracer = Tracer(clock.now, keep=True)
    for sink in sinks:
        tracer.add_sink(sink)
    store = MemoryStore(clock=clock, tracer=tracer, seed=seed, watch_latency=watch_latency)
    for node in make_nodes(nodes, template):
        store.create(node)
    return store


def _scheduler(
    which: str, cluster: MemoryCluster, clock: VirtualClock, tracer: Tracer, seed: int
) -> tuple[MinimalScheduler | Scheduler, str]:
    """The scheduler the burst runs and the schedulerName its pods ask for."""
    if which == MINIMAL:
        return MinimalScheduler(cluster, clock, tracer=tracer), NAME
    registry = plugin_registry()
    config = default_config(registry)
    return Scheduler(cluster, clock, config, registry, tracer=tracer, seed=seed, identity="demo"), "default-scheduler"


def _placements(store: MemoryStore, tracer: Tracer, specs: Sequence[tuple[str, str]]) -> list[Placement]:
    """Where each pod went, what its kubelet made of it, and what the from-scratch scheduler saw free."""
    seen = {r.pod: r.details for r in tracer.records if r.kind == "minimal.picked"}
    placements = []
    for name, cpu in specs:
        pod = store.get(core_v1.Pod, name, namespace="default")
        status = present(pod.status, "the pod's status")
        placements.append(
            Placement(
                pod=name,
                cpu=cpu,
                node=present(pod.spec, "the pod's spec").nodeName,
                phase=present(status.phase, "the pod's phase"),
                reason=status.reason,
                message=status.message,
                free_cpu_seen=seen.get(f"default/{name}", {}).get("free_cpu_seen"),
                free_memory_seen=seen.get(f"default/{name}", {}).get("free_memory_seen"),
            )
        )
    return placements


def _failures(store: MemoryStore) -> dict[str, str]:
    """Each pod's last FailedScheduling message."""
    return {
        e.involvedObject.name: e.message
        for e in store.list(core_v1.Event).items
        if e.reason == "FailedScheduling" and e.involvedObject.name
    }
