"""The drills as labs: each drill's story (its own command prints it in full) ended by a check of
the claim it makes.

5.4.5 (5.C1) — fifty pods that will not schedule, diagnosed and followed out of unschedulablePods.
5.6.3 (5.C2) — which pod died, on which node, and why that one.
5.6.4 (5.C3) — unschedulable for a reason that is not scarcity.
5.2.4 (5.C4) — two schedulers, one pod: each wins some races; the loser is refused and forgets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.framework.events import NODE
from kubesched.framework.registry import Factory, Registry
from kubesched.lab.drill.c1 import plugins_from_message, run_c1
from kubesched.lab.drill.c2 import run_c2
from kubesched.lab.drill.c3 import run_c3
from kubesched.lab.drill.c4 import CITATIONS as C4_CITATIONS
from kubesched.lab.drill.c4 import LINKS, run_c4
from kubesched.lab.result import Check, LabResult
from kubesched.plugin import Handle, Plugin
from kubesched.scheduler.discovery import plugin_registry
from kubesched.trace import cite
from kubesched.trace.narrate import Step

BACKLOG_ID, BACKLOG_TITLE = "5.4.5", "5.C1 — fifty pods that will not schedule"
VICTIM_ID, VICTIM_TITLE = "5.6.3", "5.C2 — which pod died, on which node, and why that one"
SPREAD_ID, SPREAD_TITLE = "5.6.4", "5.C3 — unschedulable for a reason that is not scarcity"
RACE_ID, RACE_TITLE = "5.2.4", "5.C4 — two schedulers, one pod"


def deaf_to_nodes(plugins: tuple[str, ...]) -> Registry:
    """The plugins, with those named registering no Node event (no QueueingHint of theirs is asked
    when a node changes): broken plugins, for falsifying the labs about hints."""
    base = plugin_registry()
    deaf = Registry()
    for name in base:
        entry = base.get(name)
        assert entry is not None
        factory = _without_node_events(entry.factory) if name in plugins else entry.factory
        deaf.register(name, factory, entry.args_type, source=entry.source)
    return deaf


def _without_node_events(factory: Factory) -> Factory:
    def make(args: object, handle: Handle) -> Plugin:
        plugin = factory(args, handle)
        registers: Any = plugin  # Any: a plugin of any class, whose events are replaced here
        events = [e for e in registers.events_to_register() if e.event.resource != NODE]
        registers.events_to_register = lambda: events
        return plugin

    return make


def run_backlog(
    *,
    seed: int = 1,
    horizon: float = 420.0,
    deaf: tuple[str, ...] = (),
    reword: Callable[[str], str] | None = None,
) -> LabResult:
    """5.C1 to its horizon. Each part of the claim can be made false: a horizon before the
    five-minute flush (say 200 s) leaves the big pods without their second exit; plugins `deaf` to
    node events leave their pods waiting for the flush instead of the change that helps them
    (NodeAffinity: the nvme pods; with TaintToleration too, the infra pods — NodeAffinity registers
    Node/Add, so any taint change queues its pods as well); a message reworded (`reword`, a wrong
    answer) no longer names the plugins `explain` finds."""
    story = run_c1(seed=seed, horizon=horizon, registry=deaf_to_nodes(deaf) if deaf else None)
    told = [s for followed in story.followed.values() for s in followed]
    said = reword or (lambda message: message)
    agree = all(plugins_from_message(said(d.message)) == d.from_explain for d in story.diagnoses)
    exits = {(e.pod.split("/")[1].rsplit("-", 1)[0], e.event) for e in story.exits if e.then.startswith("bound")}
    flushed = [e.pod for e in story.exits if e.exit == "UnschedulableTimeout"]
    check = Check(
        claim="each group's FailedScheduling message names the plugins `explain` finds; the infra and nvme pods "
        "leave unschedulablePods on the cluster event their plugin's hint queues them for, and are bound; the big "
        "pods, which no event helps, leave only on the five-minute UnschedulableTimeout flush",
        evidence={
            "diagnoses": {d.group: d.from_message for d in story.diagnoses},
            "messagesAgreeWithExplain": agree,
            "boundAfter": sorted(exits),
            "flushed": flushed,
        },
        passed=agree
        and ("infra", "NodeUpdateNodeTaint") in exits
        and ("nvme", "NodeAdd") in exits
        and any(p.startswith("default/big-") for p in flushed),
    )
    return LabResult(BACKLOG_ID, BACKLOG_TITLE, told, check)


def run_victim(*, seed: int = 1, pdb_blocks: bool = False) -> LabResult:
    """5.C2. The claim is about its answer: the victim is a batch pod on node-0, the node whose most
    important victim is the least important. With `pdb_blocks` the answer is another (node-2's
    cache pod, under a budget), which makes the claim false."""
    story = run_c2(pdb_blocks=pdb_blocks)
    chosen = next((s for s in story.lines if s.kind == "preemption.chosen"), None)
    victims = [s.pod for s in story.lines if s.kind == "preemption.victim"]
    node = story.placements.get("urgent")
    check = Check(
        claim="one batch pod (priority 100) on node-0 dies: of the candidates, node-0's most important victim is "
        "the least important (DefaultPreemption's lowest most-important victim priority); urgent then runs there",
        evidence={"chosen": chosen.text if chosen else None, "victims": victims, "urgentOn": node},
        passed=len(victims) == 1 and victims[0].startswith("default/batch-") and node == "node-0",
    )
    return LabResult(VICTIM_ID, VICTIM_TITLE, story.lines, check)


def run_spread(*, seed: int = 1, taints_policy: str | None = None) -> LabResult:
    """5.C3. With nodeTaintsPolicy Honor (`taints_policy`) the tainted zone leaves the skew
    computation and the replicas schedule: the claim is then false."""
    result = run_c3(taints_policy=taints_policy)
    steps = [
        Step(
            0.0,
            f"{p.name}: {'on ' + p.node if p.node else 'pending: ' + p.message}",
            upstream=(cite("PodTopologySpread.Filter") if not p.node else cite("sortedNodeScores"),),
            pod=f"default/{p.name}",
        )
        for p in result.pods
    ]
    stuck = [p for p in result.pods if p.name.startswith("web-") and not p.node]
    spread = [p.name for p in stuck if "PodTopologySpread" in p.rejected_by]
    check = Check(
        claim="web replicas stay pending though nodes have room: PodTopologySpread counts the tainted zone (0 "
        "replicas) under the default nodeTaintsPolicy Ignore, so a second replica in zone a would exceed maxSkew 1",
        evidence={"stuck": [p.name for p in stuck], "rejectedBySpread": spread, "nodes": result.nodes},
        passed=bool(stuck) and spread == [p.name for p in stuck],
    )
    return LabResult(SPREAD_ID, SPREAD_TITLE, steps, check)


def run_race(*, seed: int = 4, links: tuple[float, float] = LINKS) -> LabResult:
    """5.C4's race, links seeded by `seed` so that each scheduler wins some pods. With instant links
    (`links` (0, 0)) the from-scratch scheduler, which binds straight from its watch, wins every race
    and the contested outcome is not seen: the claim is then false."""
    race = run_c4(seed=seed, links=links)
    steps = [
        Step(0.0, line, upstream=(C4_CITATIONS["a failed binding: Unreserve, forget the assumed pod, requeue"],))
        for line in race.conflicts
    ]
    won = {w: sum(1 for v in race.winners.values() if v == w) for w in ("kubesched", "minimal")}
    lost_by_kubesched = [c for c in race.conflicts if c.startswith("kubesched lost")]
    check = Check(
        claim="each scheduler wins some pods; every pod is bound once; each race kubesched loses is refused (409, "
        "already assigned) and its assumed pod forgotten, so its cache agrees with the API server node by node",
        evidence={"won": won, "kubeschedLost": len(lost_by_kubesched), "cacheAgrees": race.cache_agrees},
        passed=all(won.values())
        and all(race.bound.values())
        and all("already assigned" in c and c.endswith("forgotten") for c in lost_by_kubesched)
        and race.cache_agrees,
    )
    return LabResult(RACE_ID, RACE_TITLE, steps, check)
