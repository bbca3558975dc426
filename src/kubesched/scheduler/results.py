"""What every scheduling attempt saw and decided, kept beside the scheduler (not in the pods, so
nothing limits a pod's share): the search's numbers, each node's Filter verdict, each scored node's
per-plugin scores, the host and the tie at the top, the later points' outcomes, and PostFilter's
candidates. Arrays as the batch path makes them; the store holds a memory budget and a per-pod
count, dropping the oldest attempts first and counting what it drops."""

from __future__ import annotations

import itertools
from collections import OrderedDict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from kubesched.cache import NodeInfo, PodInfo
from kubesched.cache.table import RowNodes
from kubesched.framework.preemption import Decision, importance
from kubesched.framework.runtime import PluginScores
from kubesched.framework.status import Status
from kubesched.scheduler.algorithm import ScheduleResult, Search
from kubesched.scheduler.fit_error import Diagnosis

DEFAULT_BUDGET = 16 * 2**20  # bytes of attempt records a scheduler keeps
DEFAULT_PER_POD = 8  # attempts kept per pod
_BASE = 600  # what a record costs beyond its arrays and tuples (the object, its small fields)
_REF = 8  # a tuple slot: names are the nodes' own strings, shared, not copied

Ints = npt.NDArray[np.int64]


class PluginScore(TypedDict):
    """One plugin's score of one node: raw, after NormalizeScore, its weight and the weighted score."""

    raw: int
    normalized: int
    weight: int
    weighted: int


class NodeScores(TypedDict):
    """One scored node: each plugin's score and the total."""

    node: str
    plugins: dict[str, PluginScore]
    total: int


def verdict(status: Status | None) -> dict[str, object]:
    """A status as the records render it: code, plugin, reasons."""
    if status is None:
        return {"code": "Success"}
    out: dict[str, object] = {"code": str(status.code), "reasons": list(status.reasons)}
    if status.plugin:
        out["plugin"] = status.plugin
    return out


@dataclass(slots=True)
class Scores:
    """The Score phase over the scored nodes, as the algorithm left it (nothing copied): the scored
    nodes, each plugin's raw and normalized arrays and weight, the totals."""

    scored: Sequence[NodeInfo]
    parts: Sequence[PluginScores]
    totals: Ints

    @property
    def nbytes(self) -> int:
        """Per node: a reference, a total, and a raw and a normalized score per plugin."""
        return len(self.scored) * (2 * _REF + 16 * len(self.parts))

    def names(self) -> tuple[str, ...]:
        scored = self.scored
        return scored.names() if isinstance(scored, RowNodes) else tuple(n.name for n in scored)

    def to_json(self) -> list[NodeScores]:
        out: list[NodeScores] = []
        parts = self.parts
        raws = [p.raw.tolist() for p in parts]
        normalized = [p.normalized.tolist() for p in parts]
        totals = self.totals.tolist()
        for j, node in enumerate(self.names()):
            plugins: dict[str, PluginScore] = {
                p.plugin: {
                    "raw": raws[i][j],
                    "normalized": normalized[i][j],
                    "weight": p.weight,
                    "weighted": normalized[i][j] * p.weight,
                }
                for i, p in enumerate(parts)
            }
            out.append({"node": node, "plugins": plugins, "total": totals[j]})
        return out


@dataclass(slots=True)
class Preemption:
    """PostFilter's candidates (node, victims, PDB violations), the chosen one and why."""

    candidates: tuple[tuple[str, tuple[str, ...], int], ...]
    chosen: str
    victims: tuple[str, ...]
    reason: str
    reprieved: tuple[str, ...] = ()  # lower-priority pods on the chosen node that could stay

    def to_json(self) -> dict[str, object]:
        return {
            "candidates": [{"node": n, "victims": list(v), "pdbViolations": p} for n, v, p in self.candidates],
            "nominatedNode": self.chosen,
            "victims": list(self.victims),
            "reprieved": list(self.reprieved),
            "reason": self.reason,
        }


