"""Scheduling throughput measured as scheduler_perf measures it (its `throughputCollector`).

Every second the collector reads how many of the measured pods are scheduled and when, by the real
clock. Nothing is recorded until some pod is scheduled, and the first reading after that only sets
the baseline (sampling and pod creation start independently, so it is an outlier). A second in which
no pod was scheduled records nothing; the next reading that sees progress divides the pods
scheduled since the last sample by the real time since it, and records that value once for every
second it covers, so the percentiles still weigh each second once. The summary: the mean, and
pNN = sorted[ceil(n·NN/100) - 1].

The ticker runs in a thread of its own (`TickerThread`), not on the scheduler's event loop: a tick
is never delayed by a scheduling cycle that holds the loop, and since the count and the timestamp
are read together, at the same instant, in that thread, each sample's interval is the real one
whatever the delay. The count it reads is one integer the scheduler's loop increments (reading it
needs no lock under the GIL).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

SAMPLE_SECONDS = 1.0  # throughputSampleInterval
FEW_SAMPLES = 5  # fewer samples than this and the figures say little: the summary warns
PERCENTILES = (50, 90, 95, 99)


@dataclass
class Throughput:
    """What the collector measured: pods/s per sample, summarized."""

    samples: list[float] = field(default_factory=list)

    @property
    def average(self) -> float:
        return sum(self.samples) / len(self.samples) if self.samples else 0.0

    def percentile(self, nn: int) -> float:
        """sorted[ceil(n·NN/100) - 1], as scheduler_perf computes PercNN."""
        if not self.samples:
            return 0.0
        ordered = sorted(self.samples)
        return ordered[math.ceil(len(ordered) * nn / 100) - 1]

    @property
    def warning(self) -> str:
        n = len(self.samples)
        if n >= FEW_SAMPLES:
            return ""
        return f"only {n} one-second sample{'s' if n != 1 else ''}: too few to trust; measure more pods"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"average": round(self.average, 1), "samples": len(self.samples)}
        for nn in PERCENTILES:
            out[f"perc{nn}"] = round(self.percentile(nn), 1)
        if self.warning:
            out["warning"] = self.warning
        return out


class ThroughputCollector:
    """The sampling arithmetic: `observe(now, scheduled)` once a tick, with the real time and the
    number of measured pods scheduled so far."""

    def __init__(self) -> None:
        self.throughput = Throughput()
        self._started = False
        self._last_count = 0
        self._last_time = 0.0
        self._skipped = 0

    def observe(self, now: float, scheduled: int) -> None:
        if scheduled == 0:
            return
        if not self._started:
            self._started = True
            self._last_count, self._last_time = scheduled, now
            return
        new = scheduled - self._last_count
        if new == 0:
            self._skipped += 1
            return
        value = new / (now - self._last_time)
        self.throughput.samples.extend([value] * (self._skipped + 1))
        self._last_count, self._last_time, self._skipped = scheduled, now, 0


class TickerThread:
    """Calls `collector.observe(clock(), count())` every `interval` seconds from a thread, on a
    fixed schedule (start + k·interval; a tick late enough to miss the next one is not doubled),
    until `stop()`."""

    def __init__(
        self,
        collector: ThroughputCollector,
        count: Callable[[], int],
        *,
        interval: float = SAMPLE_SECONDS,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.collector = collector
        self._count = count
        self._interval = interval
        self._clock = clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="throughput-collector", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        due = self._clock() + self._interval
        while not self._stop.wait(max(0.0, due - self._clock())):
            self.collector.observe(self._clock(), self._count())
            due = next_due(due, self._clock(), self._interval)


def next_due(due: float, now: float, interval: float) -> float:
    """The tick after the one due at `due`, on the schedule start + k·interval: ticks missed by
    `now` (the thread waited for the GIL) are dropped, not run late one after another."""
    due += interval
    if due <= now:
        due += (math.floor((now - due) / interval) + 1) * interval
    return due
