"""A pod's scheduling attempts explained from the result store: the JSON that `/debug/pods/{ns}/{name}`
answers and `kubesched explain` prints — the records, why the host beat the runner-up, and for a
pod that fits nowhere how far each node is from fitting."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.api.quantity import format_bytes, format_milli_cpu
from kubesched.cache import NodeInfo, PodInfo
from kubesched.scheduler.results import AttemptRecord, NodeScores

if TYPE_CHECKING:
    from kubesched.scheduler.scheduler import Scheduler

RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods")


def deciding_plugins(scores: Sequence[NodeScores], host: str) -> dict[str, object] | None:
    """Why `host` beat the runner-up: each plugin's weighted difference, largest first (the plugins
    with a positive difference decided it)."""
    ranked = sorted(scores, key=lambda s: -s["total"])
    mine = next((s for s in ranked if s["node"] == host), None)
    others = [s for s in ranked if s["node"] != host]
    if mine is None or not others:
        return None
    runner_up = others[0]
    differences = {
        plugin: mine["plugins"][plugin]["weighted"] - runner_up["plugins"][plugin]["weighted"]
        for plugin in mine["plugins"]
    }
    order = sorted(differences.items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "runnerUp": runner_up["node"],
        "margin": mine["total"] - runner_up["total"],
        "differences": dict(order),
        "decidedBy": [plugin for plugin, difference in order if difference > 0],
    }


def shortfalls(pod: PodInfo, nodes: Iterable[NodeInfo], *, limit: int = 5) -> list[dict[str, object]]:
    """The nodes closest to fitting `pod`'s requests, each with what it lacks now (cpu, memory,
    ephemeral storage, pod slots), ordered by the largest missing share of a node."""
    out = []
    for node in nodes:
        lacks: dict[str, str] = {}
        worst = 0.0
        for name in RESOURCES:
            want = 1 if name == "pods" else pod.requests.get(name)
            if want <= 0:
                continue
            free = node.allocatable.get(name) - (len(node.pods) if name == "pods" else node.requested.get(name))
            if want > free:
                missing = want - max(free, 0)
                lacks[name] = _amount(name, missing)
                worst = max(worst, missing / max(node.allocatable.get(name), 1))
        if lacks:
            out.append((worst, node.name, lacks))
    out.sort(key=lambda t: (t[0], t[1]))
    return [{"node": name, "short": lacks} for _, name, lacks in out[:limit]]


def _amount(name: str, value: int) -> str:
    if name == "cpu":
        return format_milli_cpu(value)
    return str(value) if name == "pods" else format_bytes(value)


def explanation(
    pod: str, records: Sequence[AttemptRecord], *, pod_info: PodInfo | None, nodes: Iterable[NodeInfo]
) -> dict[str, object]:
    """Every kept attempt of `pod`, the last one explained."""
    attempts = [r.to_json() for r in records]
    out: dict[str, object] = {"pod": pod, "attempts": attempts}
    if not attempts:
        return out
    last, record = attempts[-1], records[-1]
    if record.scores is not None and record.selected:  # the attempt's "scores" and "selectedNode"
        decided = deciding_plugins(record.scores.to_json(), record.selected)
        if decided is not None:
            last["decision"] = decided
    if record.result == "unschedulable" and pod_info is not None:
        last["closestToFitting"] = shortfalls(pod_info, nodes)
    return out


# Any: a JSON document its callers read by key
def explain_pod(scheduler: Scheduler, key: str) -> dict[str, Any]:
    """`explanation` of the pod `key` (namespace/name) from `scheduler`'s result store and cache."""
    records = scheduler.results.attempts(key) if scheduler.results is not None else ()
    pending = scheduler.informers.unscheduled(records[-1].uid) if records else None
    pod_info = PodInfo(pending) if pending is not None else None
    return explanation(key, records, pod_info=pod_info, nodes=scheduler.cache.nodes.values())