@dataclass(slots=True)
class AttemptRecord:
    """One scheduling attempt. Filter verdicts are kept for the nodes that failed (feasible nodes
    passed); nodes the search never reached, or that PreFilter's result ruled out, share `absent`."""

    pod: str
    uid: str
    attempt: int
    time: float
    profile: str
    all_nodes: int
    to_find: int
    start: int
    evaluated: int
    feasible: int
    candidates: int  # the nodes PreFilter left to Filter (the rest share `absent`)
    failed: tuple[str, ...] = ()
    failed_status: Ints = field(default_factory=lambda: np.zeros(0, np.int64))  # index into `statuses`
    statuses: tuple[Status, ...] = ()
    absent: Status | None = None
    pre_filter: Status | None = None
    scores: Scores | None = None
    skipped: tuple[str, ...] = ()
    selected: str = ""
    top_indices: Ints | None = None  # into the scored nodes: those sharing the best total
    result: str = ""  # scheduled, unschedulable or error
    message: str = ""  # the FailedScheduling message
    outcomes: dict[str, dict[str, object]] = field(default_factory=dict)  # Reserve, Permit, PreBind, Bind
    preemption: Preemption | None = None
    nominated: str = ""  # the nominated node that passed Filter: the only node evaluated

    @property
    def nbytes(self) -> int:
        scores = self.scores.nbytes if self.scores is not None else 0
        top = self.top_indices.nbytes if self.top_indices is not None else 0
        return _BASE + scores + top + self.failed_status.nbytes + _REF * (len(self.failed) + len(self.statuses))

    @property
    def top(self) -> tuple[str, ...]:
        """The nodes tied at the best total (the host is one of them)."""
        if self.scores is None or self.top_indices is None:
            return (self.selected,) if self.selected else ()
        names = self.scores.names()
        return tuple(names[i] for i in self.top_indices.tolist())

    def finish(self, point: str, status: Status | None) -> None:
        """The outcome of a point after the search (Reserve, Permit, PreBind, Bind)."""
        self.outcomes[point] = verdict(status)

    def filter_groups(self) -> list[dict[str, object]]:
        """The failed nodes grouped by verdict (plugin and reasons), the largest group first."""
        groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        statuses = self.statuses
        for node, index in zip(self.failed, self.failed_status.tolist(), strict=True):
            status = statuses[index]
            groups.setdefault((status.plugin, tuple(status.reasons)), []).append(node)
        sized: list[tuple[int, dict[str, object]]] = [
            (len(n), {"plugin": p, "reasons": list(r), "nodes": sorted(n)}) for (p, r), n in groups.items()
        ]
        absent = self.all_nodes - self.candidates
        if self.absent is not None and absent > 0:
            sized.append(
                (absent, {"plugin": self.absent.plugin, "reasons": list(self.absent.reasons), "count": absent})
            )
        return [group for _, group in sorted(sized, key=lambda t: -t[0])]

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "pod": self.pod,
            "attempt": self.attempt,
            "time": self.time,
            "profile": self.profile,
            "result": self.result,
            "numAllNodes": self.all_nodes,
            "numFeasibleNodesToFind": self.to_find,
            "startIndex": self.start,
            "evaluatedNodes": self.evaluated,
            "nodesAfterPreFilter": self.candidates,
            "feasibleNodes": self.feasible,
            "filter": self.filter_groups(),
        }
        if self.nominated:
            out["nominatedNodeFirst"] = self.nominated
        if self.pre_filter is not None:
            out["preFilter"] = verdict(self.pre_filter)
        if self.scores is not None:
            out["scores"] = self.scores.to_json()
        if self.skipped:
            out["skippedScorePlugins"] = list(self.skipped)
        if self.selected:
            out["selectedNode"] = self.selected
            out["topNodes"] = list(self.top)
        if self.message:
            out["message"] = self.message
        if self.outcomes:
            out["outcomes"] = dict(self.outcomes)
        if self.preemption is not None:
            out["preemption"] = self.preemption.to_json()
        return out


