"""The Job controller (upstream `pkg/controller/job`), for NonIndexed jobs: up to `parallelism`
pods at a time until `completions` have succeeded; each finished pod counted once (its
`batch.kubernetes.io/job-tracking` finalizer removed when it is); failed pods replaced after the
pod-failure backoff (10 s doubling, at most 6 min) until more than `backoffLimit` have failed;
the Complete or Failed condition and the Events upstream records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from lightkube.models import batch_v1 as batch
from lightkube.resources import batch_v1, core_v1

from kubesched.api.objects import key_of, meta_of, present
from kubesched.clock.base import epoch_seconds, rfc3339
from kubesched.cluster.events import NORMAL, WARNING
from kubesched.controllers.base import (
    ControllerContext,
    enqueue_controller,
    enqueue_on_change,
    patch_observed,
    work,
    write_status,
)
from kubesched.controllers.informers import Key
from kubesched.controllers.owners import finalizer_removal, uid_of
from kubesched.controllers.pods import PodControl, from_template, is_active, is_ready, node_of, phase
from kubesched.controllers.replicaset import BURST_REPLICAS
from kubesched.controllers.workqueue import WorkQueue

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
POD_FAILURE_BACKOFF_SECONDS = 10.0
MAX_POD_FAILURE_BACKOFF_SECONDS = 360.0


def _finished(job: batch.Job) -> bool:
    return any(
        c.type in ("Complete", "Failed") and c.status == "True"
        for c in (job.status.conditions if job.status else None) or ()
    )


class JobController:
    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        self._jobs = ctx.informers(batch_v1.Job)
        self._pods = ctx.informers(core_v1.Pod)
        self._queue: WorkQueue[Key] = WorkQueue(ctx.clock)
        self._recorder = ctx.recorder("job-controller")
        self._control = PodControl(ctx.cluster, self._pods, self._recorder)
        self._last_failure: dict[str, float] = {}  # job uid -> when its last pod failure was counted
        self._jobs.add_handler(enqueue_on_change(self._queue))
        self._pods.add_handler(enqueue_controller(self._queue, "Job"))

    async def run(self) -> None:
        await work(self._queue, self.sync, name="job")

    def _owned(self, job: batch_v1.Job) -> list[core_v1.Pod]:
        return self._pods.controlled_by(uid_of(job))

    async def sync(self, key: Key) -> None:
        job = self._jobs.get(key)
        if job is None:
            return
        pods = self._owned(job)
        status = job.status
        succeeded = (status.succeeded if status else None) or 0
        failed = (status.failed if status else None) or 0
        newly_failed = 0
        for pod in pods:  # finished pods not counted yet
            if TRACKING_FINALIZER in (meta_of(pod).finalizers or ()) and phase(pod) in ("Succeeded", "Failed"):
                if phase(pod) == "Succeeded":
                    succeeded += 1
                else:
                    failed += 1
                    newly_failed += 1
        if newly_failed:
            self._last_failure[uid_of(job)] = self._ctx.clock.now()
        active = [p for p in pods if is_active(p)]
        spec = _spec(job)
        patch: dict[str, object] = {"succeeded": succeeded, "failed": failed}
        conditions = [c for c in (status.conditions if status else None) or ()]
        now = self._ctx.clock.now()
        if not _finished(job) and not spec.suspend:
            if status is None or status.startTime is None:
                patch["startTime"] = rfc3339(now)
            if failed > (spec.backoffLimit if spec.backoffLimit is not None else 6):
                for pod in active:
                    await self._control.delete(pod, job)
                active = []
                patch["conditions"] = _with(
                    conditions,
                    now,
                    [("FailureTarget", "BackoffLimitExceeded"), ("Failed", "BackoffLimitExceeded")],
                    "Job has reached the specified backoff limit",
                )
                await self._recorder.record(
                    job, WARNING, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
                )
            elif (spec.completions is not None and succeeded >= spec.completions) or (
                spec.completions is None and succeeded > 0 and not active
            ):
                patch["conditions"] = _with(
                    conditions,
                    now,
                    [("SuccessCriteriaMet", "CompletionsReached"), ("Complete", "CompletionsReached")],
                    "Reached expected number of succeeded pods",
                )
                patch["completionTime"] = rfc3339(now)
                await self._recorder.record(job, NORMAL, "Completed", "Job completed")
            else:
                active = await self._manage(job, active, succeeded, failed)
        elif spec.suspend:
            for pod in active:
                await self._control.delete(pod, job)
            active = []
        patch["active"] = len(active)
        patch["ready"] = sum(1 for p in active if is_ready(p))
        await self._write_status(job, patch)
        await self._release_counted(pods)

    async def _manage(
        self, job: batch_v1.Job, active: list[core_v1.Pod], succeeded: int, failed: int
    ) -> list[core_v1.Pod]:
        spec = _spec(job)
        parallelism = spec.parallelism if spec.parallelism is not None else 1
        if spec.completions is None:
            wanted = 0 if succeeded > 0 else parallelism
        else:
            wanted = min(parallelism, spec.completions - succeeded)
        if len(active) > wanted:
            for pod in sorted(active, key=lambda p: (bool(node_of(p)), is_ready(p)))[: len(active) - wanted]:
                await self._control.delete(pod, job)
            left = {meta_of(q).uid for q in self._owned(job) if is_active(q)}
            return [p for p in active if meta_of(p).uid in left]
        missing = min(wanted - len(active), BURST_REPLICAS)
        if missing <= 0:
            return active
        last = self._last_failure.get(uid_of(job))
        if failed and last is not None:
            delay = min(MAX_POD_FAILURE_BACKOFF_SECONDS, POD_FAILURE_BACKOFF_SECONDS * 2 ** (failed - 1))
            wait = last + delay - self._ctx.clock.now()
            if wait > 0:
                self._queue.add_after(key_of(job), wait)
                return active
        created = [
            await self._control.create(from_template(spec.template, job, finalizers=(TRACKING_FINALIZER,)), job)
            for _ in range(missing)
        ]
        return [*active, *created]

    async def _write_status(self, job: batch_v1.Job, patch: Mapping[str, object]) -> None:
        status = job.status
        if status is not None and all(_same(getattr(status, k, None), v) for k, v in patch.items()):
            return
        await write_status(self._ctx.cluster, self._jobs, job, patch)

    async def _release_counted(self, pods: list[core_v1.Pod]) -> None:
        """The finished pods just counted lose the tracking finalizer (and a deleted one goes)."""
        for pod in pods:
            meta = meta_of(pod)
            finalizers = meta.finalizers or ()
            if TRACKING_FINALIZER in finalizers and (phase(pod) in ("Succeeded", "Failed") or meta.deletionTimestamp):
                await patch_observed(self._ctx.cluster, self._pods, pod, finalizer_removal(pod, TRACKING_FINALIZER))


def _same(current: object, wanted: object) -> bool:
    if isinstance(current, datetime):
        return bool(rfc3339(current.timestamp()) == wanted)
    if isinstance(current, list):
        return False
    return bool((current or 0) == (wanted or 0) if isinstance(wanted, int) else current == wanted)


def _with(
    conditions: Sequence[batch.JobCondition], now: float, pairs: Sequence[tuple[str, str]], message: str
) -> list[dict[str, object]]:
    """`conditions` as dicts, with a True condition of each (type, reason) of `pairs` saying `message`."""
    stamp = rfc3339(now)
    out: list[dict[str, object]] = [
        {
            "type": c.type,
            "status": c.status,
            "reason": c.reason,
            "message": c.message,
            "lastProbeTime": rfc3339(epoch_seconds(c.lastProbeTime)) if c.lastProbeTime else stamp,
            "lastTransitionTime": rfc3339(epoch_seconds(c.lastTransitionTime)) if c.lastTransitionTime else stamp,
        }
        for c in conditions
        if c.type not in {p[0] for p in pairs}
    ]
    for type_, reason in pairs:
        out.append(
            {
                "type": type_,
                "status": "True",
                "reason": reason,
                "message": message,
                "lastProbeTime": stamp,
                "lastTransitionTime": stamp,
            }
        )
    return out


def _spec(job: batch.Job) -> batch.JobSpec:
    return present(job.spec, "the job's spec")
