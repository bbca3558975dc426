"""The scheduler: informers feed the cache and the queue; `schedule_one` pops a pod, runs the
scheduling cycle synchronously, and hands the binding cycle to its own asyncio task."""

from __future__ import annotations

import asyncio
import socket
from collections import Counter
from collections.abc import Awaitable, Sequence

from lightkube.models import core_v1

from kubesched.cache import Cache, CacheError, PodInfo, Snapshot
from kubesched.clock import Clock
from kubesched.cluster import Cluster
from kubesched.cluster.events import EventBroadcaster
from kubesched.config import SchedulerConfig
from kubesched.framework import preemption
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ASSIGNED_POD, ActionType, ClusterEvent
from kubesched.framework.features import Features
from kubesched.framework.handle import Listers, Services
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.queue import Nominator, QueuedPodInfo, QueueProfile, SchedulingQueue
from kubesched.scheduler.algorithm import (
    Algorithm,
    FilterFn,
    ScheduleResult,
    SchedulingError,
    plain_filter,
    with_nominated,
)
from kubesched.scheduler.failures import Failures
from kubesched.scheduler.fit_error import Diagnosis, FitError
from kubesched.scheduler.informers import Informers
from kubesched.scheduler.metrics import SchedulerMetrics
from kubesched.scheduler.profiles import build_frameworks
from kubesched.scheduler.results import AttemptRecord, ResultStore, attempt_record, preemption_of
from kubesched.scheduler.shared_informers import SharedInformers, served_kinds_of
from kubesched.trace import Tracer

RECORD_KEY = "kubesched/attempt-record"  # where the cycle state keeps the attempt's record
CLEAR_NOMINATION = ""  # a failure's nomination that clears the pod's (upstream's clearNominatedNode)


