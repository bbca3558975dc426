"""Run a golden case through one scheduling cycle and report it in the corpus's expected format."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from kubesched.api.objects import Served, present
from kubesched.cache import NodeInfo, PodInfo
from kubesched.clock import VirtualClock
from kubesched.config import SchedulerConfig, load_data
from kubesched.config.defaults import NOT_YET_IMPLEMENTED
from kubesched.framework import Framework, preemption
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.golden.formats import CaseResult, NodeResult, StatusResult, TableRow
from kubesched.golden.loader import EPOCH, Case, load_case
from kubesched.queue import QueuedPodInfo
from kubesched.scheduler import Scheduler
from kubesched.scheduler.algorithm import Algorithm, ScheduleResult, SchedulingError
from kubesched.scheduler.fit_error import FitError, num_feasible_nodes_to_find
from kubesched.scheduler.results import AttemptRecord
from kubesched.storage import MemoryCluster, MemoryStore

TABLE_PREFIX = "num-feasible-nodes-to-find-table"


def _status(status: Status | None, stage: str | None = None) -> StatusResult:
    out: StatusResult = {"code": str(status.code if status else Code.SUCCESS)}
    if status is not None and status.reasons:
        out["reasons"] = list(status.reasons)
    if status is not None and status.plugin:
        out["plugin"] = status.plugin
    if stage:
        out["stage"] = stage
    return out


def run_table(case: Case) -> CaseResult:
    data = case.data
    rows: list[TableRow] = [
        {
            "percentageOfNodesToScore": pct,
            "numAllNodes": n,
            "numFeasibleNodesToFind": num_feasible_nodes_to_find(pct, n),
        }
        for pct in data["percentages"]
        for n in data["nodeCounts"]
    ]
    return {"name": case.name, "category": data.get("category"), "description": data.get("description"), "rows": rows}


def _config(case: Case, registry: Registry) -> SchedulerConfig:
    raw = dict(case.data.get("schedulerConfig") or {})
    raw.setdefault("apiVersion", "kubescheduler.config.k8s.io/v1")
    raw.setdefault("kind", "KubeSchedulerConfiguration")
    if "percentageOfNodesToScore" in case.data:
        raw["percentageOfNodesToScore"] = case.data["percentageOfNodesToScore"]
    return load_data(raw, registry)


def run_case(directory: Path, name: str, registry: Registry) -> CaseResult:
    """The case's actual outcome, in the shape of its `.expected.json`."""
    case = load_case(directory, name)
    if name.startswith(TABLE_PREFIX):
        return run_table(case)
    clock = VirtualClock(start=EPOCH.timestamp() + 3600)
    try:
        return clock.run(_run(case, clock, registry))
    finally:
        clock.close()


async def _popped(case: Case, clock: VirtualClock, registry: Registry) -> tuple[Scheduler, QueuedPodInfo]:
    """A scheduler over the case's cluster, and the case's pod as its queue hands it out."""
    store = MemoryStore(clock=clock, watch_latency=0.0)
    pod = present(case.pod, "the case's pod")
    objects: list[Served] = [*case.namespaces, *case.priority_classes, *case.nodes, *case.pdbs, *case.pods, pod]
    for obj in objects:
        store.restore(obj)
    config = _config(case, registry)
    scheduler = Scheduler(MemoryCluster(store), clock, config, registry, seed=0, identity="golden")
    await scheduler.start()
    qpi = await scheduler.queue.pop()
    assert qpi is not None
    return scheduler, qpi


def live_record(directory: Path, name: str, registry: Registry) -> AttemptRecord | None:
    """The result store's record of the case's pod going through the scheduler's own scheduling
    cycle (the second route to what `run_case` computes)."""
    case = load_case(directory, name)
    clock = VirtualClock(start=EPOCH.timestamp() + 3600)

    async def cycle() -> AttemptRecord | None:
        scheduler, qpi = await _popped(case, clock, registry)
        fwk = scheduler.profiles[qpi.pod_info.pod.spec.schedulerName]
        scheduler.scheduling_cycle(fwk, CycleState(), qpi)
        assert scheduler.results is not None
        attempts = scheduler.results.attempts(qpi.pod_info.key)
        return attempts[-1] if attempts else None

    try:
        return clock.run(cycle())
    finally:
        clock.close()


