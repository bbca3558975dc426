"""The cluster as one scheduler's informers see it, kept for the UI: every pod and node by name,
each pod's timeline of trace records, and a log of what changed that the live stream reads."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lightkube.models import core_v1

from kubesched.trace import Record

if TYPE_CHECKING:
    from kubesched.scheduler.scheduler import Scheduler

POD = "pod"
NODE = "node"
QUEUE = "queue"
TIMELINE_LENGTH = 200  # trace records kept per pod
TIMELINE_RECORDS = 250_000  # trace records kept in all: past them the pods least recently recorded lose theirs
LOG_LENGTH = 100_000  # changes a stream may fall behind by before it is told to start over


@dataclass(frozen=True, slots=True)
class Change:
    """Something the UI shows changed: a pod or node (by key), or the queue."""

    version: int
    what: str  # POD, NODE or QUEUE
    key: str


# Any: a pod as the informers deliver it, its metadata set: read on their path without a check
def pod_key(pod: Any) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def _node_of(pod: core_v1.Pod | None) -> str | None:
    spec = pod.spec if pod is not None else None
    return spec.nodeName if spec is not None else None


class Mirror:
    """Every pod and node the scheduler's informers have seen, kept up to date as they see them,
    and every change numbered in a bounded log. Pod timelines come from the scheduler's trace,
    recorded from the first time someone asks for one (`follow_trace`): tracing costs nothing until
    the UI is opened."""

    def __init__(self, scheduler: Scheduler, *, log_length: int = LOG_LENGTH) -> None:
        self.scheduler = scheduler
        self.pods: dict[str, core_v1.Pod] = {}  # namespace/name -> the latest pod
        self.nodes: dict[str, core_v1.Node] = {}  # name -> the latest node
        self.on_node: dict[str, set[str]] = {}  # node name -> keys of the pods bound to it
        self.timelines: dict[str, deque[Record]] = {}  # least recently recorded first
        self.recorded = 0  # records in all the timelines
        self.version = 0
        self.log: deque[Change] = deque(maxlen=log_length)
        self.tracing = False
        scheduler.informers.observers.append(self._seen)

    def follow_trace(self) -> None:
        """Keep each pod's trace records from now on (turns the scheduler's tracing on)."""
        if not self.tracing:
            self.tracing = True
            self.scheduler.trace.add_sink(self)

    def write(self, record: Record) -> None:
        """A trace record (the mirror is a trace sink): kept in its pod's timeline; a queue move
        changes the queue."""
        if record.pod is None:
            return
        timeline = self.timelines.pop(record.pod, None)  # put back last: the most recently recorded
        if timeline is None:  # (the queue hears of a new pod before the mirror does)
            timeline = deque(maxlen=TIMELINE_LENGTH)
        self.timelines[record.pod] = timeline
        self.recorded += len(timeline) < TIMELINE_LENGTH
        timeline.append(record)
        while self.recorded > TIMELINE_RECORDS and len(self.timelines) > 1:
            self.recorded -= len(self.timelines.pop(next(iter(self.timelines))))
        self._changed(POD, record.pod)
        if record.kind.startswith("queue."):
            self._changed(QUEUE, record.pod)

    # Any: a Pod or a Node as the informers deliver it, told apart by its kind
    def _seen(self, obj: Any, deleted: bool) -> None:
        if obj.kind == "Node":
            name = obj.metadata.name
            if deleted:
                self.nodes.pop(name, None)
            else:
                self.nodes[name] = obj
            self._changed(NODE, name)
            return
        key = pod_key(obj)
        old = self.pods.pop(key, None)
        before = _node_of(old)
        if before:
            self._unplace(before, key)
        if deleted:
            self.recorded -= len(self.timelines.pop(key, ()))
        else:
            self.pods[key] = obj
            if obj.spec.nodeName:
                self.on_node.setdefault(obj.spec.nodeName, set()).add(key)
        self._changed(POD, key)
        now = None if deleted else obj.spec.nodeName
        if not before or not now:  # a pod waiting for a node, or no longer: the queue may have moved it
            self._changed(QUEUE, key)
        if before != now:  # what the node holds changed
            for name in (before, now):
                if name:
                    self._changed(NODE, name)

    def _unplace(self, node: str, key: str) -> None:
        keys = self.on_node.get(node)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self.on_node[node]

    def _changed(self, what: str, key: str) -> None:
        self.version += 1
        self.log.append(Change(self.version, what, key))

    def changes_since(self, version: int) -> list[Change] | None:
        """The changes after `version`, oldest first; None when the log no longer reaches back that
        far (the reader must start over from a whole document)."""
        if version >= self.version:
            return []
        if not self.log or self.log[0].version > version + 1:
            return None
        newer: list[Change] = []
        for change in reversed(self.log):
            if change.version <= version:
                break
            newer.append(change)
        newer.reverse()
        return newer
