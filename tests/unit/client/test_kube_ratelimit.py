"""The token bucket on virtual time: a full bucket, then one token every 1/qps seconds."""

from __future__ import annotations

import asyncio

import pytest

from kubesched.client import TokenBucket
from kubesched.clock import VirtualClock


@pytest.fixture
def clock():
    c = VirtualClock(start=0.0)
    yield c
    c.close()


def test_burst_is_free_then_requests_are_spaced_by_qps(clock):
    bucket = TokenBucket(qps=50, burst=100)
    times = []

    async def take(n):
        for _ in range(n):
            await bucket.wait()
            times.append(clock.now())

    clock.run(take(110))
    assert times[:100] == [0.0] * 100
    assert times[100:] == pytest.approx([0.02 * i for i in range(1, 11)])


def test_concurrent_callers_are_served_in_arrival_order(clock):
    bucket = TokenBucket(qps=10, burst=1)
    order = []

    async def caller(i):
        await bucket.wait()
        order.append((i, clock.now()))

    async def main():
        await asyncio.gather(*(caller(i) for i in range(4)))

    clock.run(main())
    assert order == [(0, 0.0), (1, pytest.approx(0.1)), (2, pytest.approx(0.2)), (3, pytest.approx(0.3))]


def test_tokens_refill_while_idle_up_to_burst(clock):
    bucket = TokenBucket(qps=10, burst=2)

    async def main():
        for _ in range(2):
            await bucket.wait()
        await asyncio.sleep(10)  # refills to 2, not 100
        start = clock.now()
        for _ in range(3):
            await bucket.wait()
        return clock.now() - start

    assert clock.run(main()) == pytest.approx(0.1)


def test_a_cancelled_wait_gives_its_token_back(clock):
    bucket = TokenBucket(qps=1, burst=1)

    async def main():
        await bucket.wait()
        waiter = asyncio.ensure_future(bucket.wait())
        await asyncio.sleep(0.5)
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        start = clock.now()
        await bucket.wait()
        return clock.now() - start

    assert clock.run(main()) == pytest.approx(0.5)


def test_nonsense_limits_are_refused():
    with pytest.raises(ValueError):
        TokenBucket(qps=0, burst=1)
    with pytest.raises(ValueError):
        TokenBucket(qps=1, burst=0)
