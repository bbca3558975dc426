"""5.C2: preemption with real victims, narrated from the trace."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.models import policy_v1 as pm
from lightkube.resources import core_v1, policy_v1, scheduling_v1
from rich.console import Console

from kubesched.api.objects import meta_of, present
from kubesched.clock import VirtualClock
from kubesched.cluster import NotFound
from kubesched.config import default_config
from kubesched.controllers import DisruptionController
from kubesched.lab.drill.story import (
    EventSeen,
    attempts_of,
    events_of,
    mapping_of,
    print_events,
    print_explained,
    print_steps,
)
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import plugin_registry
from kubesched.scheduler.explain import explain_pod
from kubesched.sim import FakeKubelets, KubeletConfig, NodeTemplate
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import Sink, Tracer
from kubesched.trace.narrate import Step, steps
from kubesched.workloads.runner import make_pod

NARRATED = {
    "queue.move",
    "queue.pop",
    "cycle.failed",
    "preemption.chosen",
    "nomination.set",
    "preemption.victim",
    "kubelet.killed",
    "cycle.selected",
    "bind.done",
    "kubelet.running",
}


@dataclass
class PreemptionStory:
    placements: dict[str, str | None]  # pod -> node (None: gone or pending)
    lines: list[Step]
    events: list[EventSeen]  # urgent's and the victims', as kubectl describe lists them
    explained: Mapping[str, object]  # `kubesched explain default/urgent`: its attempts

    @property
    def preemption(self) -> dict[str, object] | None:
        """The recorded preemption of the preemptor (from the attempt that preempted), as
        `kubesched explain` shows it: candidates, nominated node, victims, why."""
        attempt = next((a for a in attempts_of(self.explained) if a.get("preemption")), None)
        return mapping_of(attempt["preemption"], "the preemption") if attempt is not None else None

    def to_json(self) -> dict[str, object]:
        return {
            "placements": self.placements,
            "lines": [asdict(line) for line in self.lines],
            "events": [e.to_json() for e in self.events],
            "explain": self.explained,
        }


def run_c2(*, pdb_blocks: bool = False, spare_node: bool = False, sinks: Sequence[Sink] = ()) -> PreemptionStory:
    """Three full 4-CPU nodes, then `urgent` (priority 1000, 2 CPUs). node-0 runs two batch pods
    (priority 100), node-1 a report (priority 200), node-2 two cache pods (priority 100) under a
    PodDisruptionBudget that allows no disruption. With `pdb_blocks`, node-0 and node-1 run pods
    as important as `urgent`, so node-2 is the only place preemption can make room. With
    `spare_node` an empty fourth node is there, so nothing needs preempting. Every trace record
    also goes to `sinks` (`drill c2 --trace FILE`, a run `kubesched ui` replays)."""
    clock = VirtualClock()
    tracer = Tracer(clock.now, keep=True)
    for sink in sinks:
        tracer.add_sink(sink)
    store = MemoryStore(clock=clock, seed=2, tracer=tracer)
    cluster = MemoryCluster(store)
    template = NodeTemplate(capacity={"cpu": "4", "memory": "16Gi", "pods": "110"}, zones=())
    for i in range(4 if spare_node else 3):
        store.create(template.make(f"node-{i}", i))
    _classes_and_budget(store)
    low = "critical" if pdb_blocks else "batch"
    running = [
        ("batch-a", "node-0", "1500m", low, {}),
        ("batch-b", "node-0", "1500m", low, {}),
        ("report", "node-1", "3", "critical" if pdb_blocks else "reports", {}),
        ("cache-a", "node-2", "1500m", "batch", {"app": "cache"}),
        ("cache-b", "node-2", "1500m", "batch", {"app": "cache"}),
    ]
    registry = plugin_registry()
    scheduler = Scheduler(cluster, clock, default_config(registry), registry, tracer=tracer, seed=2, identity="drill")
    kubelets = FakeKubelets(cluster, clock, config=KubeletConfig(stop_seconds=2), tracer=tracer)
    arrived = 0.0

    async def main() -> None:
        nonlocal arrived
        await clock.sleep(0.1)
        for name, node, cpu, cls, labels in running:  # placed one second apart: distinct start times
            pod = make_pod(name, {"cpu": cpu}, labels, priorityClassName=cls, terminationGracePeriodSeconds=5)
            created = await cluster.create(pod)
            await cluster.bind(
                core_v1.Binding(
                    metadata=meta_v1.ObjectMeta(name=name, namespace="default", uid=meta_of(created).uid),
                    target=m.ObjectReference(kind="Node", name=node),
                )
            )
            await clock.sleep(1.0)
        await clock.sleep(2.0)
        arrived = clock.now()
        await cluster.create(make_pod("urgent", {"cpu": "2"}, priorityClassName="critical"))
        await clock.sleep(30.0)

    clock.run_alongside(main(), [scheduler.run, kubelets.run, DisruptionController(cluster, clock).run])
    told = {"default/urgent"} | {
        str(v).split(" ")[0] for r in tracer.records if r.kind == "preemption.chosen" for v in r.details["victims"]
    }
    lines = steps(tracer.records, since=arrived, kinds=NARRATED, pods=told)
    placements = _placements(store, [*(p[0] for p in running), "urgent"])
    shown = {key.split("/", 1)[1] for key in told}
    return PreemptionStory(placements, lines, events_of(store, shown), explain_pod(scheduler, "default/urgent"))


def _classes_and_budget(store: MemoryStore) -> None:
    """The priority classes (batch 100, reports 200, critical 1000) and the cache pods' budget,
    which allows no disruption."""
    for name, value in (("batch", 100), ("reports", 200), ("critical", 1000)):
        store.create(scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name=name), value=value))
    budget = policy_v1.PodDisruptionBudget(
        metadata=meta_v1.ObjectMeta(name="cache", namespace="default"),
        spec=pm.PodDisruptionBudgetSpec(minAvailable=2, selector=meta_v1.LabelSelector(matchLabels={"app": "cache"})),
    )
    store.create(budget)


def _placements(store: MemoryStore, names: list[str]) -> dict[str, str | None]:
    """Each pod's node (None: unbound, or gone)."""
    placements: dict[str, str | None] = {}
    for name in names:
        try:
            stored = store.get(core_v1.Pod, name, namespace="default")
            placements[name] = present(stored.spec, "the pod's spec").nodeName
        except NotFound:
            placements[name] = None
    return placements


