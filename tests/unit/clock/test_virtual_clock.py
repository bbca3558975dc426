"""The virtual clock: jumps over idle time, fires ties in order, and stops when idle."""

import asyncio

import pytest

from kubesched.clock import DEFAULT_EPOCH, RealClock, VirtualClock


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()


def test_sleep_takes_no_real_time_and_advances_exactly(clock):
    async def main():
        await clock.sleep(300)
        return clock.now()

    assert clock.run(main()) == DEFAULT_EPOCH + 300


def test_timers_at_equal_times_fire_in_the_order_set(clock):
    fired = []
    for i in range(50):
        clock.call_at(DEFAULT_EPOCH + 5, fired.append, i)
    clock.call_at(DEFAULT_EPOCH + 1, fired.append, "early")
    clock.run_until_idle()
    assert fired == ["early", *range(50)]
    assert clock.now() == DEFAULT_EPOCH + 5


def test_run_until_idle_stops_before_later_timers(clock):
    fired = []
    clock.call_later(1, fired.append, 1)
    clock.call_later(10, fired.append, 10)
    clock.run_until_idle(until=DEFAULT_EPOCH + 5)
    assert fired == [1]
    assert clock.now() == DEFAULT_EPOCH + 5
    clock.advance(5)
    assert fired == [1, 10]
    assert clock.now() == DEFAULT_EPOCH + 10


def test_cancelled_timer_does_not_fire_or_hold_time(clock):
    fired = []
    handle = clock.call_later(100, fired.append, "x")
    handle.cancel()
    clock.run_until_idle()
    assert fired == []
    assert clock.now() == DEFAULT_EPOCH


def test_tasks_interleave_deterministically(clock):
    log = []

    async def ticker(name, period, n):
        for _ in range(n):
            await clock.sleep(period)
            log.append((name, round(clock.now() - DEFAULT_EPOCH, 6)))

    async def main():
        await asyncio.gather(ticker("a", 2, 3), ticker("b", 3, 2))

    clock.run(main())
    # At t=6 both are due; b set its timer at t=3, a at t=4, so b goes first.
    assert log == [("a", 2), ("b", 3), ("a", 4), ("b", 6), ("a", 6)]


def test_wait_for_times_out_on_virtual_time(clock):
    async def main():
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.Event().wait(), timeout=30)
        return clock.now()

    assert clock.run(main()) == DEFAULT_EPOCH + 30


def test_real_clock_sleeps_on_the_running_loop():
    clock = RealClock()

    async def main():
        fired = asyncio.Event()
        clock.call_later(0.001, fired.set)
        await asyncio.wait_for(fired.wait(), timeout=5)
        return clock.now()

    assert clock.run(main()) > DEFAULT_EPOCH


def test_run_alongside_stops_the_runners_when_main_ends_and_closes_the_clock(clock):
    ticks: list[float] = []
    stopped: list[str] = []

    async def ticker() -> None:
        try:
            while True:
                await clock.sleep(1.0)
                ticks.append(clock.now() - DEFAULT_EPOCH)
        except asyncio.CancelledError:
            stopped.append("ticker")
            raise

    async def main() -> str:
        await clock.sleep(3.5)
        return "done"

    assert clock.run_alongside(main(), [ticker]) == "done"
    assert ticks == [1.0, 2.0, 3.0]
    assert stopped == ["ticker"]
    assert clock.loop.is_closed()