class SchedulerFailure(Exception):
    """The scheduler cannot go on (an informer stopped); the message says why."""


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
        attempt_seconds: float = 0.0,
        events_cluster: Cluster | None = None,
        record_results: bool = True,
        features: Features | None = None,
    ) -> None:
        """`events_cluster`: where Events are posted (default `cluster`; kube-scheduler gives them
        a client of their own, so they never wait behind bindings). `attempt_seconds`: the clock
        time each scheduling attempt takes (for simulations on the virtual clock, where attempts
        otherwise take none: plugins that requeue pods at once, as Coscheduling's sibling
        activation does, then still let time pass). `record_results`: keep every attempt's
        per-node, per-plugin results in `results` (a `ResultStore`, its budget settable).
        `features`: the feature gates (v1.36.2's defaults when None)."""
        self.attempt_seconds = attempt_seconds
        self.cluster = cluster
        self.clock = clock
        self.trace = tracer or Tracer(clock.now)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.config = config
        self.registry = registry  # the plugins its profiles were built from
        self.nominator = Nominator()
        self.namespace_labels: dict[str, dict[str, str]] = {}
        self.shared_informers = SharedInformers(cluster, self.trace, self._requeue)
        self.listers = Listers(self.shared_informers, namespaces=self.namespace_labels, pod=self._known_pod)
        host = identity or socket.gethostname()
        self.events = EventBroadcaster(events_cluster or cluster, clock)
        self.recorders = {
            p.scheduler_name: self.events.recorder(controller=p.scheduler_name, instance=f"{p.scheduler_name}-{host}")
            for p in config.profiles
        }
        self.metrics = SchedulerMetrics(self)
        self._bindings: set[asyncio.Future[None]] = set()
        self._blocking: list[asyncio.Future[None]] = []  # work the next attempt waits for
        self._draining = False
        self.features = features or Features()
        self.profiles: dict[str, Framework] = build_frameworks(config, registry, self._services(seed))
        self._watch_registered_kinds()
        self.algorithm = Algorithm(
            self.cache, self.snapshot, percentage=config.percentage_of_nodes_to_score, seed=seed, tracer=self.trace
        )
        self.queue = self._make_queue()
        self.attempts = 0  # scheduling attempts so far
        self.scheduled = 0  # pods bound so far
        self.attempt_results: Counter[tuple[str, str]] = Counter()  # (result, profile) -> attempts
        self.results: ResultStore | None = ResultStore() if record_results else None
        self.informers, self.failures = self._informers_and_failures()

    def _services(self, seed: int) -> Services:
        """What the scheduler lends its profiles' plugins through their handles."""
        return Services(
            snapshot=self.snapshot,
            clock=self.clock,
            cluster=self.cluster,
            listers=self.listers,
            informers=self.shared_informers,
            nominator=self.nominator,
            tracer=self.trace,
            metrics=self.metrics,
            events=self.recorders.__getitem__,
            spawn=self._spawn,
            activate=self._activate,
            block=self._block,
            features=self.features,
            seed=seed,
        )

    def _watch_registered_kinds(self) -> None:
        """Watch the kinds the plugins register events of, so that their events requeue pods (as
        upstream's event handlers do)."""
        registered = {
            e.event.resource for f in self.profiles.values() for es in f.events_to_register().values() for e in es
        }
        for kind in served_kinds_of(registered):
            self.shared_informers.informer(kind)

    def _make_queue(self) -> SchedulingQueue:
        """The scheduling queue, ordered by the first profile's QueueSort, gating and requeueing by
        each profile's PreEnqueue, registered events and hint keys."""
        queue_profiles = {
            name: QueueProfile(fwk.run_pre_enqueue, fwk.events_to_register(), fwk.hint_keys())
            for name, fwk in self.profiles.items()
        }
        first = next(iter(self.profiles.values()))
        return SchedulingQueue(
            clock=self.clock,
            less=first.queue_sort.less,
            sort_key=first.queue_sort_key,
            profiles=queue_profiles,
            initial_backoff=float(self.config.configuration.podInitialBackoffSeconds),
            max_backoff=float(self.config.configuration.podMaxBackoffSeconds),
            tracer=self.trace,
            nominator=self.nominator,
        )

    def _informers_and_failures(self) -> tuple[Informers, Failures]:
        """The informers feeding cache, queue and listers, and the failure handling they share."""
        informers = Informers(
            cluster=self.cluster,
            trace=self.trace,
            cache=self.cache,
            queue=self.queue,
            listers=self.listers,
            namespace_labels=self.namespace_labels,
            shared_informers=self.shared_informers,
            profiles=self.profiles,
        )
        failures = Failures(
            cluster=self.cluster,
            clock=self.clock,
            trace=self.trace,
            queue=self.queue,
            metrics=self.metrics,
            recorders=self.recorders,
            attempt_results=self.attempt_results,
            current=informers.unscheduled,
            spawn=self._spawn,
        )
        return informers, failures

    @property
    def synced(self) -> bool:
        """Whether the informers have listed everything once."""
        return self.informers.synced

    async def start(self) -> None:
        """List everything into the cache and queue, keep watching, start the queue's timers."""
        await self.informers.start()
        self.queue.start()

    def _known_pod(self, namespace: str, name: str) -> core_v1.Pod | None:
        info = self.cache.pod_by_key(f"{namespace}/{name}")
        return info.pod if info is not None else None

    def _requeue(self, event: ClusterEvent, old: object, new: object) -> None:
        self.queue.move_all_to_active_or_backoff(event, old, new)

    def _activate(self, pods: Sequence[PodInfo]) -> None:
        for pod in pods:
            self.queue.activate(pod.uid, pod.key)

    # -- the loop -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Start the informers (unless already started) and schedule until cancelled, or until the
        queue is closed (`drain`); SchedulerFailure when an informer stopped."""
        if not self.synced:
            await self.start()
        try:
            while True:
                qpi = await self.queue.pop()
                if qpi is None:
                    if self.informers.failure is not None:
                        raise SchedulerFailure(self.informers.failure)
                    return
                self.schedule_one(qpi)
                if self._blocking:  # a plugin's blocking work: the loop waits, as upstream's goroutine does
                    blocking, self._blocking = self._blocking, []
                    await asyncio.gather(*blocking)  # what it raises stops the scheduler, never silently
                if self.attempt_seconds:
                    await self.clock.sleep(self.attempt_seconds)
                else:
                    await asyncio.sleep(0)  # let watches and binding cycles run between attempts
        finally:
            await self.stop()

    async def stop(self) -> None:
        self.queue.close()
        await self.informers.stop()
        for task in list(self._bindings):
            task.cancel()
        await asyncio.gather(*self._bindings, return_exceptions=True)
        if not self._draining:  # a drain sends the queued events first, then closes
            await self.events.close()

    async def drain(self, timeout: float) -> None:
        """Stop taking pods from the queue and give the binding cycles under way, then the events
        still queued, up to `timeout` seconds in all to finish (SIGTERM)."""
        self._draining = True
        self.queue.close()
        deadline = self.clock.now() + timeout
        try:
            if self._bindings:
                await asyncio.wait(list(self._bindings), timeout=timeout)
            await self.events.drain(max(0.0, deadline - self.clock.now()))
        finally:
            self._draining = False
            await self.events.close()

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
                self.failures.event(
                    fwk, pod.pod, "Warning", "FailedScheduling", "Scheduling", f"skip schedule deleting pod: {pod.key}"
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
            self._unschedulable(fwk, state, qpi, fit)
            return None
        except SchedulingError as e:
            self._record(fwk, qpi, state, None, None, "error", e.status.message)
            self.failures.handle_failure(fwk, qpi, e.status, None, nomination=CLEAR_NOMINATION)
            return None
        record = self._record(fwk, qpi, state, result.diagnosis, result, "scheduled")
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
        try:
            self.cache.assume_pod(assumed)
        except CacheError as e:  # an error status, retried with backoff, as upstream's assume failure
            self.failures.handle_failure(fwk, qpi, Status.error(str(e)), None, nomination=CLEAR_NOMINATION)
            return None
        self.queue.nominator.delete(assumed.uid)
        self.trace.emit("cache.assumed", pod=pod.key, node=host)
        status = fwk.run_reserve(state, assumed, host)
        if record is not None:
            record.finish("Reserve", status)
        if self.trace.enabled:
            self.trace.emit("cycle.reserved", pod=pod.key, node=host, **_outcome(status))
        if status is not None:
            fwk.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            self._fail_on_node(fwk, qpi, host, status)
            return None
        status = fwk.run_permit(state, assumed, host)
        if record is not None:
            record.finish("Permit", status)
        if self.trace.enabled:
            self.trace.emit("cycle.permitted", pod=pod.key, node=host, **_outcome(status))
        if status is not None and status.code != Code.WAIT:
            fwk.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            self._fail_on_node(fwk, qpi, host, status)
            return None
        return assumed, result

    def _unschedulable(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, fit: FitError) -> None:
        """No node fits: the attempt recorded (with the preemption PostFilter chose, if any), the pod
        handed to failure handling with the nomination PostFilter left."""
        record = self._record(fwk, qpi, state, fit.diagnosis, None, "unschedulable", fit.message())
        if record is not None and (decision := preemption.decision(state)) is not None:
            chosen = self.snapshot.get(decision.candidate.node)
            record.preemption = preemption_of(decision, chosen, now=self.clock.now())
        self.failures.handle_failure(
            fwk,
            qpi,
            Status(Code.UNSCHEDULABLE, fit.message()),
            fit.diagnosis,
            nomination=_nomination_after(fwk, fit.diagnosis),
        )

    def _record(
        self,
        fwk: Framework,
        qpi: QueuedPodInfo,
        state: CycleState,
        diagnosis: Diagnosis | None,
        result: ScheduleResult | None,
        outcome: str,
        message: str = "",
    ) -> AttemptRecord | None:
        """Keep what this attempt's search saw in the result store (and in the cycle state, for
        the binding cycle to add its outcomes)."""
        if self.results is None:
            return None
        skipped = sorted(n for n in state.skip_score_plugins if n in fwk.weights) if result is not None else ()
        record = attempt_record(
            pod=qpi.pod_info,
            attempt=qpi.attempts,
            time=qpi.attempt_started,
            profile=fwk.profile_name,
            all_nodes=len(self.snapshot.node_info_list),
            search=self.algorithm.search,
            diagnosis=diagnosis,
            result=result,
            outcome=outcome,
            message=message,
            skipped=skipped,
        )
        self.results.add(record)
        state.write(RECORD_KEY, record)
        return record

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

    def filter_for(self, pod: PodInfo) -> FilterFn:
        """How to filter a node for `pod`: plainly, unless some other pod of at least its priority
        is nominated somewhere (then with the nominated pods, as upstream's two-pass filter)."""
        nominator = self.queue.nominator
        if not nominator.any_at_or_above(pod.priority, excluding=pod.uid):
            return plain_filter
        return with_nominated

    def _fail_on_node(self, fwk: Framework, qpi: QueuedPodInfo, host: str, status: Status) -> None:
        """A Reserve, Permit or WaitOnPermit failure: a rejection reads as a FitError over the one
        node chosen, its plugin the pod's rejector (upstream's assumeAndReserve,
        prepareForBindingCycle and bindingCycle); any other failure is an error. Either way the
        nomination is cleared."""
        if status.is_rejected():
            diagnosis = Diagnosis()
            diagnosis.record(host, status)
            diagnosis.unschedulable_plugins.add(status.plugin)  # a Pending rejection too, as upstream
            fit = FitError(qpi.key, 1, diagnosis)
            self.failures.handle_failure(
                fwk, qpi, Status(status.code, fit.message()), diagnosis, nomination=CLEAR_NOMINATION
            )
        else:
            self.failures.handle_failure(fwk, qpi, status, None, nomination=CLEAR_NOMINATION)

    async def binding_cycle(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: PodInfo, result: ScheduleResult
    ) -> None:
        host = result.host
        record: AttemptRecord | None = state.get(RECORD_KEY)
        self.trace.emit("bind.started", pod=assumed.key, node=host)
        status = await fwk.wait_on_permit(assumed)
        if status is not None:
            if record is not None:
                record.finish("WaitOnPermit", status)
            self._binding_failed(fwk, state, qpi, assumed, host, status, on_node=True)
            return
        # Past Permit no failure makes the pod unschedulable, and its in-flight events are no
        # longer kept: the queue is done with it before PreBind (upstream's bindingCycle).
        self.queue.done(assumed.uid)
        point, status = "PreBind", await fwk.run_pre_bind(state, assumed, host)
        if self.trace.enabled:
            self.trace.emit("bind.prebound", pod=assumed.key, node=host, **_outcome(status))
        if status is None:
            point, status = "Bind", await fwk.run_bind(state, assumed, host)
        if record is not None:
            record.finish(point, status)
        if status is not None:
            self._binding_failed(fwk, state, qpi, assumed, host, status, on_node=False)
            return
        self.cache.finish_binding(assumed.uid)
        self.scheduled += 1
        self.attempt_results[("scheduled", fwk.profile_name)] += 1
        now = self.clock.now()
        self.metrics.attempt("scheduled", fwk.profile_name, now - qpi.attempt_started)
        self.metrics.scheduled(qpi.attempts, now - (qpi.initial_attempt or qpi.timestamp))
        self.trace.emit("bind.done", pod=assumed.key, node=host)
        await self.failures.event(
            fwk, assumed.pod, "Normal", "Scheduled", "Binding", f"Successfully assigned {assumed.key} to {host}"
        )
        fwk.run_post_bind(state, assumed, host)
        self.trace.emit("bind.postbound", pod=assumed.key, node=host)

    def _binding_failed(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        host: str,
        status: Status,
        *,
        on_node: bool,
    ) -> None:
        """Upstream's handleBindingCycleError: Unreserve, forget, announce the
        freed room as an assigned pod's deletion, and requeue with the nomination cleared.
        `on_node`: the failure came at WaitOnPermit, where a rejection is still a FitError over
        the chosen node; at PreBind or Bind the plugin's status is reported as it is (a rejection
        then reads Unschedulable but names no rejecting plugin, so the pod backs off)."""
        self.trace.emit("bind.failed", pod=assumed.key, node=host, code=str(status.code), message=status.message)
        fwk.run_unreserve(state, assumed, host)
        forgotten = self.cache.pod(assumed.uid) is not None and self.cache.is_assumed(assumed.uid)
        if forgotten:
            self.cache.forget_pod(assumed)
        freed = ClusterEvent(ASSIGNED_POD, ActionType.DELETE)
        if forgotten and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff(freed, assumed.pod, None)
        if on_node:
            self._fail_on_node(fwk, qpi, host, status)
        else:
            self.failures.handle_failure(fwk, qpi, status, None, nomination=CLEAR_NOMINATION)
        if forgotten and status.is_rejected():  # after the failure, so the pod itself is not moved by it
            self.queue.move_all_to_active_or_backoff(freed, assumed.pod, None, pre_check=lambda q: q.uid != assumed.uid)

    def _spawn(self, coro: Awaitable[None]) -> None:
        self._task(coro)

    def _task(self, coro: Awaitable[None]) -> asyncio.Future[None]:
        task = asyncio.ensure_future(coro)
        self._bindings.add(task)
        task.add_done_callback(self._bindings.discard)
        return task

    def _block(self, coro: Awaitable[None]) -> None:
        self._blocking.append(self._task(coro))


def _nomination_after(fwk: Framework, diagnosis: Diagnosis) -> str | None:
    """The nomination a FitError leaves: what PostFilter decided (None when it decided nothing),
    cleared when the profile has no PostFilter plugin (upstream's schedulingAlgorithm)."""
    if not fwk.has_post_filter():
        return CLEAR_NOMINATION
    result = diagnosis.post_filter_result
    if result is None or result.mode != "override":
        return None
    return result.nominated_node_name


def _outcome(status: Status | None) -> dict[str, str]:
    """A status as a trace record's details: its code, and its plugin and message when not Success."""
    if status is None:
        return {"code": "Success"}
    return {"code": str(status.code), "plugin": status.plugin or "", "message": status.message}
