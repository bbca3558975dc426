"""The throughput collector's arithmetic, as scheduler_perf's: synthetic tick times and counts."""

from __future__ import annotations

import pytest

from kubesched.workloads.collector import SUB_SECOND, Throughput, ThroughputCollector, measured, next_due


@pytest.mark.parametrize(
    ("ticks", "samples"),
    [
        # nothing scheduled yet: no sample; the first reading with pods is only the baseline
        ([(1.0, 0), (2.0, 0), (3.0, 40), (4.0, 140), (5.0, 190)], [100.0, 50.0]),
        # real intervals, not nominal ones: 300 pods over a late tick 1.5 s after the last
        ([(1.0, 10), (2.5, 310)], [200.0]),
        # a second with no progress records nothing; the next sample covers both seconds, twice
        ([(1.0, 10), (2.0, 110), (3.0, 110), (4.0, 210)], [100.0, 50.0, 50.0]),
        # trailing empty seconds and anything after the last tick are not counted
        ([(1.0, 10), (2.0, 60), (3.0, 60), (4.0, 60)], [50.0]),
        # only the baseline: no sample at all
        ([(1.0, 500)], []),
    ],
    ids=["baseline-dropped", "real-interval", "merged-empty-seconds", "trailing-empty", "single-reading"],
)
def test_samples_are_pods_per_real_second_as_scheduler_perf_takes_them(ticks, samples):
    collector = ThroughputCollector()
    for now, scheduled in ticks:
        collector.observe(now, scheduled)
    assert collector.throughput.samples == pytest.approx(samples)


@pytest.mark.parametrize(
    ("samples", "expected"),
    [
        ([10.0, 20.0, 30.0, 40.0], {"average": 25.0, "perc50": 20.0, "perc90": 40.0, "perc95": 40.0, "perc99": 40.0}),
        # ceil(n·NN/100) - 1 on the sorted samples: with 20 samples p90 is the 18th, p95 the 19th
        (
            [float(v) for v in range(20, 0, -1)],
            {"average": 10.5, "perc50": 10.0, "perc90": 18.0, "perc95": 19.0, "perc99": 20.0},
        ),
        ([7.0], {"average": 7.0, "perc50": 7.0, "perc90": 7.0, "perc95": 7.0, "perc99": 7.0}),
    ],
    ids=["four", "twenty", "one"],
)
def test_summary_uses_upstreams_percentile_index(samples, expected):
    out = Throughput(samples).to_json()
    assert {k: out[k] for k in expected} == expected
    assert out["samples"] == len(samples)


def test_too_few_samples_warn_in_the_output():
    assert Throughput([1.0, 2.0, 3.0, 4.0]).to_json()["warning"].startswith("only 4 one-second samples")
    assert "warning" not in Throughput([1.0] * 5).to_json()
    assert Throughput([]).to_json() == {
        "average": 0.0,
        "samples": 0,
        "perc50": 0.0,
        "perc90": 0.0,
        "perc95": 0.0,
        "perc99": 0.0,
        "intervalSeconds": 1.0,
        "warning": "only 0 one-second samples: too few to trust; measure more pods",
    }
    assert Throughput([5.0], interval=SUB_SECOND).warning.startswith("only 1 0.1-second sample:")


def _collected(interval: float, ticks: list[tuple[float, int]]) -> Throughput:
    collector = ThroughputCollector(interval=interval)
    for now, scheduled in ticks:
        collector.observe(now, scheduled)
    return collector.throughput


# A run that schedules 1,000 pods a second from t = 0.05 s until `seconds` later, when the tickers
# stop: the (time, scheduled) of each tick of a collector with `interval`.
def _steady(interval: float, seconds: float) -> list[tuple[float, int]]:
    ticks = int((seconds + 0.05) / interval + 1e-9)
    return [(k * interval, round((k * interval - 0.05) * 1000)) for k in range(1, ticks + 1)]


@pytest.mark.parametrize(
    ("seconds", "reported_interval"),
    [
        (1.6, SUB_SECOND),  # shorter than two ticks: the one-second collector has nothing
        (2.5, SUB_SECOND),  # one one-second sample only
        (3.5, 1.0),  # two or more: upstream's collector, as upstream reports
    ],
    ids=["no-tick-sample", "one-tick-sample", "enough-ticks"],
)
def test_a_short_measured_phase_reports_the_sub_second_figure(seconds, reported_interval):
    ticks, fine = _collected(1.0, _steady(1.0, seconds)), _collected(SUB_SECOND, _steady(SUB_SECOND, seconds))
    reported = measured(ticks, fine)
    assert reported.interval == reported_interval
    assert reported.average == pytest.approx(1000.0, rel=0.05)
    assert measured(Throughput(), Throughput(interval=SUB_SECOND)).interval == 1.0  # neither has a sample


@pytest.mark.parametrize(
    ("due", "now", "expected"),
    [(1.0, 1.01, 2.0), (1.0, 2.5, 3.0), (1.0, 3.0, 4.0), (1.0, 0.9, 2.0)],
    ids=["on-time", "one-missed", "exactly-on-a-tick", "early"],
)
def test_the_ticker_keeps_a_fixed_schedule_and_drops_missed_ticks(due, now, expected):
    assert next_due(due, now, 1.0) == expected
