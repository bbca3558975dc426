"""Replaying a recording on virtual time under a scheduler configuration, and what came of it.

The recording's initial objects are restored as they were (bound pods stay where they are, pending
ones wait for the scheduler). Then each change is applied at its time (divided by `speed`):
objects of every kind but Pod as recorded; a pod's creation as a new pending pod (its recorded
node, status and creation time dropped; a pod created already bound keeps its node); a pod's
deletion as a deletion; a pod reaching Succeeded or Failed as that phase. What the recorded
scheduler and kubelets did is not applied: the replayed scheduler decides, fake kubelets serve
every node. A pod whose scheduler is no profile of the configuration is bound where and when the
recording says. After the last change the cluster runs `settle` more seconds.

The outcome of a run, recorded or replayed, is per pod (by uid): the node it got, when it was
created and bound, whether it was preempted.
"""

from __future__ import annotations

import contextlib
import copy
import json
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import msgspec
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.objects import meta_of, present
from kubesched.clock import VirtualClock
from kubesched.cluster import ADDED, DELETED, MODIFIED, NotFound
from kubesched.cluster.errors import ApiError
from kubesched.config import SchedulerConfig
from kubesched.framework.preemption import PREEMPTION_BY_SCHEDULER, preempted
from kubesched.framework.registry import Registry
from kubesched.scheduler import Scheduler
from kubesched.sim import FakeKubelets
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import Sink, Tracer
from kubesched.whatif.documents import (
    document_name,
    document_namespace,
    mapping,
    mappings,
    metadata,
    section,
    string,
)
from kubesched.whatif.record import Change, Recording
from kubesched.whatif.snapshot import Snapshot, SnapshotError

DEFAULT_SETTLE = 10.0  # virtual seconds a replay runs after its last change
TERMINAL = ("Succeeded", "Failed")


@dataclass
class PodOutcome:
    key: str  # namespace/name
    created: float  # seconds from the start
    node: str | None = None
    bound: float | None = None
    preempted: bool = False

    @property
    def waited(self) -> float | None:
        """Seconds from creation to binding."""
        return None if self.bound is None else self.bound - self.created


class Summary(TypedDict):
    """A run's outcome in numbers (seconds of waiting; None when no pod was placed)."""

    pods: int
    placed: int
    unplaced: int
    waitP50: float | None
    waitP99: float | None
    preemptions: int
    refusedChanges: int


@dataclass
class Outcome:
    """What came of a run: `pods` the scheduler had to place (by uid); `refused` the changes the
    replay could not apply, with the first few reasons."""

    label: str
    pods: dict[str, PodOutcome] = field(default_factory=dict)
    victims: set[str] = field(default_factory=set)  # uids of every pod preempted
    refused: int = 0
    reasons: list[str] = field(default_factory=list)
    wall: float = 0.0
    store: MemoryStore | None = None  # a replay's cluster as it ended
    attempts: int = 0  # a replay's scheduling attempts

    def summary(self) -> Summary:
        waits = sorted(w for p in self.pods.values() if (w := p.waited) is not None)
        placed = sum(1 for p in self.pods.values() if p.node)
        return {
            "pods": len(self.pods),
            "placed": placed,
            "unplaced": len(self.pods) - placed,
            "waitP50": round(_quantile(waits, 0.5), 6) if waits else None,
            "waitP99": round(_quantile(waits, 0.99), 6) if waits else None,
            "preemptions": len(self.victims),
            "refusedChanges": self.refused,
        }


