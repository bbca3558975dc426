"""The scheduler: informers feed the cache and the queue; `schedule_one` pops a pod, runs the
scheduling cycle synchronously, and hands the binding cycle to its own asyncio task."""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from lightkube.resources import core_v1, policy_v1

from kubesched.api.resources import pod_requests
from kubesched.cache import Cache, PodInfo, Snapshot
from kubesched.clock import Clock
from kubesched.clock.base import rfc3339
from kubesched.cluster import DELETED, ApiError, Cluster, Gone, NotFound, WatchEvent
from kubesched.cluster.events import EventsV1Recorder
from kubesched.cluster.protocol import BOOKMARK
from kubesched.config import SchedulerConfig
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ASSIGNED_POD,
    NODE,
    UNSCHEDULED_POD,
    ActionType,
    ClusterEvent,
    node_update_events,
    pod_update_events,
)
from kubesched.framework.interface import NodeToStatus
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.plugins.default_preemption import NAME as PREEMPTION
from kubesched.plugins.default_preemption import DefaultPreemption
from kubesched.plugins.default_preemption import decision as preemption_decision
from kubesched.queue import QueuedPodInfo, QueueProfile, SchedulingQueue
from kubesched.scheduler.algorithm import (
    Algorithm,
    FilterFn,
    ScheduleResult,
    SchedulingError,
    filter_with_nominated,
    plain_filter,
)
from kubesched.scheduler.fit_error import Diagnosis, FitError
from kubesched.scheduler.metrics import SchedulerMetrics
from kubesched.scheduler.preemption import Actions
from kubesched.scheduler.profiles import build_frameworks
from kubesched.trace import Tracer

EVENT_NOTE_LIMIT = 1024
NOT_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass
class _Handle:
    """What plugins reach through `handle`: the current snapshot, the cluster, the clock and the
    namespaces' labels (kept by the scheduler's namespace informer)."""

    snapshot: Snapshot
    cluster: Cluster
    clock: Clock
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    pdbs: list[Any] = field(default_factory=list)  # policy/v1 PodDisruptionBudgets, from the informer


def _truncate(message: str) -> str:
    data = message.encode()
    if len(data) <= EVENT_NOTE_LIMIT:
        return message
    return data[: EVENT_NOTE_LIMIT - 4].decode(errors="ignore") + " ..."


def _requests(pod: Any) -> dict[str, int]:
    try:
        return pod_requests(pod)
    except ValueError:
        return {}


