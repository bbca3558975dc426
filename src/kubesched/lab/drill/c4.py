"""5.C4: two schedulers, one pod; then one killed between assume and bind, and restarted."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from lightkube.resources import core_v1
from rich.console import Console
from rich.markup import escape

from kubesched.api.objects import present
from kubesched.clock import VirtualClock
from kubesched.config import default_config
from kubesched.lab.drill.story import print_citations, print_explained
from kubesched.minimal import MinimalScheduler
from kubesched.plugin import CycleState, Handle, PodInfo, PreBindPlugin, Status
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import plugin_registry
from kubesched.scheduler.explain import explain_pod
from kubesched.sim import FakeKubelets, NodeTemplate
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import Record, Tracer, cite
from kubesched.workloads.runner import make_pod

CONTESTED = "contested"
LINKS = (0.01, 0.004)  # the most a Binding takes to reach the API server: from kubesched, from minimal


class SlowPreBind(PreBindPlugin):
    """A PreBind plugin that takes `seconds` (a slow API server): the window between assume and
    bind in which the crash variant kills the scheduler."""

    name: ClassVar[str] = "SlowPreBind"
    seconds = 0.5

    def __init__(self, args: object, handle: Handle) -> None:
        self.clock = handle.clock

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        await self.clock.sleep(self.seconds)
        return None


class SlowLink(MemoryCluster):
    """The memory cluster seen over a network: each Binding takes a seeded random time to reach the
    API server, so which of two schedulers binds a pod first varies from pod to pod."""

    def __init__(self, store: MemoryStore, clock: VirtualClock, rng: random.Random, *, most: float) -> None:
        super().__init__(store)
        self._clock, self._rng, self._most = clock, rng, most

    async def bind(self, binding: object, *, namespace: str | None = None) -> None:
        await self._clock.sleep(self._rng.uniform(0.0, self._most))
        await super().bind(binding, namespace=namespace)


@dataclass
class RaceOutcome:
    bound: dict[str, str | None]  # pod -> node
    winners: dict[str, str]  # pod -> "kubesched" or "minimal"
    conflicts: list[str]  # the lines telling who lost which race, and what the loser did
    overcommitted: list[str]  # nodes whose running (not rejected) pods ask for more CPU than they have
    rejected_by_kubelet: int
    cache_agrees: bool  # kubesched's cache counts on each node exactly the pods the API server has there
    assumed_at_crash: list[str] = field(default_factory=list)  # the crash variant: assumed, not bound
    explained: Mapping[str, object] = field(default_factory=dict)  # `kubesched explain` of a pod kubesched lost

    def to_json(self) -> dict[str, object]:
        return self.__dict__


CITATIONS = {
    "the pod assumed on its node in the cache, before any API call": cite("assume"),
    "the binding cycle started asynchronously (the goroutine)": cite("go runBindingCycle"),
    "the binding cycle: WaitOnPermit, PreBind, Bind": cite("bindingCycle"),
    "Bind's API call": cite("bind"),
    "a failed binding: Unreserve, forget the assumed pod, requeue": cite("handleBindingCycleError"),
}


def _outcome(store: MemoryStore, records: list[Record], pods: list[str], scheduler: Scheduler) -> RaceOutcome:
    bound = {}
    for name in pods:
        stored = store.get(core_v1.Pod, name, namespace="default")
        bound[name] = present(stored.spec, "the pod's spec").nodeName
    winners: dict[str, str] = {}
    conflicts = []
    for r in records:
        name = (r.pod or "").split("/")[-1]
        if r.kind == "bind.done":
            winners[name] = "kubesched"
        elif r.kind == "bind.failed":
            conflicts.append(f"kubesched lost {name} on {r.node}: {r.details['message']}; its assumed pod is forgotten")
        elif r.kind == "minimal.bind_failed":
            conflicts.append(f"minimal lost {name} on {r.node}: {r.details['error']}")
    for name, node in bound.items():
        if node and name not in winners:
            winners[name] = "minimal"
    used: dict[str, int] = {}
    placed: set[tuple[str, str]] = set()
    rejected = 0
    for pod in store.list(core_v1.Pod).items:
        if not pod.spec.nodeName:
            continue
        if pod.status is not None and pod.status.phase == "Failed":
            rejected += 1
            continue
        used[pod.spec.nodeName] = used.get(pod.spec.nodeName, 0) + 1000
        placed.add((pod.spec.nodeName, pod.metadata.uid))
    counted = {(info.node_name, info.uid) for info in scheduler.cache.pods()}
    over = [n for n, cpu in used.items() if cpu > 4000]
    crashed = [r.details["assumed"] for r in records if r.kind == "drill.crash"]
    lost = next((r.pod for r in records if r.kind == "bind.failed" and r.pod), None)
    return RaceOutcome(
        bound,
        winners,
        conflicts,
        over,
        rejected,
        counted == placed,
        crashed[0] if crashed else [],
        explain_pod(scheduler, lost) if lost else {},
    )


def run_c4(*, crash: bool = False, seed: int = 4, links: tuple[float, float] = LINKS) -> RaceOutcome:
    """Two fake 4-CPU nodes and eight 1-CPU pods. The race: kubesched's profile and the minimal
    scheduler both answer to `schedulerName: contested`, so both try to bind every pod, each over a
    link of its own (a Binding takes up to `links` seconds from kubesched and from the minimal
    scheduler, seeded by `seed`: with the default, each wins some races); the API server accepts
    the first Binding of a pod and refuses the second (409). The crash variant:
    kubesched alone, killed while its first pods wait in a slow PreBind (assumed, not bound); a new
    kubesched process, with an empty cache, starts from what the API server says."""
    clock = VirtualClock()
    tracer = Tracer(clock.now, keep=True)
    store = MemoryStore(clock=clock, seed=4, tracer=tracer)
    cluster = MemoryCluster(store)
    template = NodeTemplate(capacity={"cpu": "4", "memory": "16Gi", "pods": "110"}, zones=())
    for i in range(2):
        store.create(template.make(f"node-{i}", i))
    registry = plugin_registry()
    registry.register(SlowPreBind.name, SlowPreBind)
    profile: dict[str, object] = {"schedulerName": CONTESTED}
    if crash:
        profile["plugins"] = {"preBind": {"enabled": [{"name": SlowPreBind.name}]}}
    settings = default_config(registry, profiles=[profile])
    names = [f"pod-{i}" for i in range(8)]
    rng = random.Random(seed)
    link = cluster if crash else SlowLink(store, clock, rng, most=links[0])
    first = Scheduler(link, clock, settings, registry, tracer=tracer, seed=4, identity="first")
    rivals: list[MinimalScheduler] = (
        []
        if crash
        else [MinimalScheduler(SlowLink(store, clock, rng, most=links[1]), clock, name=CONTESTED, tracer=tracer)]
    )
    last = [first]  # the kubesched process alive at the end

    async def main() -> None:
        running = asyncio.ensure_future(first.run())
        await clock.sleep(0.5)
        for name in names:
            await cluster.create(make_pod(name, {"cpu": "1"}, schedulerName=CONTESTED))
        if crash:
            await clock.sleep(0.2)  # the first pods are assumed and waiting in PreBind
            running.cancel()  # kill: the assumed pods die with the process's cache
            tracer.emit("drill.crash", assumed=[i.key for i in first.cache.pods() if first.cache.is_assumed(i.uid)])
            second = Scheduler(cluster, clock, settings, registry, tracer=tracer, seed=5, identity="second")
            last[0] = second
            running = asyncio.ensure_future(second.run())
        await clock.sleep(20)
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)

    clock.run_alongside(main(), [FakeKubelets(cluster, clock, tracer=tracer).run, *(r.run for r in rivals)])
    return _outcome(store, tracer.records, names, last[0])


def print_c4(console: Console) -> None:
    console.rule("[bold]5.C4 — two schedulers, one pod")
    console.print(
        "kubesched and the from-scratch scheduler both claim `schedulerName: contested`; eight 1-CPU pods, "
        "two 4-CPU nodes. Each pod can be bound once: the API server refuses the second Binding (409).\n"
    )
    race = run_c4()
    for line in race.conflicts:
        console.print(f"  {escape(line)}")
    won = {w: sum(1 for v in race.winners.values() if v == w) for w in ("kubesched", "minimal")}
    console.print(
        f"\nkubesched bound {won['kubesched']}, minimal {won['minimal']}. kubesched's cache agrees with the API "
        f"server node by node: {race.cache_agrees} (nothing double-counted). The kubelets rejected "
        f"{race.rejected_by_kubelet} pods: the from-scratch scheduler, which does not assume, sent them to a node "
        "already full.\n"
    )
    if race.explained:
        print_explained(console, race.explained, last=1)
    print_citations(console, CITATIONS)
    console.print()
    console.rule("[bold]Killed between assume and bind, then restarted")
    crash = run_c4(crash=True)
    console.print(
        f"Killed with {len(crash.assumed_at_crash)} pods assumed but not bound ({', '.join(crash.assumed_at_crash)}). "
        f"Every pod bound exactly once: {all(crash.bound.values())}; overcommitted nodes: "
        f"{crash.overcommitted or 'none'}. The assumed pods lived only in the dead process's cache; the new one "
        "listed the pods, found them unbound, and scheduled them: the state is in the API server, not in "
        "the scheduler (level-triggered)."
    )