class ResultStore:
    """Attempt records within `budget` bytes and `per_pod` attempts a pod, oldest dropped first."""

    def __init__(self, *, budget: int = DEFAULT_BUDGET, per_pod: int = DEFAULT_PER_POD) -> None:
        if budget <= 0 or per_pod <= 0:
            raise ValueError(f"a result store needs a budget and a per-pod count above zero (got {budget}, {per_pod})")
        self.budget = budget
        self.per_pod = per_pod
        self.bytes = 0
        self.dropped = 0  # records dropped to stay within the budget or the per-pod count
        self._order: OrderedDict[int, AttemptRecord] = OrderedDict()  # every kept record, oldest first
        self._by_pod: dict[str, deque[int]] = {}  # each pod's records, oldest first, as keys of `_order`
        self._seq = itertools.count()

    def add(self, record: AttemptRecord) -> None:
        key = next(self._seq)
        self._order[key] = record
        mine = self._by_pod.setdefault(record.pod, deque())
        mine.append(key)
        self.bytes += record.nbytes
        if len(mine) > self.per_pod:
            self._drop(mine.popleft())
        while self.bytes > self.budget and self._order:
            oldest = next(iter(self._order))
            self._by_pod[self._order[oldest].pod].popleft()  # the oldest of all is its pod's oldest
            self._drop(oldest)

    def _drop(self, key: int) -> None:
        record = self._order.pop(key)
        self.bytes -= record.nbytes
        self.dropped += 1
        if not self._by_pod[record.pod]:
            del self._by_pod[record.pod]

    def attempts(self, pod: str) -> Sequence[AttemptRecord]:
        """A pod's kept attempts (namespace/name), oldest first."""
        return tuple(self._order[key] for key in self._by_pod.get(pod, ()))

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[AttemptRecord]:
        return iter(self._order.values())


def failed_nodes(diagnosis: Diagnosis) -> tuple[tuple[str, ...], Ints, tuple[Status, ...]]:
    """The nodes that failed Filter, the index of each one's status, and the distinct statuses."""
    statuses = diagnosis.node_to_status.statuses
    if not statuses:
        return (), np.zeros(0, np.int64), ()
    distinct = tuple(entry[0] for entry in diagnosis.tally.values() if entry[1] > 0)
    if len(distinct) == 1:  # every failed node has the one status (the tally counts each node's)
        return tuple(statuses), np.zeros(len(statuses), np.int64), distinct
    index = {id(s): i for i, s in enumerate(distinct)}
    which = np.fromiter((index[id(s)] for s in statuses.values()), dtype=np.int64, count=len(statuses))
    return tuple(statuses), which, distinct


def attempt_record(
    *,
    pod: PodInfo,
    attempt: int,
    time: float,
    profile: str,
    all_nodes: int,
    search: Search,
    diagnosis: Diagnosis | None,
    result: ScheduleResult | None,
    outcome: str,
    message: str = "",
    skipped: Sequence[str] = (),
) -> AttemptRecord:
    """The record of one search (`outcome`: scheduled, unschedulable or error), from what the
    algorithm left: `result` when a host was found, else the diagnosis and `message`."""
    record = AttemptRecord(
        pod.key,
        pod.uid,
        attempt,
        time,
        profile,
        all_nodes,
        search.to_find,
        search.start,
        result.evaluated_nodes if result is not None else len(diagnosis.node_to_status) if diagnosis else 0,
        result.feasible_nodes if result is not None else 0,
        search.candidates,
        result=outcome,
        message=message,
        nominated=search.nominated,
    )
    if diagnosis is not None:
        record.failed, record.failed_status, record.statuses = failed_nodes(diagnosis)
        absent = diagnosis.node_to_status.absent
        if absent.reasons:  # PreFilter rejected the pod, or its result left some nodes out
            record.absent = absent
        if diagnosis.pre_filter_msg:
            record.pre_filter = absent
    if result is not None:
        record.selected = result.host
        record.skipped = tuple(skipped)
        if result.plugin_scores:
            record.scores = Scores(result.scored, result.plugin_scores, result.totals)
            record.top_indices = result.top_indices
    return record


def preemption_of(decision: Decision, node: NodeInfo | None = None, *, now: float = 0.0) -> Preemption:
    """The record of a preemption; with the chosen `node` as the attempt saw it, the lower-priority
    pods there that were put back and stayed (the reprieved), most important first."""
    victims = tuple(v.key for v in decision.candidate.victims)
    reprieved: tuple[str, ...] = ()
    if node is not None:
        below = [p for p in node.pods if p.priority < decision.preemptor.priority and p.key not in victims]
        reprieved = tuple(p.key for p in sorted(below, key=importance(now)))
    return Preemption(
        tuple((c.node, tuple(v.key for v in c.victims), c.num_pdb_violations) for c in decision.considered),
        decision.candidate.node,
        victims,
        decision.reason,
        reprieved,
    )