async def _run(case: Case, clock: VirtualClock, registry: Registry) -> CaseResult:
    scheduler, qpi = await _popped(case, clock, registry)
    pod = qpi.pod_info
    profile = pod.pod.spec.schedulerName
    fwk = scheduler.profiles[profile]
    scheduler.cache.update_snapshot(scheduler.snapshot)
    nodes = scheduler.snapshot.node_info_list
    out: CaseResult = {
        "name": case.name,
        "category": case.data.get("category"),
        "description": case.data.get("description"),
        "profile": profile,
        "config": "schedulerConfig" if case.data.get("schedulerConfig") else "default",
        "percentageOfNodesToScore": scheduler.algorithm.percentage_for(fwk),
        "scoreWeights": dict(sorted(fwk.score_weights().items())),
        "numAllNodes": len(nodes),
    }
    out["nodes"] = _verdicts(out, scheduler, fwk, pod, nodes)
    state = CycleState()
    try:
        result = scheduler.find_host(fwk, state, pod)
    except FitError as fit:
        _failure(out, fit.message(), fit.diagnosis.post_filter_msg, fit)
        _preemption(out, preemption.decision(state))
        return out
    except SchedulingError as e:
        _failure(out, e.status.message, "", None, code=str(e.status.code))
        return out
    _success(out, result, scheduler, fwk, state, pod)
    return out


def _verdicts(
    out: CaseResult, scheduler: Scheduler, fwk: Framework, pod: PodInfo, nodes: Sequence[NodeInfo]
) -> list[NodeResult]:
    """Every node's verdict, from a PreFilter of its own (the real attempt follows it); what the
    PreFilter says goes into `out`."""
    probe = CycleState()
    pre_result, pre_status, narrowing = fwk.run_pre_filter(probe, pod, nodes) if nodes else (None, None, [])
    entries: list[NodeResult] = []
    if nodes:
        out["preFilter"] = _status(pre_status if pre_status is None or pre_status.code != Code.SUCCESS else None)
    rejected = pre_status is not None and pre_status.code != Code.SUCCESS
    wanted = pre_result.node_names if pre_result is not None and not pre_result.all_nodes() else None
    if nodes and not rejected:
        candidates = [n for n in nodes if wanted is None or n.name in wanted]
        out["numNodesAfterPreFilter"] = len(candidates)
        out["numFeasibleNodesToFind"] = num_feasible_nodes_to_find(
            scheduler.algorithm.percentage_for(fwk), len(candidates)
        )
        if wanted is not None:
            out["preFilterResultNodes"] = sorted(wanted)
    for index, node in enumerate(nodes):
        if rejected:
            verdict = _status(pre_status, "PreFilter")
        elif wanted is not None and node.name not in wanted:
            absent = Status.unresolvable(f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}]")
            verdict = _status(absent, "PreFilterResult")
        else:
            verdict = _status(fwk.run_filter(probe, pod, node), "Filter")
        entries.append(
            {
                "name": node.name,
                "snapshotIndex": index,
                "filter": verdict,
                "feasible": verdict["code"] == "Success",
                "scored": False,
            }
        )
    return entries


def _preemption(out: CaseResult, decision: preemption.Decision | None) -> None:
    """The nominated node and victims of a successful preemption, and the event each victim would get."""
    if decision is None:
        return
    node, victims = decision.candidate.node, decision.candidate.victims
    out["preemption"] = {"nominatedNodeName": node, "victims": sorted(v.key for v in victims)}
    note = preemption.preempted_message(decision.preemptor, node)
    out["events"] = sorted([*out["events"], *(f"Normal Preempted {note}" for _ in victims)])


def _success(
    out: CaseResult, result: ScheduleResult, scheduler: Scheduler, fwk: Framework, state: CycleState, pod: PodInfo
) -> None:
    scoring_run = len(result.scored) > 1
    if not scoring_run:
        result.totals, result.plugin_scores = Algorithm.prioritize(fwk, state, pod, result.scored)
    totals = result.totals.tolist()
    by_name = {e["name"]: e for e in out["nodes"]}
    skipped = sorted(n for n in state.skip_score_plugins if n in fwk.score_weights())
    for i, node in enumerate(result.scored):
        entry = by_name[node.name]
        entry["scored"] = True
        entry["scores"] = {
            s.plugin: {
                "raw": s.raw[i],
                "normalized": s.normalized[i],
                "weight": s.weight,
                "weighted": s.normalized[i] * s.weight,
            }
            for s in result.plugin_scores
        }
        entry["totalScore"] = totals[i] if totals else 0
    out["skippedScorePlugins"] = skipped
    if not scoring_run:
        out["scoringRunByScheduler"] = False
    best = max(totals) if totals else 0
    top = sorted(n.name for n, t in zip(result.scored, totals, strict=True) if t == best)
    out["topNodes"] = top
    if len(top) == 1:
        out["selectedNode"] = top[0]
    out["schedulable"] = True
    out["evaluatedNodes"] = result.evaluated_nodes
    out["feasibleNodes"] = result.feasible_nodes