def _print_story(console: Console, story: PreemptionStory) -> None:
    console.print(
        "Each step: when (after urgent arrived), the pod, what happened, kubesched's code · kube-scheduler's."
    )
    print_steps(console, story.lines)
    gone = sorted(name for name, node in story.placements.items() if node is None)
    console.print(f"\nAt the end: urgent on {story.placements['urgent']}; gone: {', '.join(gone) or 'none'}.\n")
    print_events(console, story.events)
    console.print()
    print_explained(console, story.explained)
    console.print()


def print_c2(console: Console, story: PreemptionStory | None = None) -> None:
    console.rule("[bold]5.C2 — preemption with real victims")
    console.print(
        "node-0: batch-a, batch-b (priority 100, 1.5 CPU each); node-1: report (priority 200, 3 CPU); "
        "node-2: cache-a, cache-b (priority 100) under a PDB allowing no disruption. All nodes are full "
        "(4 CPU). `urgent` (priority 1000) asks for 2 CPU.\n"
    )
    _print_story(console, story or run_c2())
    console.rule("[bold]The same, when only the PDB-protected node can make room")
    console.print(
        "node-0 and node-1 now run pods as important as `urgent`: they cannot be victims. "
        "kube-scheduler prefers victims whose eviction no PodDisruptionBudget forbids, but a budget does "
        "not stop preemption: with no other candidate it evicts anyway, and the trace says how many "
        "violations the chosen node cost.\n"
    )
    _print_story(console, run_c2(pdb_blocks=True))
