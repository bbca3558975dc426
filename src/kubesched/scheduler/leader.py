"""Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does it: only
the holder schedules; it renews every `retry_period`; a holder that cannot renew within
`renew_deadline` stops at once; another candidate takes the lease once it has seen no renewal
for `lease_duration`."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import msgspec
from lightkube.models import coordination_v1 as cm
from lightkube.models import meta_v1
from lightkube.resources import coordination_v1

from kubesched.clock import Clock
from kubesched.clock.base import utc
from kubesched.cluster import ApiError, Cluster, NotFound
from kubesched.trace import Tracer

JITTER = 1.2  # retries wait retry_period * (1 + up to 20 %), as client-go's wait.JitterUntil


@dataclass(frozen=True)
class LeaseSettings:
    name: str
    namespace: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


# why a renewal failed: the value of the `reason` label of kubesched_leader_election_lost_total
TIMEOUT = "timeout"  # the API server did not answer in time
TAKEN = "taken"  # another candidate holds the lease
API_ERROR = "api_error"  # the API server refused or could not be reached


@dataclass(frozen=True)
class LeaseLoss:
    """When the lease was lost and why: the last failed renewal's reason and what it said."""

    at: float
    last_renewal: float
    reason: str
    detail: str

    def describe(self, settings: LeaseSettings) -> str:
        return (
            f"leader election lost: no renewal of Lease {settings.namespace}/{settings.name} within the renew "
            f"deadline of {settings.renew_deadline:g}s (last renewal {self.at - self.last_renewal:.1f}s ago; "
            f"last try: {self.detail})"
        )


class LeaderElector:
    """`run(lead)` campaigns for the lease, runs `lead()` while holding it, and returns when the
    lease is lost (cancelling `lead`, with `lost` saying why) or `lead` ends (releasing the lease).
    Each try is bounded by the renew deadline, so a slow or silent API server cannot keep a holder
    leading past it: give the elector a client of its own, whose requests wait behind nobody's."""

    def __init__(
        self, cluster: Cluster, clock: Clock, settings: LeaseSettings, *, tracer: Tracer | None = None
    ) -> None:
        self._cluster = cluster
        self._clock = clock
        self.settings = settings
        self._trace = tracer or Tracer(clock.now)
        self._observed: cm.LeaseSpec | None = None  # the lease spec as last read
        self._observed_at = 0.0  # when it last changed, on our clock
        self._failure = (TIMEOUT, "no answer")  # the last try's reason and detail
        self.leading = False
        self.renewed_at = 0.0  # the last successful write of the lease
        self.lost: LeaseLoss | None = None
        self._rng = random.Random(settings.identity)

    @property
    def lease(self) -> str:
        return f"{self.settings.namespace}/{self.settings.name}"

    async def run(self, lead: Callable[[], Awaitable[None]]) -> None:
        s = self.settings
        while not await self._try_within(s.renew_deadline):
            await self._clock.sleep(s.retry_period * (1 + self._rng.random() * (JITTER - 1)))
        self.leading = True
        self._trace.emit("leader.acquired", lease=self.lease, identity=s.identity)
        task = asyncio.ensure_future(lead())
        try:
            while not task.done():
                if not await self._renew_within_deadline():
                    reason, detail = self._failure
                    self.lost = LeaseLoss(self._clock.now(), self.renewed_at, reason, detail)
                    self._trace.emit(
                        "leader.lost",
                        lease=self.lease,
                        identity=s.identity,
                        reason=reason,
                        detail=detail,
                        last_renewal=self.renewed_at,
                    )
                    return
                await self._sleep_or_done(task, s.retry_period)
            await task
        finally:
            self.leading = False
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            else:
                await self.release()

    async def _sleep_or_done(self, task: asyncio.Future[None], seconds: float) -> None:
        sleeper = asyncio.ensure_future(self._clock.sleep(seconds))
        await asyncio.wait({task, sleeper}, return_when=asyncio.FIRST_COMPLETED)
        sleeper.cancel()

    async def _renew_within_deadline(self) -> bool:
        """Renew, retrying every retry period, for at most the renew deadline counted from the
        first try (as client-go's renew loop counts it); a try under way at the deadline is
        abandoned there."""
        s = self.settings
        deadline = self._clock.now() + s.renew_deadline
        while True:
            if await self._try_within(deadline - self._clock.now()):
                return True
            if self._clock.now() + s.retry_period >= deadline:
                return False
            await self._clock.sleep(s.retry_period)

    async def _try_within(self, seconds: float) -> bool:
        try:
            async with asyncio.timeout(max(seconds, 0.0)):
                return await self._try_acquire_or_renew()
        except TimeoutError:
            self._failure = (TIMEOUT, f"no answer from the API server within {seconds:.1f}s")
            return False

    async def _try_acquire_or_renew(self) -> bool:
        s, now = self.settings, self._clock.now()
        try:
            lease = await self._cluster.get(coordination_v1.Lease, s.name, namespace=s.namespace)
        except NotFound:
            return await self._write(None, now)
        except ApiError as e:
            self._failure = (API_ERROR, f"reading the lease: {e}")
            return False
        spec = lease.spec or cm.LeaseSpec()
        if self._observed != spec:
            self._observed, self._observed_at = spec, now
        held_by_other = spec.holderIdentity and spec.holderIdentity != s.identity
        duration = spec.leaseDurationSeconds or s.lease_duration
        if held_by_other and self._observed_at + duration > now:
            self._failure = (TAKEN, f"held by {spec.holderIdentity}")
            return False
        return await self._write(lease, now)

    async def _write(self, lease: coordination_v1.Lease | None, now: float) -> bool:
        s = self.settings
        mine = lease is not None and lease.spec is not None and lease.spec.holderIdentity == s.identity
        old = lease.spec if lease is not None and lease.spec is not None else cm.LeaseSpec()
        spec = cm.LeaseSpec(
            holderIdentity=s.identity,
            leaseDurationSeconds=int(s.lease_duration),
            acquireTime=old.acquireTime if mine else utc(now),
            renewTime=utc(now),
            leaseTransitions=(old.leaseTransitions or 0) + (0 if mine or lease is None else 1),
        )
        try:
            if lease is None:
                meta = meta_v1.ObjectMeta(name=s.name, namespace=s.namespace)
                written = await self._cluster.create(coordination_v1.Lease(metadata=meta, spec=spec))
            else:
                written = await self._cluster.update(msgspec.structs.replace(lease, spec=spec))
        except ApiError as e:  # someone else wrote it first (Conflict / AlreadyExists) or the API is away
            self._failure = (API_ERROR, f"writing the lease: {e}")
            return False
        self._observed, self._observed_at = written.spec, now
        self.renewed_at = now
        return True

    async def release(self) -> None:
        """Give the lease up (holder cleared, duration 1 s) so another candidate need not wait."""
        s = self.settings
        with contextlib.suppress(ApiError, TimeoutError):
            async with asyncio.timeout(s.renew_deadline):
                lease = await self._cluster.get(coordination_v1.Lease, s.name, namespace=s.namespace)
                if lease.spec is None or lease.spec.holderIdentity != s.identity:
                    return
                spec = msgspec.structs.replace(
                    lease.spec, holderIdentity=None, leaseDurationSeconds=1, renewTime=utc(self._clock.now())
                )
                await self._cluster.update(msgspec.structs.replace(lease, spec=spec))
                self._trace.emit("leader.released", lease=self.lease, identity=s.identity)
