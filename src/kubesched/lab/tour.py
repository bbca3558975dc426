"""5.1.1 — the tour: one pod's path from "pod appears" to "node chosen" and on to PostBind, each step
with kubesched's site and kube-scheduler v1.36.2's. 5.3.1 — the same pod's one attempt in the detail
kube-scheduler logs at -v=10: the Filter verdict of every node, the score table, the host."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import ClassVar

from lightkube.resources import core_v1

from kubesched.api.quantity import milli_value
from kubesched.lab.drill.story import attempts_of, int_of, list_of, mapping_of, string_of, strings_of
from kubesched.lab.harness import NODE, LabCluster, lab_cluster
from kubesched.lab.result import Check, LabResult, site_of
from kubesched.plugin import CycleState, Handle, PodInfo, PreBindPlugin, Status
from kubesched.scheduler.algorithm import Algorithm
from kubesched.scheduler.explain import explain_pod
from kubesched.trace.narrate import Step
from kubesched.trace.upstream import cite
from kubesched.workloads.runner import make_pod

TOUR_ID, TOUR_TITLE = "5.1.1", "The tour the SIG wrote, read with the source open"
DETAIL_ID, DETAIL_TITLE = "5.3.1", "One pod, at -v=10, mapped onto schedule_one.go"
POD = "tourist"
# The path, in upstream's order: each trace kind, and what kube-scheduler calls the step.
TOUR = (
    ("queue.move", "the pod informer's add handler puts the pod in activeQ"),
    ("queue.pop", "ScheduleOne pops it"),
    ("cycle.start", "scheduleOnePod starts the scheduling cycle"),
    ("cycle.filtered", "findNodesThatFitPod: PreFilter, then Filter on the nodes to find"),
    ("cycle.scored", "prioritizeNodes: PreScore, Score, NormalizeScore, weights"),
    ("cycle.selected", "sortedNodeScores: the best total popped, ties broken at random"),
    ("cache.assumed", "assume: the cache counts the pod on the node before any API call"),
    ("cycle.reserved", "Reserve"),
    ("cycle.permitted", "Permit"),
    ("bind.started", "go runBindingCycle: the binding cycle leaves the scheduling thread"),
    ("bind.prebound", "PreBind"),
    ("bind.done", "Bind: the Binding POSTed, the Scheduled event"),
    ("bind.postbound", "PostBind"),
)
TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}


class RefusesOnce(PreBindPlugin):
    """A PreBind plugin that fails each pod's first binding with an error (an API call that timed
    out once): the pod backs off and goes round the path again."""

    name: ClassVar[str] = "RefusesOnce"

    def __init__(self, args: object, handle: Handle) -> None:
        self.refused: set[str] = set()

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if pod.uid in self.refused:
            return None
        self.refused.add(pod.uid)
        return Status.error("the API call timed out, once")


def _cluster(seed: int, nodes: int, strategy: str, *, refuse_once: bool = False) -> LabCluster:
    """`nodes` 4-CPU nodes, node-0 tainted (so Filter has something to say); node-1 half full, so
    the scores differ; NodeResourcesFit scoring with `strategy`; with `refuse_once`, a PreBind
    plugin that fails each pod's first binding."""
    tainted = replace(NODE, taints=[TAINT])
    made = [(tainted if i == 0 else NODE).make(f"node-{i}", i) for i in range(nodes)]
    busy = [make_pod("busy", {"cpu": "2", "memory": "8Gi"}, nodeName="node-1")] if nodes > 1 else []
    fit_args = {"scoringStrategy": {"type": strategy, "resources": [{"name": "cpu", "weight": 1}]}}
    profile: dict[str, object] = {
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "NodeResourcesFit", "args": fit_args}],
    }
    if refuse_once:
        profile["plugins"] = {"preBind": {"enabled": [{"name": RefusesOnce.name}]}}
    return lab_cluster(seed=seed, nodes=made, pods=busy, plugins=[RefusesOnce], profiles=[profile])


def _schedule(lab: LabCluster) -> None:
    async def body() -> None:
        await lab.clock.sleep(0.5)
        await lab.cluster.create(make_pod(POD, {"cpu": "500m", "memory": "1Gi"}))
        await lab.clock.sleep(5.0)

    lab.run(body)


def run_tour(*, seed: int = 1, nodes: int = 3, refuse_once: bool = False) -> LabResult:
    """One pod on `nodes` nodes. With one node only nothing is scored (upstream's schedulePod
    returns the only feasible node at once): a way to make the tour's claim false. With
    `refuse_once` its first binding fails and it goes round again: every step twice, false too."""
    lab = _cluster(seed, max(nodes, 1), "LeastAllocated", refuse_once=refuse_once)
    _schedule(lab)
    told = lab.told(POD, kinds={kind for kind, _ in TOUR})
    first: dict[str, Step] = {}
    for s in told:
        first.setdefault(s.kind, s)
    what = dict(TOUR)
    narrated = [  # each kind's first step, in the order the trace has them
        Step(s.time, f"{s.text} — {what[s.kind]}", s.site, s.upstream, s.pod, s.kind) for s in first.values()
    ]
    seen = [s.kind for s in narrated]
    times = Counter(s.kind for s in told)
    repeated = {kind: n for kind, n in times.items() if n != 1}
    check = Check(
        claim="the pod passes every step of upstream's path, once each, in upstream's order",
        evidence={
            "expected": [kind for kind, _ in TOUR],
            "seen": seen,
            "repeated": repeated,
            "node": lab.node_of(POD),
        },
        passed=seen == [kind for kind, _ in TOUR] and not repeated,
    )
    return LabResult(TOUR_ID, TOUR_TITLE, narrated, check)


