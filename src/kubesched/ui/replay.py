"""A recorded run (its trace as JSON lines) replayed: the cluster, the queue and each pod's timeline
as they stood at any moment of it, in the same documents the live pages are drawn from."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from kubesched.api.quantity import int_value, milli_value
from kubesched.clock.base import rfc3339
from kubesched.queue.scheduling_queue import GATED, IN_FLIGHT, METRIC_QUEUE, UNSCHEDULABLE
from kubesched.trace import Record
from kubesched.ui.documents import Document, PodFilter, timeline_row

MOMENT_SLACK = 1e-6  # seconds
_WAITING_CHIP = {UNSCHEDULABLE: "Unschedulable", GATED: "SchedulingGated"}  # else Pending


class RecordingError(ValueError):
    """A file that is not a recorded trace: the message names the file and the line."""


@dataclass(slots=True)
class _Pod:
    key: str
    node: str | None = None
    phase: str = "Pending"
    chip: str = "Pending"
    scheduler: str = "default-scheduler"
    priority: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    nominated: str | None = None
    queue: str | None = None
    rejected_by: list[str] = field(default_factory=list)
    attempts: int = 0

    def summary(self) -> Document:
        namespace, _, name = self.key.partition("/")
        return {
            "key": self.key,
            "namespace": namespace,
            "name": name,
            "node": self.node,
            "nominatedNode": self.nominated,
            "phase": self.phase,
            "chip": self.chip,
            "scheduler": self.scheduler,
            "priority": self.priority,
            "requests": dict(self.requests),
            "labels": {},
        }

    def queue_entry(self) -> Document:
        """Its place in the queue, as the live queue page has it (what the trace does not keep empty)."""
        return {
            "key": self.key,
            "queue": self.queue,
            "attempts": self.attempts,
            "backoff_until": None,
            "rejected_by": self.rejected_by,
            "wake_on": [],
            "since": None,
        }


@dataclass(slots=True)
class _Node:
    name: str
    allocatable: dict[str, int] = field(default_factory=dict)
    cordoned: bool = False
    taints: list[dict[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class State:
    """The cluster as the records up to one moment leave it."""

    pods: dict[str, _Pod] = field(default_factory=dict)
    nodes: dict[str, _Node] = field(default_factory=dict)

    def apply(self, record: Record) -> None:
        kind, key, d = record.kind, record.pod, record.details
        if kind.startswith("store.node."):
            self._node(record)
            return
        if key is None:
            return
        if kind == "store.pod.added":
            self.pods[key] = _Pod(
                key,
                node=record.node,
                scheduler=d.get("scheduler", "default-scheduler"),
                priority=d.get("priority", 0),
                requests=dict(d.get("requests", {})),
            )
            return
        pod = self.pods.get(key)
        if pod is None:
            return
        if kind == "store.pod.deleted":
            del self.pods[key]
        elif kind == "store.pod.bound":
            pod.node, pod.queue, pod.nominated = record.node, None, None
            pod.chip = pod.phase
        elif kind == "store.pod.phase":
            pod.phase = d.get("phase") or pod.phase
            pod.chip = d.get("reason") or pod.phase
        elif kind == "store.pod.terminating":
            pod.chip = "Terminating"
        elif kind == "nomination.set":
            pod.nominated = record.node
        elif kind == "queue.move":
            pod.queue = d.get("to") if d.get("to") in METRIC_QUEUE else None
            pod.rejected_by = list(d.get("plugins", []))
            if not pod.node:
                pod.chip = _WAITING_CHIP.get(d.get("to", ""), "Pending")
        elif kind == "queue.pop":
            pod.queue, pod.attempts = IN_FLIGHT, d.get("attempts", pod.attempts + 1)

    def _node(self, record: Record) -> None:
        name = record.node
        if name is None:
            return
        if record.kind == "store.node.deleted":
            self.nodes.pop(name, None)
            return
        d = record.details
        allocatable = d.get("allocatable", {})
        self.nodes[name] = _Node(
            name,
            allocatable={
                "cpu": milli_value(allocatable.get("cpu", 0)),
                "memory": int_value(allocatable.get("memory", 0)),
                "pods": int_value(allocatable.get("pods", 0)),
            },
            cordoned=bool(d.get("cordoned", False)),
            taints=list(d.get("taints", [])),
        )


class Recording:
    """A run's trace records, in time order, with the documents of any moment of it."""

    def __init__(self, records: list[Record], *, name: str = "") -> None:
        self.records = sorted(records, key=lambda r: r.time)
        self.times = [r.time for r in self.records]
        self.name = name

    @classmethod
    def load(cls, path: Path) -> Recording:
        """The records of a JSON-lines trace file; RecordingError naming the line that is not one."""
        decoder = msgspec.json.Decoder(Record)
        records = []
        try:
            lines = path.read_bytes().splitlines()
        except OSError as e:
            raise RecordingError(f"{path}: {e.strerror}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                records.append(decoder.decode(line))
            except msgspec.DecodeError as e:
                raise RecordingError(f"{path}:{number}: not a trace record ({e})") from None
        if not records:
            raise RecordingError(f"{path}: no trace records")
        return cls(records, name=path.name)

    @property
    def start(self) -> float:
        return self.times[0]

    @property
    def end(self) -> float:
        return self.times[-1]

    def upto(self, at: float) -> list[Record]:
        """The records up to `at`, those within a microsecond after it included (moments travel as
        decimal text: a record's own time, written and read back, may come back a hair early)."""
        return self.records[: bisect.bisect_right(self.times, at + MOMENT_SLACK)]

    def state(self, at: float) -> State:
        state = State()
        for record in self.upto(at):
            state.apply(record)
        return state

    def document(self) -> Document:
        """What the replay's time slider needs: the span and the moments worth stopping at (a pod
        bound, deleted or nominated, a node added or gone, a preemption)."""
        marks = sorted(
            {
                r.time
                for r in self.records
                if r.kind
                in (
                    "store.pod.added",
                    "store.pod.bound",
                    "store.pod.deleted",
                    "store.pod.terminating",
                    "store.node.added",
                    "store.node.deleted",
                    "nomination.set",
                    "preemption.chosen",
                )
            }
        )
        return {"name": self.name, "start": self.start, "end": self.end, "marks": marks}

    def cluster(self, at: float, where: PodFilter) -> Document:
        """The cluster page's document at `at` (the shape the live page has)."""
        state = self.state(at)
        nodes = []
        placed: dict[str, list[_Pod]] = {}
        for pod in state.pods.values():
            if pod.node:
                placed.setdefault(pod.node, []).append(pod)
        admitted = {
            key for key, pod in state.pods.items() if where.admits_fields(key.partition("/")[0], pod.scheduler, None)
        }
        for name in sorted(state.nodes):
            node = state.nodes[name]
            mine = [p for p in placed.get(name, []) if p.phase not in ("Succeeded", "Failed")]
            nodes.append(
                {
                    "name": name,
                    "cordoned": node.cordoned,
                    "taints": list(node.taints),
                    "labels": {},
                    "allocatable": dict(node.allocatable) or {"cpu": 0, "memory": 0, "pods": 0},
                    "requested": {
                        "cpu": sum(p.requests.get("cpu", 0) for p in mine),
                        "memory": sum(p.requests.get("memory", 0) for p in mine),
                        "pods": len(mine),
                    },
                    "pods": sorted(p.key for p in placed.get(name, []) if p.key in admitted),
                }
            )
        pods = [state.pods[k] for k in sorted(admitted)]
        unscheduled = []
        for pod in pods:
            if not pod.node:
                entry = pod.summary()
                entry["queue"] = pod.queue
                unscheduled.append(entry)
        return {
            "version": 0,
            "at": at,
            "time": rfc3339(at),
            "nodes": nodes,
            "pods": [p.summary() for p in pods if p.node],
            "unscheduled": unscheduled,
            "pending": _pending(state),
        }

    def pod(self, key: str, at: float) -> Document | None:
        """A pod's page at `at`: its summary and its timeline so far; None when it does not exist then."""
        state = self.state(at)
        pod = state.pods.get(key)
        if pod is None:
            return None
        return {
            "pod": pod.summary(),
            "conditions": [],
            "queue": pod.queue_entry() if pod.queue is not None else None,
            "explain": {"pod": key, "attempts": []},
            "timeline": [timeline_row(r) for r in self.upto(at) if r.pod == key],
            "tracing": True,
        }

    def queue(self, at: float) -> Document:
        state = self.state(at)
        pods = [
            p.queue_entry()
            for p in sorted(state.pods.values(), key=lambda p: p.key)
            if p.queue is not None and not p.node
        ]
        return {"pending": _pending(state), "pods": pods, "now": rfc3339(at)}


@dataclass(slots=True)
class Replayed:
    """What the replay's pages show, changed while the server runs: a recording, or none yet (a
    sweep whose points are opened one at a time)."""

    recording: Recording | None = None


def _pending(state: State) -> dict[str, int]:
    """`scheduler_pending_pods`' counts, by the queue each waiting pod was last moved to."""
    counts = dict.fromkeys(METRIC_QUEUE.values(), 0)
    for pod in state.pods.values():
        if pod.queue in METRIC_QUEUE and not pod.node:
            counts[METRIC_QUEUE[pod.queue]] += 1
    return counts
