"""Trace records told as sentences: one voice for the drills, the labs and anything else that
narrates what the scheduler did."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from kubesched.trace.records import Record


def _move(d: Mapping[str, object], node: str | None) -> str:
    why = f" ({d['plugin']} hint: {d['hint']})" if d.get("plugin") else ""
    if d.get("hint_fn") is False:
        why = f" ({d['plugin']}: Queue, registered with no hint function)"
    until = f", backoff expiry in {d['wait']:g} s (truncated to its second)" if "wait" in d else ""
    return f"{d.get('from') or 'new'} → {d['to']} on {d['event']}{why}{until}"


def _outcome(what: str) -> Callable[[Mapping[str, object], str | None], str]:
    def told(d: Mapping[str, object], node: str | None) -> str:
        if d.get("code", "Success") == "Success":
            return f"{what} on {node}: Success"
        return f"{what} on {node}: {d['code']} from {d.get('plugin') or 'the framework'}: {d.get('message', '')}"

    return told


def _chosen(d: Mapping[str, object], node: str | None) -> str:
    candidates, victims = d["candidates"], d["victims"]
    if not isinstance(candidates, Mapping) or not isinstance(victims, Iterable):
        raise TypeError(f"preemption.chosen: candidates {candidates!r}, victims {victims!r}")
    others = ", ".join(
        f"{n}: {len(c['victims'])} victim(s), {c['pdb_violations']} PDB violation(s)" for n, c in candidates.items()
    )
    return f"preempts on {node}: victims {', '.join(victims)}; chosen by {d['reason']} among [{others}]"


SAY: dict[str, Callable[[Mapping[str, object], str | None], str]] = {
    "queue.move": _move,
    "queue.pop": lambda d, node: f"popped from {d.get('from', 'activeQ')} for attempt {d['attempts']}",
    "queue.stayed": lambda d, node: (
        f"stays in {d['in']} on {d['event']}"
        + (f" ({d['plugin']} hint: {d['hint']})" if d.get("plugin") else " (no rejecting plugin registered for it)")
    ),
    "cycle.start": lambda d, node: f"scheduling cycle {d['attempt']} begins (profile {d['profile']})",
    "cycle.filtered": lambda d, node: f"filtered: {d['feasible']} of {d['evaluated']} evaluated nodes fit",
    "cycle.scored": lambda d, node: f"scored {d['scored']} nodes: best total {d['best']}, {d['tied']} tied",
    "cycle.selected": lambda d, node: f"fits {node}",
    "cycle.failed": lambda d, node: f"FailedScheduling: {d['message']}",
    "cache.assumed": lambda d, node: f"assumed on {node} in the cache, before any API call",
    "cycle.reserved": _outcome("Reserve"),
    "cycle.permitted": _outcome("Permit"),
    "bind.started": lambda d, node: f"binding cycle started for {node}, off the scheduling thread",
    "bind.prebound": _outcome("PreBind"),
    "bind.done": lambda d, node: f"bound to {node}",
    "bind.failed": lambda d, node: f"binding to {node} failed: {d['message']}",
    "bind.postbound": lambda d, node: f"PostBind on {node}",
    "nomination.set": lambda d, node: f"status.nominatedNodeName = {node}: a claim on the node, not the node",
    "preemption.chosen": _chosen,
    "preemption.victim": lambda d, node: f"victim of {d['preemptor']}: DisruptionTarget condition, deleted gracefully",
    "kubelet.admitted": lambda d, node: f"the kubelet on {node} admitted it",
    "kubelet.restarted": lambda d, node: (
        f"the kubelet on {node} restarted and admits its {d['pods']} pods anew, oldest first"
    ),
    "kubelet.rejected": lambda d, node: f"the kubelet on {node} rejected it: {d['reason']}: {d['message']}",
    "kubelet.running": lambda d, node: f"running on {node}",
    "kubelet.killed": lambda d, node: f"the kubelet on {node} stopped it (grace {d['grace']} s)",
}


def say(record: Record) -> str:
    """`record` as one sentence; a kind with no sentence of its own is told by its details."""
    told = SAY.get(record.kind)
    if told is not None:
        return told(record.details, record.node)
    details = " ".join(f"{k}={v}" for k, v in record.details.items())
    return f"{record.kind}{' on ' + record.node if record.node else ''}{' ' + details if details else ''}"


@dataclass(frozen=True)
class Step:
    """One step of a story: seconds since it began, what happened, and the code that did it, in
    kubesched (`site`, `module:line`) and in kube-scheduler v1.36.2 (`upstream`); `pod` and `kind`
    when it is a trace record told."""

    time: float
    text: str
    site: str = ""
    upstream: tuple[str, ...] = ()
    pod: str = ""
    kind: str = ""


def step(record: Record, *, since: float) -> Step:
    """`record` told, at its time since `since`."""
    return Step(round(record.time - since, 3), say(record), record.site, record.upstream, record.pod or "", record.kind)


def steps(
    records: Iterable[Record],
    *,
    since: float,
    kinds: Collection[str] | None = None,
    pods: Collection[str] | None = None,
) -> list[Step]:
    """The records (of `kinds`, about `pods`, where given) from `since` on, told."""
    return [
        step(r, since=since)
        for r in records
        if r.time >= since and (kinds is None or r.kind in kinds) and (pods is None or r.pod in pods)
    ]