def _detail(attempt: Mapping[str, object], *, since: float) -> list[Step]:
    """The attempt's numbers as the lines kube-scheduler logs at -v=10."""
    time = attempt["time"]
    if not isinstance(time, int | float):
        raise TypeError(f"the attempt's time is not a number: {time!r}")
    at = round(time - since, 3)
    out = [
        Step(
            at,
            f"{attempt['evaluatedNodes']} of {attempt['numAllNodes']} nodes evaluated "
            f"(numFeasibleNodesToFind {attempt['numFeasibleNodesToFind']}), {attempt['feasibleNodes']} feasible",
            site_of(Algorithm.find_nodes_that_fit),
            (cite("findNodesThatFitPod"), cite("numFeasibleNodesToFind")),
        )
    ]
    for verdict in list_of(attempt["filter"], "the Filter verdicts"):
        group = mapping_of(verdict, "a Filter verdict")
        nodes = ", ".join(strings_of(group.get("nodes", []), "its nodes")) or f"{group.get('count')} nodes"
        out.append(
            Step(
                at,
                f"Filter: {group['plugin']} rejects {nodes}: {'; '.join(strings_of(group['reasons'], 'its reasons'))}",
                site=site_of(Algorithm.find_nodes_that_pass_filters),
                upstream=(cite("findNodesThatPassFilters"),),
            )
        )
    for row in _score_rows(attempt):
        parts = ", ".join(
            f"{plugin} {p['raw']}→{p['normalized']}*{p['weight']}={p['weighted']}"
            for plugin, p in _plugin_scores(row).items()
        )
        text = f"Score {row['node']}: {parts}; total {row['total']}"
        out.append(Step(at, text, site_of(Algorithm.prioritize), (cite("prioritizeNodes"),)))
    out.append(
        Step(
            at,
            f"sortedNodeScores gives {attempt.get('selectedNode')} of the best {attempt.get('topNodes')}",
            site=site_of(Algorithm.schedule_pod),
            upstream=(cite("sortedNodeScores"),),
        )
    )
    return out


def _score_rows(attempt: Mapping[str, object]) -> list[dict[str, object]]:
    """The attempt's score table, a row a node (none when nothing was scored)."""
    return [mapping_of(row, "a score row") for row in list_of(attempt.get("scores", []), "the scores")]


def _plugin_scores(row: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """A score row's plugins: each one's raw, normalized, weight and weighted scores."""
    return {
        plugin: mapping_of(p, "a plugin's scores") for plugin, p in mapping_of(row["plugins"], "its plugins").items()
    }


def _free_cpu(lab: LabCluster, nodes: Collection[str]) -> dict[str, int]:
    """Each node's allocatable CPU less the requests of the other pods bound to it, in millicores."""
    free = {
        n.metadata.name: milli_value(n.status.allocatable["cpu"])
        for n in lab.store.list(core_v1.Node).items
        if n.metadata.name in nodes
    }
    for pod in lab.store.list(core_v1.Pod).items:
        if pod.spec.nodeName in free and pod.metadata.name != POD:
            for c in pod.spec.containers:
                free[pod.spec.nodeName] -= milli_value(((c.resources and c.resources.requests) or {}).get("cpu", 0))
    return free


def run_detail(*, seed: int = 1, strategy: str = "LeastAllocated", weighted: bool = True) -> LabResult:
    """The same pod, one attempt in full. The claim is about the numbers: with LeastAllocated the
    emptiest feasible node wins, and each total is the sum of normalized score times weight. With
    `strategy` MostAllocated the fullest node wins instead, which makes the claim false; so does
    the common misreading that weights do not count (`weighted` False: totals as plain sums of
    normalized scores)."""
    lab = _cluster(seed, 3, strategy)
    _schedule(lab)
    document = explain_pod(lab.scheduler, f"default/{POD}")
    attempt = attempts_of(document)[-1]
    told = lab.told(POD, kinds={kind for kind, _ in TOUR} | {"cycle.failed"})
    cycle = [s for s in told if s.kind in ("cycle.start", "cycle.filtered", "cycle.scored")]
    rest = [s for s in told if s not in cycle and s.kind != "queue.move" and s.kind != "queue.pop"]
    narrated = cycle + _detail(attempt, since=lab.start) + rest
    rows = _score_rows(attempt)
    sums = {string_of(r["node"], "a scored node"): _total(r, weighted=weighted) for r in rows}
    totals = {string_of(r["node"], "a scored node"): int_of(r["total"], "its total") for r in rows}
    selected = attempt.get("selectedNode")
    host = selected if isinstance(selected, str) else None
    free = _free_cpu(lab, totals)
    emptiest = max(sorted(free), key=free.__getitem__) if free else None
    check = Check(
        claim="each node's total is Σ normalized score times weight, the host holds the best total, and with "
        "LeastAllocated the emptiest feasible node is the host",
        evidence={"totals": totals, "sums": sums, "host": host, "freeCpu": free, "emptiest": emptiest},
        passed=bool(rows)
        and sums == totals
        and host is not None
        and totals.get(host) == max(totals.values())
        and host == emptiest,
    )
    return LabResult(DETAIL_ID, DETAIL_TITLE, narrated, check)


def _total(row: Mapping[str, object], *, weighted: bool) -> int:
    """A score row's total, Σ normalized score times weight (`weighted` False: the plain sum)."""
    return sum(
        int_of(p["normalized"], "a normalized score") * (int_of(p["weight"], "a weight") if weighted else 1)
        for p in _plugin_scores(row).values()
    )
