"""The curriculum's drills on fake nodes and virtual time. `c2`: preemption with real victims,
narrated from the trace; `c3`: a pod stuck by an unsatisfiable topology spread constraint,
beside a pod stuck by scarcity, told apart by their FailedScheduling messages."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.models import policy_v1 as pm
from lightkube.resources import core_v1, policy_v1, scheduling_v1
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.cli.scenario import run_alongside
from kubesched.clock import VirtualClock
from kubesched.cluster import NotFound
from kubesched.cluster.memory import MemoryCluster, MemoryStore
from kubesched.config import default_config
from kubesched.minimal import MinimalScheduler
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.sim import DisruptionController, FakeKubelets, KubeletConfig, NodeTemplate
from kubesched.trace import Tracer
from kubesched.workloads.runner import make_pod

ZONE = "topology.kubernetes.io/zone"
TAINT = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
WEB = {"app": "web"}
WEB_REPLICAS = 4


def _spread(policy: str | None) -> dict[str, Any]:
    constraint: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": WEB},
    }
    if policy:
        constraint["nodeTaintsPolicy"] = policy
    return constraint


@dataclass
class PodOutcome:
    name: str
    node: str | None
    message: str = ""  # the last FailedScheduling message, if any
    rejected_by: list[str] = field(default_factory=list)


@dataclass
class DrillResult:
    nodes: dict[str, str]  # node -> zone (and taint, if any)
    pods: list[PodOutcome]

    def to_json(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "pods": [p.__dict__ for p in self.pods]}


def run_c3(*, taints_policy: str | None = None, horizon: float = 30.0) -> DrillResult:
    """Zone a has two nodes, zone b one node tainted `dedicated=batch:NoSchedule`. Four `app=web`
    replicas must spread over zones with maxSkew 1; a fifth pod asks for more CPU than any node
    has. With upstream's default `nodeTaintsPolicy: Ignore` the tainted node's zone still counts
    (with 0 web pods), so a second web pod in zone a would make the skew 2: it is stuck though
    every node has room. `taints_policy="Honor"` leaves zone b out and the replicas schedule."""
    clock = VirtualClock()
    store = MemoryStore(clock=clock, seed=3)
    cluster = MemoryCluster(store)
    nodes = {"a-1": "zone-a", "a-2": "zone-a", "b-1": "zone-b"}
    for index, (name, zone) in enumerate(nodes.items()):
        template = NodeTemplate(labels={ZONE: zone}, zones=(), taints=[TAINT] if name == "b-1" else ())
        store.create(template.make(name, index))
    registry = in_tree_registry()
    scheduler = Scheduler(cluster, clock, default_config(registry), registry, seed=3, identity="drill")
    spread = {"topologySpreadConstraints": [_spread(taints_policy)]}
    names = [f"web-{i}" for i in range(WEB_REPLICAS)]
    pods = [make_pod(name, {"cpu": "100m"}, WEB, **spread) for name in names]
    pods.append(make_pod("big", {"cpu": "8"}))
    names.append("big")
    rejected: dict[str, list[str]] = {}

    async def main() -> None:
        await clock.sleep(1.0)
        for pod in pods:
            await cluster.create(pod)
            await clock.sleep(1.0)
        await clock.sleep(horizon)
        for waiting in scheduler.queue.snapshot():
            rejected[waiting.key.split("/", 1)[1]] = waiting.rejected_by

    run_alongside(clock, [scheduler, FakeKubelets(cluster, clock)], main)
    messages = {
        e.involvedObject.name: e.message for e in store.list(core_v1.Event).items if e.reason == "FailedScheduling"
    }
    outcomes = []
    for name in names:
        stored: Any = store.get(core_v1.Pod, name, namespace="default")
        bound = stored.spec.nodeName
        outcomes.append(PodOutcome(name, bound, "" if bound else messages.get(name, ""), rejected.get(name, [])))
    taint = f"{TAINT['key']}={TAINT['value']}:{TAINT['effect']}"
    return DrillResult({n: f"{z}, tainted {taint}" if n == "b-1" else z for n, z in nodes.items()}, outcomes)


def _table(result: DrillResult) -> Table:
    table = Table(show_lines=True)
    for column in ("POD", "NODE", "REJECTED BY", "FailedScheduling"):
        table.add_column(column)
    for pod in result.pods:
        table.add_row(pod.name, pod.node or "[red]pending[/red]", ", ".join(pod.rejected_by), pod.message)
    return table


def print_c3(console: Console) -> None:
    """The drill, narrated: the stuck pods, then the same replicas with the policy that fixes it."""
    result = run_c3()
    console.rule("[bold]5.C3 — unschedulable for a reason that is not scarcity")
    console.print(
        "Nodes: " + "; ".join(f"{n} ({z})" for n, z in result.nodes.items()) + ". "
        f"{WEB_REPLICAS} replicas of app=web spread over zones (maxSkew 1, DoNotSchedule); "
        "`big` asks for 8 CPUs, more than any node has.\n"
    )
    console.print(_table(result))
    console.print(
        "\nBoth pods are pending, for different reasons. `big` is [bold]Insufficient cpu[/bold] on the "
        "untainted nodes: scarcity, which more capacity would cure. The web replicas were rejected by "
        "[bold]PodTopologySpread[/bold] ([italic]didn't match pod topology spread constraints[/italic]) on "
        "nodes with plenty of room: zone-b counts as a domain with 0 web pods (nodeTaintsPolicy defaults "
        "to Ignore) though its only node is tainted, so a second replica in zone-a would make the skew 2.\n"
    )
    fixed = run_c3(taints_policy="Honor")
    console.rule("[bold]The same replicas with nodeTaintsPolicy: Honor")
    console.print(_table(fixed))


# -- 5.C2: preemption with real victims -----------------------------------------------------------

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
class Line:
    """One step of the story: virtual seconds since the preemptor arrived, the code that did it."""

    time: float
    site: str
    kind: str
    pod: str
    text: str


@dataclass
class PreemptionStory:
    placements: dict[str, str | None]  # pod -> node (None: gone or pending)
    lines: list[Line]

    def to_json(self) -> dict[str, Any]:
        return {"placements": self.placements, "lines": [line.__dict__ for line in self.lines]}


def _say(kind: str, pod: str, details: dict[str, Any], node: str | None) -> str:
    d = details
    if kind == "queue.move":
        why = f" ({d['plugin']} hint: {d['hint']})" if d.get("plugin") else ""
        return f"{d.get('from') or 'new'} → {d['to']} on {d['event']}{why}"
    if kind == "queue.pop":
        return f"popped for attempt {d['attempts']}"
    if kind == "cycle.failed":
        return f"attempt failed: {d['message']}"
    if kind == "preemption.chosen":
        others = ", ".join(
            f"{n}: {len(c['victims'])} victim(s), {c['pdb_violations']} PDB violation(s)"
            for n, c in d["candidates"].items()
        )
        return f"preempts on {node}: victims {', '.join(d['victims'])}; chosen by {d['reason']} among [{others}]"
    if kind == "nomination.set":
        return f"status.nominatedNodeName = {node}: a claim on the node, not the node"
    if kind == "preemption.victim":
        return f"victim of {d['preemptor']}: DisruptionTarget condition, deleted gracefully"
    if kind == "kubelet.killed":
        return f"the kubelet on {node} stopped it (grace {d['grace']} s)"
    if kind == "cycle.selected":
        return f"fits {node} now"
    if kind == "bind.done":
        return f"bound to {node}"
    return f"running on {node}"


def run_c2(*, pdb_blocks: bool = False) -> PreemptionStory:
    """Three full 4-CPU nodes, then `urgent` (priority 1000, 2 CPUs). node-0 runs two batch pods
    (priority 100), node-1 a report (priority 200), node-2 two cache pods (priority 100) under a
    PodDisruptionBudget that allows no disruption. With `pdb_blocks`, node-0 and node-1 run pods
    as important as `urgent`, so node-2 is the only place preemption can make room."""
    clock = VirtualClock()
    tracer = Tracer(clock.now, keep=True)
    store = MemoryStore(clock=clock, seed=2, tracer=tracer)
    cluster = MemoryCluster(store)
    template = NodeTemplate(capacity={"cpu": "4", "memory": "16Gi", "pods": "110"}, zones=())
    for i in range(3):
        store.create(template.make(f"node-{i}", i))
    for name, value in (("batch", 100), ("reports", 200), ("critical", 1000)):
        store.create(scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name=name), value=value))
    budget = policy_v1.PodDisruptionBudget(
        metadata=meta_v1.ObjectMeta(name="cache", namespace="default"),
        spec=pm.PodDisruptionBudgetSpec(minAvailable=2, selector=meta_v1.LabelSelector(matchLabels={"app": "cache"})),
    )
    store.create(budget)
    low = "critical" if pdb_blocks else "batch"
    running = [
        ("batch-a", "node-0", "1500m", low, {}),
        ("batch-b", "node-0", "1500m", low, {}),
        ("report", "node-1", "3", "critical" if pdb_blocks else "reports", {}),
        ("cache-a", "node-2", "1500m", "batch", {"app": "cache"}),
        ("cache-b", "node-2", "1500m", "batch", {"app": "cache"}),
    ]
    registry = in_tree_registry()
    scheduler = Scheduler(cluster, clock, default_config(registry), registry, tracer=tracer, seed=2, identity="drill")
    kubelets = FakeKubelets(cluster, clock, config=KubeletConfig(stop_seconds=2), tracer=tracer)
    arrived = 0.0

    async def main() -> None:
        nonlocal arrived
        await clock.sleep(0.1)
        for name, node, cpu, cls, labels in running:  # placed one second apart: distinct start times
            pod = make_pod(name, {"cpu": cpu}, labels, priorityClassName=cls, terminationGracePeriodSeconds=5)
            created: Any = await cluster.create(pod)
            await cluster.bind(
                core_v1.Binding(
                    metadata=meta_v1.ObjectMeta(name=name, namespace="default", uid=created.metadata.uid),
                    target=m.ObjectReference(kind="Node", name=node),
                )
            )
            await clock.sleep(1.0)
        await clock.sleep(2.0)
        arrived = clock.now()
        await cluster.create(make_pod("urgent", {"cpu": "2"}, priorityClassName="critical"))
        await clock.sleep(30.0)

    parts = [scheduler, kubelets, DisruptionController(cluster, clock)]
    run_alongside(clock, parts, main)
    told = {"default/urgent"} | {
        str(v).split(" ")[0] for r in tracer.records if r.kind == "preemption.chosen" for v in r.details["victims"]
    }
    lines = [
        Line(round(r.time - arrived, 3), r.site, r.kind, r.pod or "", _say(r.kind, r.pod or "", r.details, r.node))
        for r in tracer.records
        if r.time >= arrived and r.kind in NARRATED and r.pod in told
    ]
    placements = {}
    for name in [*(p[0] for p in running), "urgent"]:
        try:
            stored: Any = store.get(core_v1.Pod, name, namespace="default")
            placements[name] = stored.spec.nodeName
        except NotFound:
            placements[name] = None
    return PreemptionStory(placements, lines)


def _print_story(console: Console, story: PreemptionStory) -> None:
    for line in story.lines:
        text = escape(line.text)
        console.print(f"[dim]t+{line.time:7.3f}s[/dim] [cyan]{line.pod:<16}[/cyan] {text}  [dim]{line.site}[/dim]")
    gone = sorted(name for name, node in story.placements.items() if node is None)
    console.print(f"\nAt the end: urgent on {story.placements['urgent']}; gone: {', '.join(gone) or 'none'}.\n")


def print_c2(console: Console) -> None:
    console.rule("[bold]5.C2 — preemption with real victims")
    console.print(
        "node-0: batch-a, batch-b (priority 100, 1.5 CPU each); node-1: report (priority 200, 3 CPU); "
        "node-2: cache-a, cache-b (priority 100) under a PDB allowing no disruption. All nodes are full "
        "(4 CPU). `urgent` (priority 1000) asks for 2 CPU.\n"
    )
    _print_story(console, run_c2())
    console.rule("[bold]The same, when only the PDB-protected node can make room")
    console.print(
        "node-0 and node-1 now run pods as important as `urgent`: they cannot be victims. "
        "kube-scheduler prefers victims whose eviction no PodDisruptionBudget forbids, but a budget does "
        "not stop preemption: with no other candidate it evicts anyway, and the trace says how many "
        "violations the chosen node cost.\n"
    )
    _print_story(console, run_c2(pdb_blocks=True))


# -- 5.C4: two schedulers, one pod ----------------------------------------------------------------

CONTESTED = "contested"


class SlowPreBind:
    """A PreBind plugin that takes `seconds` (a slow API server): the window between assume and
    bind in which the crash variant kills the scheduler."""

    name = "SlowPreBind"
    seconds = 0.5

    def __init__(self, args: Any, handle: Any) -> None:
        self.clock = handle.clock

    async def pre_bind(self, state: Any, pod: Any, node_name: str) -> None:
        await self.clock.sleep(self.seconds)


@dataclass
class RaceOutcome:
    bound: dict[str, str | None]  # pod -> node
    winners: dict[str, str]  # pod -> "kubesched" or "minimal"
    conflicts: list[str]  # the lines telling who lost which race, and what the loser did
    overcommitted: list[str]  # nodes whose running (not rejected) pods ask for more CPU than they have
    rejected_by_kubelet: int
    cache_agrees: bool  # kubesched's cache counts on each node exactly the pods the API server has there
    assumed_at_crash: list[str] = field(default_factory=list)  # the crash variant: assumed, not bound

    def to_json(self) -> dict[str, Any]:
        return self.__dict__


def _outcome(store: MemoryStore, records: list[Any], pods: list[str], scheduler: Scheduler) -> RaceOutcome:
    bound = {}
    for name in pods:
        stored: Any = store.get(core_v1.Pod, name, namespace="default")
        bound[name] = stored.spec.nodeName
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
    return RaceOutcome(bound, winners, conflicts, over, rejected, counted == placed, crashed[0] if crashed else [])


def run_c4(*, crash: bool = False) -> RaceOutcome:
    """Two fake 4-CPU nodes and eight 1-CPU pods. The race: kubesched's profile and the minimal
    scheduler both answer to `schedulerName: contested`, so both try to bind every pod; the API
    server accepts the first Binding of a pod and refuses the second (409). The crash variant:
    kubesched alone, killed while its first pods wait in a slow PreBind (assumed, not bound); a new
    kubesched process, with an empty cache, starts from what the API server says."""
    clock = VirtualClock()
    tracer = Tracer(clock.now, keep=True)
    store = MemoryStore(clock=clock, seed=4, tracer=tracer)
    cluster = MemoryCluster(store)
    template = NodeTemplate(capacity={"cpu": "4", "memory": "16Gi", "pods": "110"}, zones=())
    for i in range(2):
        store.create(template.make(f"node-{i}", i))
    registry = in_tree_registry()
    registry.register(SlowPreBind.name, SlowPreBind)
    profile: dict[str, Any] = {"schedulerName": CONTESTED}
    if crash:
        profile["plugins"] = {"preBind": {"enabled": [{"name": SlowPreBind.name}]}}
    settings = default_config(registry, profiles=[profile])
    names = [f"pod-{i}" for i in range(8)]
    first = Scheduler(cluster, clock, settings, registry, tracer=tracer, seed=4, identity="first")
    rivals: list[Any] = [] if crash else [MinimalScheduler(cluster, clock, name=CONTESTED, tracer=tracer)]
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

    run_alongside(clock, [FakeKubelets(cluster, clock, tracer=tracer), *rivals], main)
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
    console.rule("[bold]Killed between assume and bind, then restarted")
    crash = run_c4(crash=True)
    console.print(
        f"Killed with {len(crash.assumed_at_crash)} pods assumed but not bound ({', '.join(crash.assumed_at_crash)}). "
        f"Every pod bound exactly once: {all(crash.bound.values())}; overcommitted nodes: "
        f"{crash.overcommitted or 'none'}. The assumed pods lived only in the dead process's cache; the new one "
        "listed the pods, found them unbound, and scheduled them: the state is in the API server, not in "
        "the scheduler (level-triggered)."
    )