def _quantile(values: Sequence[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[max(0, min(98, round(q * 100) - 1))]


def _uid(obj: Mapping[str, object]) -> str:
    meta = metadata(obj)
    return str(meta.get("uid") or f"{meta.get('namespace', '')}/{meta['name']}")


def _key(obj: Mapping[str, object]) -> str:
    meta = metadata(obj)
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def _scheduler_of(pod: Mapping[str, object]) -> str:
    """The scheduler a pod document asks for (the API server's default when it names none)."""
    return str(section(pod, "spec").get("schedulerName") or "default-scheduler")


def _is_pod(obj: Mapping[str, object]) -> bool:
    return obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1"


def _preempted(obj: Mapping[str, object]) -> bool:
    for c in mappings(section(obj, "status"), "conditions"):
        if (
            c.get("type") == "DisruptionTarget"
            and c.get("status") == "True"
            and c.get("reason") == PREEMPTION_BY_SCHEDULER
        ):
            return True
    return False


def recorded(recording: Recording, *, schedulers: Sequence[str] | None = None) -> Outcome:
    """The outcome the recording shows: every pod created without a node (or pending at the start)
    and, when `schedulers` is given, naming one of them."""
    out = Outcome("recorded")

    def track(obj: dict[str, object], t: float) -> None:
        spec = section(obj, "spec")
        if spec.get("nodeName") or (schedulers is not None and _scheduler_of(obj) not in schedulers):
            return
        out.pods[_uid(obj)] = PodOutcome(_key(obj), t)

    for obj in recording.initial:
        if _is_pod(obj):
            track(obj, 0.0)
    for change in recording.changes:
        obj = change.object
        if not _is_pod(obj):
            continue
        uid = _uid(obj)
        if change.type == ADDED and uid not in out.pods:
            track(obj, change.t)
        pod = out.pods.get(uid)
        node = section(obj, "spec").get("nodeName")
        if pod is not None and node and pod.node is None:
            pod.node, pod.bound = string(node, "spec.nodeName"), change.t
        if _preempted(obj):
            out.victims.add(uid)
            if pod is not None:
                pod.preempted = True
    return out


class _Replayer:
    def __init__(
        self,
        recording: Recording,
        *,
        config: SchedulerConfig,
        registry: Registry,
        seed: int,
        speed: float,
        label: str,
        sinks: Sequence[Sink],
    ) -> None:
        self.recording = recording
        self.speed = speed
        self.clock = VirtualClock()
        tracer = Tracer(self.clock.now)
        for sink in sinks:
            tracer.add_sink(sink)
        self.store = MemoryStore(clock=self.clock, seed=seed, watch_latency=0.0, tracer=tracer)
        self.cluster = MemoryCluster(self.store)
        self.profiles = frozenset(p.scheduler_name for p in config.profiles)
        self.scheduler = Scheduler(
            self.cluster, self.clock, config, registry, seed=seed, identity="replay", tracer=tracer
        )
        nodes = {document_name(o) for o in recording.initial if o.get("kind") == "Node"}
        nodes |= {document_name(c.object) for c in recording.changes if c.object.get("kind") == "Node"}
        self.kubelets = FakeKubelets(self.cluster, self.clock, serve=nodes, tracer=tracer)
        self.outcome = Outcome(label)
        self.start = self.clock.now()
        self.foreign: set[str] = set()  # uids of the pods another scheduler placed

    def now(self) -> float:
        return self.clock.now() - self.start

    async def watch(self) -> None:
        async for event in self.cluster.watch(core_v1.Pod):
            if event.type == DELETED:
                continue
            pod = event.object
            uid = pod.metadata.uid
            tracked = self.outcome.pods.get(uid)
            if tracked is not None and pod.spec.nodeName and tracked.node is None:
                tracked.node, tracked.bound = pod.spec.nodeName, self.now()
            if preempted(pod):
                self.outcome.victims.add(uid)
                if tracked is not None:
                    tracked.preempted = True

    async def play(self, settle: float) -> None:
        for change in self.recording.changes:
            await self.clock.sleep(max(0.0, self.start + change.t / self.speed - self.clock.now()))
            try:
                self.apply(change)
            except (ApiError, SnapshotError, msgspec.ValidationError) as e:
                self.outcome.refused += 1
                if len(self.outcome.reasons) < 5:
                    self.outcome.reasons.append(f"{change.type} {change.kind} {_key(change.object)}: {e}")
        await self.clock.sleep(settle)

    def restore_initial(self) -> None:
        Snapshot(self.recording.initial).restore(self.store)
        for obj in self.recording.initial:
            if _is_pod(obj) and not section(obj, "spec").get("nodeName"):
                self._track(obj)

    def _track(self, obj: dict[str, object]) -> None:
        if _scheduler_of(obj) in self.profiles:
            self.outcome.pods[_uid(obj)] = PodOutcome(_key(obj), self.now())
        else:
            self.foreign.add(_uid(obj))

    def apply(self, change: Change) -> None:
        obj = change.object
        if _is_pod(obj):
            self._apply_pod(change)
            return
        api_version, kind_name = obj["apiVersion"], obj["kind"]
        kind = None
        if isinstance(api_version, str) and isinstance(kind_name, str):
            kind = self.store.kind_named(api_version, kind_name)
        if kind is None:
            raise SnapshotError(f"{api_version} {kind_name} is not a kind the cluster serves")
        cls = kind.cls
        if change.type == DELETED:
            with contextlib.suppress(NotFound):
                self.store.delete(cls, document_name(obj), namespace=document_namespace(obj))
            return
        self.store.restore(msgspec.json.decode(json.dumps(obj).encode(), type=cls))

    def _current(self, obj: dict[str, object]) -> core_v1.Pod | None:
        try:
            pod = self.store.get(core_v1.Pod, document_name(obj), namespace=document_namespace(obj) or "default")
        except NotFound:
            return None
        return pod if meta_of(pod).uid == metadata(obj).get("uid") else None

    def _apply_pod(self, change: Change) -> None:
        obj = change.object
        name, namespace = document_name(obj), document_namespace(obj) or "default"
        current = self._current(obj)
        if change.type == ADDED:
            if current is not None:
                return
            pod = copy.deepcopy(obj)
            metadata(pod).pop("creationTimestamp", None)
            metadata(pod).pop("deletionTimestamp", None)
            if not mapping(pod["spec"], "spec").get("nodeName"):
                self._track(obj)
            pod["status"] = {"phase": "Pending", "qosClass": section(obj, "status").get("qosClass")}
            self.store.restore(msgspec.json.decode(json.dumps(pod).encode(), type=core_v1.Pod))
            return
        if current is None:
            return
        if change.type == DELETED:
            self.store.delete(core_v1.Pod, name, namespace=namespace, grace_period_seconds=0)
            return
        assert change.type == MODIFIED
        node = section(obj, "spec").get("nodeName")
        bound = present(current.spec, "the pod's spec").nodeName
        if _uid(obj) in self.foreign and node and not bound:
            binding = core_v1.Binding(
                metadata=meta_v1.ObjectMeta(name=name, namespace=namespace),
                target=m.ObjectReference(kind="Node", name=string(node, "spec.nodeName")),
            )
            self.store.post(core_v1.Pod, "binding", binding, namespace=namespace)
        phase = section(obj, "status").get("phase")
        if phase in TERMINAL and bound and (current.status.phase if current.status else None) != phase:
            self.store.patch(core_v1.Pod, name, {"status": {"phase": phase}}, namespace=namespace, subresource="status")


def replay(
    recording: Recording,
    *,
    config: SchedulerConfig,
    registry: Registry,
    label: str,
    seed: int = 0,
    speed: float = 1.0,
    settle: float = DEFAULT_SETTLE,
    sinks: Sequence[Sink] = (),
) -> Outcome:
    """The outcome of `recording` replayed under `config` (see the module); `sinks` receive the
    run's trace records (a `JsonLinesSink`: a file `kubesched ui` shows on its timeline)."""
    began = time.perf_counter()
    replayer = _Replayer(recording, config=config, registry=registry, seed=seed, speed=speed, label=label, sinks=sinks)
    replayer.restore_initial()
    replayer.clock.run_alongside(replayer.play(settle), [replayer.scheduler.run, replayer.kubelets.run, replayer.watch])
    replayer.outcome.wall = time.perf_counter() - began
    replayer.outcome.store = replayer.store
    replayer.outcome.attempts = replayer.scheduler.attempts
    return replayer.outcome


@dataclass(frozen=True)
class Difference:
    pod: str
    nodes: dict[str, str | None]  # run label -> node (None: not placed)


def differences(outcomes: Sequence[Outcome]) -> list[Difference]:
    """The pods of the first outcome not placed on one node by every outcome, in creation order."""
    first = outcomes[0]
    out = []
    for uid, pod in sorted(first.pods.items(), key=lambda item: (item[1].created, item[1].key)):
        nodes = {o.label: (o.pods[uid].node if uid in o.pods else None) for o in outcomes}
        if len(set(nodes.values())) > 1:
            out.append(Difference(pod.key, nodes))
    return out
