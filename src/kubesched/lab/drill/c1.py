"""5.C1: the unschedulable backlog. Fifty pods that fit nowhere, for three reasons at once, diagnosed
to the rejecting plugin from their FailedScheduling messages and again from `explain`; then followed
into unschedulablePods and out by its two exits: a cluster event whose QueueingHint says Queue, and
the five-minute UnschedulableTimeout flush."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from lightkube.resources import core_v1
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.clock import VirtualClock
from kubesched.config import default_config
from kubesched.console.tables import print_table
from kubesched.framework.registry import Registry
from kubesched.lab.drill.story import (
    attempts_of,
    failed_scheduling,
    int_of,
    list_of,
    mapping_of,
    print_citations,
    print_explained,
    print_steps,
    string_of,
)
from kubesched.plugins import node_affinity, noderesources_fit, taint_toleration
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import plugin_registry
from kubesched.scheduler.explain import explain_pod
from kubesched.sim import NodeTemplate
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import Record, Sink, Tracer, cite
from kubesched.trace.narrate import Step, steps
from kubesched.workloads.runner import make_pod

TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
TOLERATE = [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}]
NVME = {"disktype": "nvme"}
UNTAINT_AT = 60.0  # the taint comes off the infra node
NODE_ADDED_AT = 90.0  # a node with the disk the nvme pods want joins
HORIZON = 420.0  # past the first UnschedulableTimeout flush of the pods that fit nowhere


@dataclass(frozen=True)
class Group:
    """Pods stuck for one reason: `count` of them, built alike."""

    name: str
    count: int
    cpu: str
    why: str  # what keeps them out, in a sentence
    spec: dict[str, object]


GROUPS = (
    Group("big", 20, "8", "ask for 8 CPUs; no node has more than 4", {"tolerations": TOLERATE}),
    Group(
        "infra",
        15,
        "100m",
        "select dedicated=infra, whose only node is tainted dedicated=infra:NoSchedule, and do not tolerate it",
        {"nodeSelector": {"dedicated": "infra"}},
    ),
    Group(
        "nvme",
        15,
        "100m",
        "require node affinity disktype In [nvme], a label no node has",
        {
            "tolerations": TOLERATE,
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["nvme"]}]}
                        ]
                    }
                }
            },
        },
    ),
)

# A FailedScheduling reason, as the message prints it, to the plugin that writes it.
REASON_PLUGINS = {
    taint_toleration.ERR_REASON_NOT_MATCH: taint_toleration.NAME,
    node_affinity.ERR_REASON_POD: node_affinity.NAME,
    node_affinity.ERR_REASON_ENFORCED: node_affinity.NAME,
    "Too many pods": noderesources_fit.NAME,
}
INSUFFICIENT = "Insufficient "  # NodeResourcesFit's prefix for every resource
HISTOGRAM = re.compile(r"^0/(\d+) nodes are available: (.*?)\.(?: |$)")
FOLLOWED = {"queue.move", "queue.pop", "cycle.failed", "cycle.selected", "bind.done"}


def plugins_from_message(message: str) -> dict[str, int]:
    """The rejecting plugins and how many nodes each ruled out, read off an aggregate message
    (its part before PostFilter's text) the way a person reads it."""
    match = HISTOGRAM.match(message)
    if match is None:
        return {}
    out: Counter[str] = Counter()
    for entry in match[2].split(", "):
        count, _, reason = entry.partition(" ")
        plugin = noderesources_fit.NAME if reason.startswith(INSUFFICIENT) else REASON_PLUGINS.get(reason, "?")
        out[plugin] += int(count)
    return dict(sorted(out.items()))


def plugins_from_explain(attempt: Mapping[str, object]) -> dict[str, int]:
    """The rejecting plugins and their node counts from a recorded attempt's Filter verdicts."""
    out: Counter[str] = Counter()
    for verdict in list_of(attempt["filter"], "the Filter verdicts"):
        group = mapping_of(verdict, "a Filter verdict")
        count = group["count"] if "count" in group else len(list_of(group.get("nodes") or [], "its nodes"))
        out[string_of(group["plugin"], "its plugin")] += int_of(count, "its node count")
    return dict(sorted(out.items()))


@dataclass
class Diagnosis:
    group: str
    pods: int
    why: str
    message: str  # the FailedScheduling message all of the group's pods got
    from_message: dict[str, int]
    from_explain: dict[str, int]


@dataclass
class Exit:
    """One way a followed pod left unschedulablePods: the event, the rejector plugin whose
    QueueingHint said Queue (none for the flush, which asks no plugin), and what came of it."""

    pod: str
    exit: str  # "cluster event" or "UnschedulableTimeout"
    event: str
    plugin: str
    hint: str
    hint_fn: bool  # False: a registration without a hint function (Queue by definition)
    at: float  # seconds since the pods were created
    waited: float  # how long the pod had been in unschedulablePods
    then: str  # bound, or back to unschedulablePods
    upstream: list[str] = field(default_factory=list)


@dataclass
class BacklogStory:
    nodes: dict[str, str]
    diagnoses: list[Diagnosis]
    per_pod: dict[str, dict[str, list[str]]]  # each pod's rejecting plugins, from its message and from explain
    exits: list[Exit]  # every move of a followed pod out of unschedulablePods, in time order
    followed: dict[str, list[Step]]  # one pod of each group, step by step
    explained: Mapping[str, object]  # `kubesched explain` of the first pod of the first group, first attempt
    pending_at_end: dict[str, int]  # the scheduler's queue at the horizon
    citations: dict[str, str]

    def to_json(self) -> dict[str, object]:
        return {
            "nodes": self.nodes,
            "diagnoses": [asdict(d) for d in self.diagnoses],
            "perPod": self.per_pod,
            "exits": [asdict(e) for e in self.exits],
            "followed": {pod: [asdict(s) for s in told] for pod, told in self.followed.items()},
            "explain": self.explained,
            "pendingAtEnd": self.pending_at_end,
            "citations": self.citations,
        }


CAPACITY = {"cpu": "4", "memory": "16Gi", "pods": "110"}
NODES = {  # as the story tells them
    "node-0..node-3": "4 CPU",
    "node-4": "4 CPU, dedicated=infra, tainted dedicated=infra:NoSchedule (untainted at t+60 s)",
    "node-5": "4 CPU, disktype=nvme (joins at t+90 s)",
}
CITATIONS = {
    "the Insufficient cpu reason (NodeResourcesFit)": cite("fitsRequest"),
    "the FailedScheduling message": cite("FitError.Error"),
    "the FailedScheduling event": cite("FailedScheduling event"),
    "into unschedulablePods after a failed attempt": cite("AddUnschedulableIfNotPresent"),
    "the pool": cite("unschedulablePods"),
    "out on a cluster event": cite("MoveAllToActiveOrBackoffQueue"),
    "the QueueingHint asked": cite("isPodWorthRequeuing"),
    "the hint's registration": cite("EnqueueExtensions"),
    "Node/UpdateNodeTaint added for plugins that registered Node/Add": cite("buildQueueingHintMap"),
    "out on the five-minute flush": cite("flushUnschedulablePodsLeftover"),
    "backoff": cite("backoff"),
}


def run_c1(
    *, seed: int = 1, horizon: float = HORIZON, sinks: Sequence[Sink] = (), registry: Registry | None = None
) -> BacklogStory:
    """Five 4-CPU nodes: node-0 to node-3 plain, node-4 labelled and tainted dedicated=infra. The
    backlog: twenty `big` pods (8 CPUs), fifteen `infra` pods (selecting node-4, not tolerating its
    taint) and fifteen `nvme` pods (requiring a disk label no node has). At t+60 s the taint comes
    off node-4; at t+90 s node-5 joins with disktype=nvme; the big pods wait for the flush (the
    story ends at `horizon` seconds). Every trace record also goes to `sinks`; `registry` gives the
    plugins (the in-tree and installed ones by default)."""
    clock = VirtualClock()
    tracer = Tracer(clock.now, keep=True)
    for sink in sinks:
        tracer.add_sink(sink)
    store = _five_nodes(MemoryStore(clock=clock, seed=seed, tracer=tracer))
    cluster = MemoryCluster(store)
    registry = registry if registry is not None else plugin_registry()
    scheduler = Scheduler(cluster, clock, default_config(registry), registry, tracer=tracer, seed=seed, identity="c1")
    pods = {g.name: [f"{g.name}-{i:02d}" for i in range(g.count)] for g in GROUPS}
    start = 0.0

    async def main() -> None:
        nonlocal start
        await clock.sleep(1.0)
        start = clock.now()
        for group in GROUPS:
            for name in pods[group.name]:
                await cluster.create(make_pod(name, {"cpu": group.cpu}, {"app": group.name}, **group.spec))
        await clock.sleep(UNTAINT_AT)
        await cluster.patch(core_v1.Node, "node-4", {"spec": {"taints": None}})
        await clock.sleep(NODE_ADDED_AT - UNTAINT_AT)
        nvme = NodeTemplate(capacity=CAPACITY, zones=(), labels=NVME)
        await cluster.create(nvme.make("node-5", 5))
        await clock.sleep(max(horizon - NODE_ADDED_AT, 0.0))

    clock.run_alongside(main(), [scheduler.run])
    firsts = {g.name: f"default/{pods[g.name][0]}" for g in GROUPS}
    messages = failed_scheduling(store)
    explained = {
        f"default/{name}": explain_pod(scheduler, f"default/{name}") for names in pods.values() for name in names
    }
    per_pod = {
        name: _plugins_named(messages.get(name, ""), explained[f"default/{name}"])
        for names in pods.values()
        for name in names
    }
    diagnoses = _diagnoses(pods, messages, explained)
    followed = {key: steps(tracer.records, since=start, kinds=FOLLOWED, pods={key}) for key in firsts.values()}
    exits = _all_exits(list(firsts.values()), tracer.records, start)
    big = explained[firsts["big"]]
    return BacklogStory(
        NODES,
        diagnoses,
        per_pod,
        exits,
        followed,
        {**big, "attempts": attempts_of(big)[:1]},
        scheduler.queue.pending(),
        CITATIONS,
    )


def _plugins_named(message: str, explained: Mapping[str, object]) -> dict[str, list[str]]:
    """The plugins a pod's FailedScheduling message names, and those its first attempt names."""
    return {
        "fromMessage": sorted(plugins_from_message(message)),
        "fromExplain": sorted(plugins_from_explain(attempts_of(explained)[0])),
    }


def _five_nodes(store: MemoryStore) -> MemoryStore:
    """node-0 to node-3 plain, node-4 labelled and tainted dedicated=infra, 4 CPUs each."""
    for i in range(4):
        store.create(NodeTemplate(capacity=CAPACITY, zones=()).make(f"node-{i}", i))
    infra = NodeTemplate(capacity=CAPACITY, zones=(), labels={"dedicated": "infra"}, taints=[TAINT])
    store.create(infra.make("node-4", 4))
    return store


def _all_exits(pods: list[str], records: list[Record], start: float) -> list[Exit]:
    """How each of `pods` left unschedulablePods after `start`, in time order."""
    moves = [r for r in records if r.kind == "queue.move" and r.pod in pods and r.time >= start]
    return sorted((e for key in pods for e in _exits(key, moves, start, records)), key=lambda e: e.at)


def _diagnoses(
    pods: dict[str, list[str]], messages: dict[str, str], explained: Mapping[str, Mapping[str, object]]
) -> list[Diagnosis]:
    """Each group's FailedScheduling message and the plugins it names, beside those the first
    pod's attempt, explained, names."""
    diagnoses = []
    for group in GROUPS:
        distinct = {messages.get(name, "") for name in pods[group.name]}
        message = min(distinct)  # every pod of a group gets the same text (one line per group)
        first_attempt = attempts_of(explained[f"default/{pods[group.name][0]}"])[0]
        diagnoses.append(
            Diagnosis(
                group.name,
                group.count,
                group.why,
                message if len(distinct) == 1 else f"{len(distinct)} different messages",
                plugins_from_message(message),
                plugins_from_explain(first_attempt),
            )
        )
    return diagnoses


def _exits(pod: str, moves: list[Record], start: float, records: list[Record]) -> list[Exit]:
    """Each move of `pod` out of unschedulablePods, with how long it had waited there and what
    the attempt after it did."""
    out = []
    entered = start
    mine = [m for m in moves if m.pod == pod]
    for i, move in enumerate(mine):
        d = move.details
        if d["to"] == "unschedulablePods":
            entered = move.time
            continue
        if d.get("from") != "unschedulablePods":
            continue
        later = mine[i + 1 :]
        back = next((m for m in later if m.details["to"] == "unschedulablePods"), None)
        bound = next((r for r in records if r.kind == "bind.done" and r.pod == pod and r.time >= move.time), None)
        if back is not None and (bound is None or back.time < bound.time):
            then = f"tried again at once, fits nowhere still: back to unschedulablePods at t+{back.time - start:g} s"
        elif bound is not None:
            then = f"bound to {bound.node} at t+{bound.time - start:g} s"
        else:
            then = "still queued"
        event = d["event"]
        out.append(
            Exit(
                pod,
                "UnschedulableTimeout" if event == "UnschedulableTimeout" else "cluster event",
                event,
                d.get("plugin", ""),
                d.get("hint", ""),
                d.get("hint_fn", True),
                round(move.time - start, 3),
                round(move.time - entered, 3),
                then,
                list(move.upstream),
            )
        )
    return out


def print_c1(console: Console, story: BacklogStory | None = None) -> None:
    story = story or run_c1()
    console.rule("[bold]5.C1 — the unschedulable backlog")
    console.print("Nodes: " + "; ".join(f"{n}: {what}" for n, what in story.nodes.items()) + ".")
    console.print(
        "Fifty pods that will not schedule: "
        + "; ".join(f"{d.pods} `{d.group}` pods {escape(d.why)}" for d in story.diagnoses)
        + ".\n"
    )
    console.print("[bold]1. The backlog from the FailedScheduling messages alone[/bold]")
    table = Table(show_lines=True)
    for column in ("PODS", "FailedScheduling (as kube-scheduler writes it)", "FROM THE MESSAGE", "FROM EXPLAIN"):
        table.add_column(column)
    for d in story.diagnoses:
        table.add_row(
            f"{d.pods} {d.group}",
            escape(d.message),
            _plugins(d.from_message),
            _plugins(d.from_explain) + ("" if d.from_message == d.from_explain else "  [red](differs)[/red]"),
        )
    print_table(console, table)
    agree = sum(1 for p in story.per_pod.values() if p["fromMessage"] == p["fromExplain"])
    console.print(f"Pod by pod, the two diagnoses agree for {agree} of {len(story.per_pod)} pods.")
    console.print(
        "Each count in the message is a number of nodes and a reason; each reason is one plugin's "
        f"({cite('FitError.Error')} builds the text; NodeResourcesFit formats `Insufficient cpu` in "
        f"{cite('fitsRequest')}). The result store says the same node by node:\n"
    )
    print_explained(console, story.explained, last=1)
    console.print("\n[bold]2. Into unschedulablePods, and out by both exits[/bold]")
    for pod, told in story.followed.items():
        console.print(f"\n{pod}:", highlight=False)
        print_steps(console, told)
    console.print()
    console.print("Every exit of the followed pods from unschedulablePods:")
    for e in story.exits:
        if not e.plugin:
            by = "no plugin asked: the flush moves every pod waiting longer than 5 minutes"
        elif e.hint_fn:
            by = f"{e.plugin}'s QueueingHint said {e.hint}"
        else:
            by = (
                f"{e.plugin} registered Node/Add, so the scheduler also registered Node/UpdateNodeTaint for it, "
                "with no hint function: Queue"
            )
        console.print(
            f"  t+{e.at:g} s {e.pod}, after {e.waited:g} s there: "
            f"{e.exit if e.exit == e.event else f'{e.exit} {e.event}'} ({by}); then {e.then}.  "
            f"[dim]{escape(' · '.join(e.upstream))}[/dim]",
            soft_wrap=True,
            highlight=False,
        )
    console.print(f"\nAt t+{HORIZON:g} s the queue holds: {story.pending_at_end}.")
    print_citations(console, story.citations)


def _plugins(counts: dict[str, int]) -> str:
    return ", ".join(f"{plugin} ({n} nodes)" for plugin, n in counts.items())
