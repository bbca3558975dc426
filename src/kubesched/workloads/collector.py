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

A measured phase shorter than two ticks gives scheduler_perf's collector no sample at all (the first
tick only sets the baseline), and one of two or three seconds gives it one: kubesched's faster runs of
upstream's smaller shapes (2,000 anti-affine pods) would have no figure. So a second collector, with
the same arithmetic, samples every 0.1 s beside it, and `measured` reports its figure when the one-
second collector has fewer than two samples: a documented deviation, reported with the one-second
result beside it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

SAMPLE_SECONDS = 1.0  # throughputSampleInterval
SUB_SECOND = 0.1  # the sub-second collector's interval (a deviation: upstream has only the 1 s one)
ENOUGH_TICKS = 2  # fewer one-second samples than this and the sub-second figure is reported
FEW_SAMPLES = 5  # fewer samples than this and the figures say little: the summary warns
PERCENTILES = (50, 90, 95, 99)


@dataclass
class Throughput:
    """What the collector measured: pods/s per sample, summarized."""

    samples: list[float] = field(default_factory=list)
    interval: float = SAMPLE_SECONDS  # seconds between the collector's ticks

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
        return f"only {n} {self.unit} sample{'s' if n != 1 else ''}: too few to trust; measure more pods"

    @property
    def unit(self) -> str:
        """How long one sample is, in words: `one-second`, `0.1-second`."""
        return "one-second" if self.interval == 1.0 else f"{self.interval:g}-second"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "average": round(self.average, 1),
            "samples": len(self.samples),
            "intervalSeconds": self.interval,
        }
        for nn in PERCENTILES:
            out[f"perc{nn}"] = round(self.percentile(nn), 1)
        if self.warning:
            out["warning"] = self.warning
        return out


class ThroughputCollector:
    """The sampling arithmetic: `observe(now, scheduled)` once a tick, with the real time and the
    number of measured pods scheduled so far."""

    def __init__(self, *, interval: float = SAMPLE_SECONDS) -> None:
        self.throughput = Throughput(interval=interval)
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


def measured(ticks: Throughput, sub_second: Throughput) -> Throughput:
    """The figure a run reports: the one-second collector's, unless it has fewer than two samples
    (the measured phase lasted less than about three seconds), then the sub-second one's."""
    return ticks if len(ticks.samples) >= ENOUGH_TICKS or not sub_second.samples else sub_second


class TickerThread:
    """Calls `collector.observe(clock(), count())` every collector interval from a thread, on a
    fixed schedule (start + k·interval; a tick late enough to miss the next one is not doubled),
    until `stop()`."""

    def __init__(
        self,
        collector: ThroughputCollector,
        count: Callable[[], int],
        *,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.collector = collector
        self._count = count
        self._interval = collector.throughput.interval
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
