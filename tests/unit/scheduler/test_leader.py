"""Leader election on a Lease, on the virtual clock: one leader, takeover after a crash, release,
and a leader that cannot renew stops at once."""

from __future__ import annotations

import asyncio

import pytest
from lightkube.resources import coordination_v1

from kubesched.clock import VirtualClock
from kubesched.cluster.errors import InternalError
from kubesched.scheduler.leader import LeaderElector, LeaseSettings
from kubesched.storage import MemoryCluster, MemoryStore


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()


class Candidate:
    def __init__(self, clock, cluster, name):
        self.clock = clock
        self.elector = LeaderElector(cluster, clock, LeaseSettings("kubesched", "default", name))
        self.led_at: list[float] = []
        self.stopped_at: list[float] = []
        self.task = clock.loop.create_task(self.elector.run(self.lead))

    async def lead(self):
        self.led_at.append(self.clock.now())
        try:
            await asyncio.Event().wait()  # schedule until cancelled
        finally:
            self.stopped_at.append(self.clock.now())


def setup(clock):
    store = MemoryStore(clock=clock)
    return store, MemoryCluster(store)


def holder(store):
    return store.get(coordination_v1.Lease, "kubesched", namespace="default").spec.holderIdentity


def test_exactly_one_candidate_leads_and_the_other_takes_over_after_a_crash(clock):
    store, cluster = setup(clock)
    a = Candidate(clock, cluster, "a")
    clock.advance(0.5)
    b = Candidate(clock, cluster, "b")
    clock.advance(60)
    assert (len(a.led_at), b.led_at) == (1, []) and holder(store) == "a"
    crashed = clock.now()
    a.task.cancel()  # kill -9: no release
    clock.advance(30)
    assert len(b.led_at) == 1 and holder(store) == "b"
    # b sees the last renewal at its next poll, then waits the lease duration, then polls again
    assert crashed + 15 - 2 < b.led_at[0] <= crashed + 15 + 2 * (2 * 1.2)
    lease = store.get(coordination_v1.Lease, "kubesched", namespace="default")
    assert lease.spec.leaseTransitions == 1


def test_a_leader_that_stops_releases_the_lease_for_the_next_at_once(clock):
    store, cluster = setup(clock)
    done = asyncio.Event()

    async def short():
        await done.wait()

    first = LeaderElector(cluster, clock, LeaseSettings("kubesched", "default", "a"))
    task = clock.loop.create_task(first.run(short))
    clock.advance(1)
    b = Candidate(clock, cluster, "b")
    clock.advance(5)
    done.set()
    clock.advance(0.1)
    assert task.done() and holder(store) is None
    clock.advance(3)  # b's next retry: no need to wait for the lease duration
    assert len(b.led_at) == 1


def test_a_leader_that_cannot_renew_within_the_deadline_stops_leading(clock, monkeypatch):
    _, cluster = setup(clock)
    a = Candidate(clock, cluster, "a")
    clock.advance(1)
    assert len(a.led_at) == 1

    async def unavailable(*args, **kwargs):
        raise InternalError("the API server is away")

    monkeypatch.setattr(cluster, "get", unavailable)
    away = clock.now()
    clock.advance(20)
    assert len(a.stopped_at) == 1 and a.stopped_at[0] - away <= 10 + 2 + 2
    assert a.task.done() and not a.elector.leading


@pytest.mark.parametrize(
    ("fault", "reason", "detail"),
    [
        ("hang", "timeout", "no answer from the API server within"),
        ("refuse", "api_error", "reading the lease: the API server is away"),
        ("take", "taken", "held by thief"),
    ],
)
def test_a_leader_whose_renewals_fail_stops_by_the_renew_deadline_and_says_why(
    clock, monkeypatch, fault, reason, detail
):
    _, cluster = setup(clock)
    a = Candidate(clock, cluster, "a")
    clock.advance(1)
    assert len(a.led_at) == 1
    get = cluster.get

    async def hang(*args, **kwargs):
        await asyncio.Event().wait()  # a request stuck behind a full token bucket, or a silent server

    async def refuse(*args, **kwargs):
        raise InternalError("the API server is away")

    async def take(*args, **kwargs):
        lease = await get(*args, **kwargs)
        lease.spec.holderIdentity = "thief"
        return lease

    monkeypatch.setattr(cluster, "get", {"hang": hang, "refuse": refuse, "take": take}[fault])
    renewed = a.elector.renewed_at
    clock.advance(30)
    # stopped before another candidate could take the lease: within retry period + renew deadline
    assert len(a.stopped_at) == 1 and a.stopped_at[0] - renewed <= 2 + 10 < 15
    lost = a.elector.lost
    assert a.task.done() and not a.elector.leading and lost is not None
    assert (lost.reason, lost.last_renewal) == (reason, renewed) and detail in lost.detail
    assert lost.describe(a.elector.settings).startswith(
        "leader election lost: no renewal of Lease default/kubesched within the renew deadline of 10s"
    )