def _failure(out: CaseResult, message: str, post: str, fit: FitError | None, code: str = "Unschedulable") -> None:
    out["schedulable"] = False
    out["failureCode"] = code
    out["message"] = message
    if post:
        out["postFilterMessage"] = post
    if fit is not None:
        d = fit.diagnosis
        if d.unschedulable_plugins:
            out["unschedulablePlugins"] = sorted(d.unschedulable_plugins)
        if d.pending_plugins:
            out["pendingPlugins"] = sorted(d.pending_plugins)
    out["events"] = [f"Warning FailedScheduling {message}"]


def compare(expected: CaseResult, actual: CaseResult) -> list[str]:
    """The differences that count (see the corpus README §2.2), first the most telling."""
    diffs: list[str] = []

    def check(label: str, want: object, got: object) -> None:
        if want != got:
            diffs.append(f"{label}: expected {want!r}, got {got!r}")

    if "rows" in expected:
        check("rows", expected["rows"], actual.get("rows"))
        return diffs
    ours = set(actual.get("scoreWeights", {}))
    for plugin, weight in expected.get("scoreWeights", {}).items():
        if plugin in ours:
            check(f"scoreWeights[{plugin}]", weight, actual["scoreWeights"][plugin])
        elif plugin not in NOT_YET_IMPLEMENTED:
            diffs.append(f"scoreWeights: {plugin} missing")
    for key in (
        "numAllNodes",
        "preFilter",
        "numNodesAfterPreFilter",
        "numFeasibleNodesToFind",
        "preFilterResultNodes",
        "schedulable",
        "evaluatedNodes",
        "feasibleNodes",
        "failureCode",
        "unschedulablePlugins",
        "pendingPlugins",
    ):
        check(key, expected.get(key), actual.get(key))
    got_nodes = {n["name"]: n for n in actual.get("nodes", [])}
    for want in expected.get("nodes", []):
        got = got_nodes.get(want["name"], {})
        name = want["name"]
        check(f"nodes[{name}].snapshotIndex", want["snapshotIndex"], got.get("snapshotIndex"))
        check(f"nodes[{name}].filter", want["filter"], got.get("filter"))
        check(f"nodes[{name}].scored", want["scored"], got.get("scored"))
        complete = True
        for plugin, score in want.get("scores", {}).items():
            if plugin not in ours:
                complete = complete and plugin in NOT_YET_IMPLEMENTED and score["weighted"] == 0
                continue
            check(f"nodes[{name}].scores[{plugin}]", score, got.get("scores", {}).get(plugin))
        if complete and "totalScore" in want:
            check(f"nodes[{name}].totalScore", want["totalScore"], got.get("totalScore"))
    if "topNodes" in expected:
        check("topNodes", expected["topNodes"], actual.get("topNodes"))
    check(
        "skippedScorePlugins",
        [p for p in expected.get("skippedScorePlugins", []) if p in ours] or None,
        actual.get("skippedScorePlugins") or None,
    )
    check("preemption", expected.get("preemption"), actual.get("preemption"))
    check("message", expected.get("message"), actual.get("message"))
    check("postFilterMessage", expected.get("postFilterMessage"), actual.get("postFilterMessage"))
    check("events", sorted(expected.get("events", [])), sorted(actual.get("events", [])))
    return diffs


def load_pending(path: Path) -> dict[str, str]:
    """`case-name  reason` lines (blank lines and # comments ignored)."""
    pending: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, reason = line.partition(" ")
            pending[name] = reason.strip()
    return pending


def encode(data: object) -> bytes:
    return msgspec.json.format(msgspec.json.encode(data), indent=2)