class Scheduler:
    def __init__(
        self,
        cluster: Cluster,
        clock: Clock,
        config: SchedulerConfig,
        registry: Registry,
        *,
        tracer: Tracer | None = None,
        seed: int = 0,
        identity: str | None = None,
    ) -> None:
        self.cluster = cluster
        self.clock = clock
        self.trace = tracer or Tracer(clock.now)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.handle = _Handle(self.snapshot, cluster, clock)
        self.config = config
        self.profiles: dict[str, Framework] = build_frameworks(config, registry, self.handle, clock)
        self.algorithm = Algorithm(self.cache, self.snapshot, percentage=config.percentage_of_nodes_to_score, seed=seed)
        queue_profiles = {
            name: QueueProfile(fwk.run_pre_enqueue, fwk.events_to_register(), fwk.hint_keys())
            for name, fwk in self.profiles.items()
        }
        first = next(iter(self.profiles.values()))
        self.queue = SchedulingQueue(
            clock=clock,
            less=first.queue_sort.less,
            sort_key=getattr(first.queue_sort, "sort_key", None),
            profiles=queue_profiles,
            initial_backoff=float(config.configuration.podInitialBackoffSeconds),
            max_backoff=float(config.configuration.podMaxBackoffSeconds),
            tracer=self.trace,
        )
        for fwk in self.profiles.values():
            for plugin in fwk.instances.values():
                if isinstance(plugin, DefaultPreemption):
                    plugin.attach(fwk, filter_with_nominated(self.queue.nominator.pods_for_node))
                    plugin.rng = random.Random(seed)
        host = identity or socket.gethostname()
        self.recorders = {
            name: EventsV1Recorder(cluster, clock, controller=name, instance=f"{name}-{host}") for name in self.profiles
        }
        self._nodes: dict[str, Any] = {}
        self._pdbs: dict[tuple[str, str], Any] = {}
        self._unscheduled: dict[str, Any] = {}  # uid -> latest unassigned pod we are responsible for
        self._bindings: set[asyncio.Task[None]] = set()
        self.synced = False  # the informers have listed everything once
        self.attempts = 0  # scheduling attempts so far
        self.scheduled = 0  # pods bound so far
        self.attempt_results: Counter[tuple[str, str]] = Counter()  # (result, profile) -> attempts
        self.metrics = SchedulerMetrics(self)
        self._tasks: list[asyncio.Task[None]] = []

    # -- informers ------------------------------------------------------------------------------

    async def start(self) -> None:
        """List every watched kind into the cache and queue, then keep watching; start the queue
        timers. An optional kind the server does not serve (PodDisruptionBudgets on an old
        cluster, say) is traced once and left out."""
        informers: list[tuple[type[Any], Callable[[], Awaitable[str]], Callable[[WatchEvent], None], bool]] = [
            (policy_v1.PodDisruptionBudget, self._relist_pdbs, self._on_pdb_event, True),
            (core_v1.Namespace, self._relist_namespaces, self._on_namespace_event, True),
            (core_v1.Node, self._relist_nodes, self._on_node_event, False),
            (core_v1.Pod, self._relist_pods, self._on_pod_event, False),
        ]
        for kind, relist, handle, optional in informers:
            try:
                rv = await relist()
            except NotFound:
                if not optional:
                    raise
                self.trace.emit("informer.not_served", resource=kind.__name__)
                continue
            self._tasks.append(asyncio.ensure_future(self._inform(kind, rv, relist, handle)))
        self.queue.start()
        self.synced = True

    async def _inform(
        self,
        kind: type[Any],
        rv: str,
        relist: Callable[[], Awaitable[str]],
        handle: Callable[[WatchEvent], None],
    ) -> None:
        """Watch from `rv`; when the watch ends, resume from the last version seen, and when the
        API says that version is gone, relist and reconcile, as client-go's reflector does."""
        selector = NOT_TERMINAL if kind is core_v1.Pod else ""
        while True:
            try:
                async for event in self.cluster.watch(kind, resource_version=rv, field_selector=selector):
                    if event.type != BOOKMARK:
                        handle(event)
                    rv = event.object.metadata.resourceVersion or rv
            except Gone:
                self.trace.emit("informer.relist", resource=kind.__name__, resource_version=rv)
                rv = await relist()

    async def _relist_pdbs(self) -> str:
        listed = await self.cluster.list(policy_v1.PodDisruptionBudget)
        self._pdbs = {(p.metadata.namespace, p.metadata.name): p for p in listed.items}
        self.handle.pdbs = list(self._pdbs.values())
        return listed.resource_version

    def _on_pdb_event(self, event: WatchEvent) -> None:
        meta = event.object.metadata
        if event.type == DELETED:
            self._pdbs.pop((meta.namespace, meta.name), None)
        else:
            self._pdbs[(meta.namespace, meta.name)] = event.object
        self.handle.pdbs = list(self._pdbs.values())

    async def _relist_namespaces(self) -> str:
        listed = await self.cluster.list(core_v1.Namespace)
        namespaces = self.handle.namespaces
        namespaces.clear()
        for ns in listed.items:
            namespaces[ns.metadata.name] = dict(ns.metadata.labels or {})
        return listed.resource_version

    def _on_namespace_event(self, event: WatchEvent) -> None:
        meta = event.object.metadata
        if event.type == DELETED:
            self.handle.namespaces.pop(meta.name, None)
        else:
            self.handle.namespaces[meta.name] = dict(meta.labels or {})

    async def _relist_nodes(self) -> str:
        listed = await self.cluster.list(core_v1.Node)
        names = {n.metadata.name for n in listed.items}
        for name in [n for n in self._nodes if n not in names]:
            self.cache.remove_node(self._nodes.pop(name))
        for node in listed.items:
            old = self._nodes.get(node.metadata.name)
            if old is None or old.metadata.resourceVersion != node.metadata.resourceVersion:
                self._on_node(node, old)
        return listed.resource_version

    async def _relist_pods(self) -> str:
        listed = await self.cluster.list(core_v1.Pod, field_selector=NOT_TERMINAL)
        uids = {p.metadata.uid for p in listed.items}
        gone = [p for p in self._unscheduled.values() if p.metadata.uid not in uids]
        gone += [info.pod for info in self.cache.pods() if info.uid not in uids and not self.cache.is_assumed(info.uid)]
        for pod in gone:
            self._on_pod_delete(pod)
        for pod in listed.items:
            self._on_pod_upsert(pod)
        return listed.resource_version

    def _on_node_event(self, event: WatchEvent) -> None:
        node = event.object
        if event.type == DELETED:
            self._nodes.pop(node.metadata.name, None)
            self.cache.remove_node(node)
        else:
            self._on_node(node, self._nodes.get(node.metadata.name))

    def _on_node(self, node: Any, old: Any | None) -> None:
        self._nodes[node.metadata.name] = node
        if old is None:
            self.cache.add_node(node)
            self.queue.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD), None, node)
            return
        self.cache.update_node(old, node)
        for event in node_update_events(old, node):
            self.queue.move_all_to_active_or_backoff(event, old, node)

    def _on_pod_event(self, event: WatchEvent) -> None:
        if event.type == DELETED:
            self._on_pod_delete(event.object)
        else:
            self._on_pod_upsert(event.object)

    def _responsible(self, pod: Any) -> bool:
        return (pod.spec.schedulerName or "") in self.profiles

    def _on_pod_upsert(self, pod: Any) -> None:
        uid = pod.metadata.uid
        if pod.spec.nodeName:
            was_unscheduled = self._unscheduled.pop(uid, None)
            if was_unscheduled is not None:
                self.queue.delete(was_unscheduled)
            known = self.cache.pod(uid)
            if (
                known is not None
                and not self.cache.is_assumed(uid)
                and (known.pod.metadata.resourceVersion == pod.metadata.resourceVersion)
            ):
                return  # already known at this version (a relist)
            if known is None or self.cache.is_assumed(uid):
                self.cache.add_pod(pod)
                self.queue.move_all_to_active_or_backoff(ClusterEvent(ASSIGNED_POD, ActionType.ADD), None, pod)
            else:
                old = known.pod
                self.cache.update_pod(old, pod)
                for event in pod_update_events(ASSIGNED_POD, old, pod, requests=_requests):
                    self.queue.move_all_to_active_or_backoff(event, old, pod)
            return
        if not self._responsible(pod):
            return
        old = self._unscheduled.get(uid)
        self._unscheduled[uid] = pod
        if old is None:
            self.queue.add(pod)
        elif old.metadata.resourceVersion != pod.metadata.resourceVersion:
            self.queue.update(old, pod, pod_update_events(UNSCHEDULED_POD, old, pod, requests=_requests))

    def _on_pod_delete(self, pod: Any) -> None:
        uid = pod.metadata.uid
        if pod.spec.nodeName or self.cache.pod(uid) is not None:
            known = self.cache.pod(uid)
            if known is not None:
                self.cache.remove_pod(known.pod)
                self.queue.move_all_to_active_or_backoff(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), known.pod, None)
            return
        if self._unscheduled.pop(uid, None) is not None:
            nominated = self.queue.nominator.node_of(uid) is not None
            self.queue.delete(pod)
            if nominated:  # the room kept for it is free again, for pods it outranked
                priority = PodInfo(pod).priority
                self.queue.move_all_to_active_or_backoff(
                    ClusterEvent(ASSIGNED_POD, ActionType.DELETE), pod, None, pre_check=lambda q: q.priority <= priority
                )
        for fwk in self.profiles.values():
            waiting = fwk.waiting_pods.get(uid)
            if waiting is not None:
                waiting.reject("", "removed")

    # -- the loop -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Start the informers (unless already started) and schedule until cancelled."""
        if not self.synced:
            await self.start()
        try:
            while True:
                qpi = await self.queue.pop()
                if qpi is None:
                    return
                self.schedule_one(qpi)
                await asyncio.sleep(0)  # let watches and binding cycles run between attempts
        finally:
            await self.stop()

    async def stop(self) -> None:
        self.queue.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for task in list(self._bindings):
            task.cancel()
        await asyncio.gather(*self._bindings, return_exceptions=True)

    async def drain(self, timeout: float) -> None:
        """Stop taking pods from the queue and give the binding cycles under way up to `timeout`
        seconds to finish (SIGTERM)."""
        self.queue.close()
        if self._bindings:
            await asyncio.wait(list(self._bindings), timeout=timeout)

    async def wait_for_bindings(self) -> None:
        """Until every binding cycle started so far has finished."""
        while self._bindings:
            await asyncio.gather(*list(self._bindings), return_exceptions=True)

    # -- one attempt ----------------------------------------------------------------------------

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod_info
        fwk = self.profiles.get(pod.pod.spec.schedulerName or "")
        if fwk is None:
            self.queue.done(pod.uid)
            return
        if pod.pod.metadata.deletionTimestamp is not None:
            self.queue.done(pod.uid)
            self._spawn(
                self._event(
                    fwk, pod, "Warning", "FailedScheduling", "Scheduling", f"skip schedule deleting pod: {pod.key}"
                )
            )
            return
        if self.cache.is_assumed(pod.uid):
            self.queue.done(pod.uid)
            return
        state = CycleState()
        self.attempts += 1
        qpi.attempt_started = self.clock.now()
        self.trace.emit("cycle.start", pod=pod.key, attempt=qpi.attempts, profile=fwk.profile_name)
        outcome = self.scheduling_cycle(fwk, state, qpi)
        if outcome is None:
            return
        assumed, result = outcome
        self._spawn(self.binding_cycle(fwk, state, qpi, assumed, result))

    def scheduling_cycle(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo
    ) -> tuple[PodInfo, ScheduleResult] | None:
        pod = qpi.pod_info
        try:
            result = self.find_host(fwk, state, pod)
        except FitError as fit:
            self._start_preemption(fwk, state)
            self.handle_failure(fwk, qpi, Status(Code.UNSCHEDULABLE, fit.message()), fit.diagnosis)
            return None
        except SchedulingError as e:
            self.handle_failure(fwk, qpi, e.status, None)
            return None
        host = result.host
        if self.trace.enabled:
            self.trace.emit(
                "cycle.selected",
                pod=pod.key,
                node=host,
                evaluated=result.evaluated_nodes,
                feasible=result.feasible_nodes,
                top=result.top,
            )
        assumed = pod.with_node(host)
        self.cache.assume_pod(assumed)
        self.queue.nominator.delete(assumed.uid)
        self.trace.emit("cache.assumed", pod=pod.key, node=host)
        status = fwk.run_reserve(state, assumed, host)
        if status is not None:
            fwk.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            self._fail_on_node(fwk, qpi, host, status)
            return None
        status = fwk.run_permit(state, assumed, host)
        if status is not None and status.code != Code.WAIT:
            fwk.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            self._fail_on_node(fwk, qpi, host, status)
            return None
        return assumed, result

    def find_host(self, fwk: Framework, state: CycleState, pod: PodInfo) -> ScheduleResult:
        """The search, and PostFilter when it finds nothing: a FitError then carries PostFilter's text."""
        try:
            return self.algorithm.schedule_pod(fwk, state, pod, self.filter_for(pod))
        except FitError as fit:
            if fwk.has_post_filter():
                result, post = fwk.run_post_filter(state, pod, fit.diagnosis.node_to_status)
                fit.diagnosis.post_filter_result = result
                if post is not None and post.message:
                    fit.diagnosis.post_filter_msg = post.message
            raise

    def _start_preemption(self, fwk: Framework, state: CycleState) -> None:
        """Act on a preemption PostFilter decided this cycle: remove the victims off the loop (the
        preemptor is held at PreEnqueue until they are gone or going)."""
        chosen = preemption_decision(state)
        if chosen is None:
            return
        plugin = fwk.plugin(PREEMPTION)
        if not isinstance(plugin, DefaultPreemption):
            return
        self.trace.emit(
            "preemption.chosen",
            pod=chosen.preemptor.key,
            node=chosen.candidate.node,
            victims=[f"{v.key} (priority {v.priority})" for v in chosen.candidate.victims],
            reason=chosen.reason,
            candidates={
                c.node: {"victims": [v.key for v in c.victims], "pdb_violations": c.num_pdb_violations}
                for c in chosen.considered
            },
        )
        self.metrics.preemption(len(chosen.candidate.victims))
        work = plugin.start(chosen, Actions(self, fwk))
        if work is not None:
            self._spawn(work)

    def preemption_plugins(self) -> list[DefaultPreemption]:
        return [p for fwk in self.profiles.values() for p in fwk.instances.values() if isinstance(p, DefaultPreemption)]

    def filter_for(self, pod: PodInfo) -> FilterFn:
        """How to filter a node for `pod`: plainly, unless some other pod of at least its priority
        is nominated somewhere (then with the nominated pods, as upstream's two-pass filter)."""
        nominator = self.queue.nominator
        if not nominator.any_at_or_above(pod.priority, excluding=pod.uid):
            return plain_filter
        return filter_with_nominated(nominator.pods_for_node)

    def _fail_on_node(self, fwk: Framework, qpi: QueuedPodInfo, host: str, status: Status) -> None:
        """A Reserve/Permit/WaitOnPermit failure: a rejection reads as a FitError over one node."""
        if status.is_rejected():
            diagnosis = Diagnosis(node_to_status=NodeToStatus({host: status}))
            diagnosis.add_plugin(status)
            fit = FitError(qpi.key, 1, diagnosis)
            self.handle_failure(fwk, qpi, Status(Code.UNSCHEDULABLE, fit.message()), diagnosis)
        else:
            self.handle_failure(fwk, qpi, status, None)

    async def binding_cycle(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: PodInfo, result: ScheduleResult
    ) -> None:
        host = result.host
        status = await fwk.wait_on_permit(assumed)
        if status is None:
            status = await fwk.run_pre_bind(state, assumed, host)
        if status is None:
            status = await fwk.run_bind(state, assumed, host)
        if status is not None:
            self._binding_failed(fwk, state, qpi, assumed, host, status)
            return
        self.queue.done(assumed.uid)
        self.cache.finish_binding(assumed.uid)
        self.scheduled += 1
        self.attempt_results[("scheduled", fwk.profile_name)] += 1
        now = self.clock.now()
        self.metrics.attempt("scheduled", fwk.profile_name, now - qpi.attempt_started)
        self.metrics.scheduled(qpi.attempts, now - (qpi.initial_attempt or qpi.timestamp))
        self.trace.emit("bind.done", pod=assumed.key, node=host)
        await self._event(
            fwk, assumed, "Normal", "Scheduled", "Binding", f"Successfully assigned {assumed.key} to {host}"
        )
        fwk.run_post_bind(state, assumed, host)

    def _binding_failed(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: PodInfo, host: str, status: Status
    ) -> None:
        self.trace.emit("bind.failed", pod=assumed.key, node=host, code=str(status.code), message=status.message)
        fwk.run_unreserve(state, assumed, host)
        forgotten = self.cache.pod(assumed.uid) is not None and self.cache.is_assumed(assumed.uid)
        if forgotten:
            self.cache.forget_pod(assumed)
        freed = ClusterEvent(ASSIGNED_POD, ActionType.DELETE)
        if forgotten and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff(freed, assumed.pod, None)
        self._fail_on_node(fwk, qpi, host, status)
        if forgotten and status.is_rejected():  # after the failure, so the pod itself is not moved by it
            self.queue.move_all_to_active_or_backoff(freed, assumed.pod, None, pre_check=lambda q: q.uid != assumed.uid)

    # -- failures -------------------------------------------------------------------------------

    def handle_failure(self, fwk: Framework, qpi: QueuedPodInfo, status: Status, diagnosis: Diagnosis | None) -> None:
        pod = qpi.pod_info
        reason = "Unschedulable" if status.is_rejected() else "SchedulerError"
        result = "unschedulable" if status.is_rejected() else "error"
        self.attempt_results[(result, fwk.profile_name)] += 1
        self.metrics.attempt(result, fwk.profile_name, self.clock.now() - qpi.attempt_started)
        qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins) if diagnosis else set()
        qpi.pending_plugins = set(diagnosis.pending_plugins) if diagnosis else set()
        self.trace.emit(
            "cycle.failed",
            pod=pod.key,
            reason=reason,
            message=status.message,
            plugins=sorted(qpi.unschedulable_plugins | qpi.pending_plugins),
        )
        current = self._unscheduled.get(pod.uid)
        if current is None or current.spec.nodeName:
            self.queue.done(pod.uid)
            return
        nominated = diagnosis.post_filter_result if diagnosis else None
        nomination = nominated.nominated_node_name if nominated is not None and nominated.mode == "override" else None
        qpi.pod_info = PodInfo(current)
        if nomination is not None:
            self.queue.nominator.add(qpi.pod_info, nomination)
            self.trace.emit("nomination.set", pod=pod.key, node=nomination)
        self.queue.add_unschedulable_if_not_present(qpi)
        self._spawn(self._report_failure(fwk, current, reason, status.message, nomination))

    async def _report_failure(
        self, fwk: Framework, pod: Any, reason: str, message: str, nomination: str | None = None
    ) -> None:
        """The FailedScheduling event, then the PodScheduled condition (and the nomination a
        PostFilter made or cleared) in one status patch, unless nothing would change."""
        await self._event(fwk, PodInfo(pod), "Warning", "FailedScheduling", "Scheduling", _truncate(message))
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastTransitionTime": rfc3339(self.clock.now()),
        }
        existing = (
            next((c for c in (pod.status.conditions or []) if c.type == "PodScheduled"), None) if pod.status else None
        )
        status: dict[str, Any] = {"conditions": [condition]}
        if nomination is not None:
            status["nominatedNodeName"] = nomination or None
        unchanged = existing is not None and (existing.status, existing.reason, existing.message) == (
            "False",
            reason,
            message,
        )
        current_nomination = (pod.status.nominatedNodeName if pod.status else None) or ""
        if unchanged and (nomination is None or nomination == current_nomination):
            return
        with contextlib.suppress(ApiError):
            await self.cluster.patch(
                core_v1.Pod,
                pod.metadata.name,
                {"status": status},
                namespace=pod.metadata.namespace,
                subresource="status",
                patch_type="strategic",
            )

    async def _event(self, fwk: Framework, pod: PodInfo, type_: str, reason: str, action: str, note: str) -> None:
        with contextlib.suppress(NotFound):
            await self.recorders[fwk.profile_name].record(pod.pod, type_, reason, action, note)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._bindings.add(task)
        task.add_done_callback(self._bindings.discard)
