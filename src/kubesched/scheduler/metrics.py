"""The scheduler's Prometheus metrics (upstream's names and labels), read from the scheduler's
own counters when scraped, in a registry of its own (several schedulers may share a process)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from kubesched.scheduler.leader import LeaderElector
    from kubesched.scheduler.scheduler import Scheduler

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _SchedulerCollector(Collector):
    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler

    def collect(self) -> Iterator[Metric]:
        s, queue = self._scheduler, self._scheduler.queue
        pending = GaugeMetricFamily("scheduler_pending_pods", "Pending pods, by queue.", labels=["queue"])
        for name, count in queue.pending().items():
            pending.add_metric([name], count)
        yield pending
        incoming = CounterMetricFamily(
            "scheduler_queue_incoming_pods",
            "Pods added to scheduling queues, by event and queue.",
            labels=["event", "queue"],
        )
        for (name, event), count in sorted(queue.incoming.items()):
            incoming.add_metric([event, name], count)
        yield incoming
        attempts = CounterMetricFamily(
            "scheduler_schedule_attempts", "Scheduling attempts, by result and profile.", labels=["result", "profile"]
        )
        for (result, profile), count in sorted(s.attempt_results.items()):
            attempts.add_metric([result, profile], count)
        yield attempts
        rejected = GaugeMetricFamily(
            "scheduler_unschedulable_pods", "Pods rejected by each plugin, waiting.", labels=["plugin", "profile"]
        )
        for (plugin, profile), count in sorted(queue.rejections().items()):
            rejected.add_metric([plugin, profile], count)
        yield rejected
        inflight = GaugeMetricFamily("scheduler_inflight_events", "Cluster events kept for pods in flight.")
        inflight.add_metric([], queue.in_flight.events)
        yield inflight
        preemptions = CounterMetricFamily("scheduler_preemption_attempts", "Preemption attempts (PostFilter runs).")
        preemptions.add_metric([], s.metrics.preemption_attempts)
        yield preemptions
        cache = GaugeMetricFamily("scheduler_cache_size", "Nodes, pods and assumed pods in the cache.", labels=["type"])
        for kind, count in s.cache.sizes().items():
            cache.add_metric([kind], count)
        yield cache
        raised = CounterMetricFamily(
            "kubesched_plugin_exceptions",
            "Plugin calls that raised (each failed its attempt with an Error), by plugin and extension point.",
            labels=["plugin", "extension_point"],
        )
        for (plugin, point), count in sorted(s.metrics.plugin_exceptions.items()):
            raised.add_metric([plugin, point], count)
        yield raised


class _LeaderCollector(Collector):
    """client-go's leader election gauge (named for kube-scheduler's election), and why the lease
    was lost."""

    def __init__(self, elector: LeaderElector) -> None:
        self._elector = elector

    def collect(self) -> Iterator[Metric]:
        status = GaugeMetricFamily(
            "leader_election_master_status", "Whether this replica holds the lease (1) or not (0).", labels=["name"]
        )
        status.add_metric(["kube-scheduler"], 1 if self._elector.leading else 0)
        yield status
        lost = CounterMetricFamily(
            "kubesched_leader_election_lost",
            "Leases lost because no renewal succeeded within the renew deadline, by the last try's reason.",
            labels=["reason"],
        )
        if self._elector.lost is not None:
            lost.add_metric([self._elector.lost.reason], 1)
        yield lost


def _exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class SchedulerMetrics:
    """The counters and gauges above, read from the scheduler when scraped, and the histograms
    the scheduler observes as it goes (`attempt`, `preemption`, `scheduled`)."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.preemption_attempts = 0
        self.plugin_exceptions: Counter[tuple[str, str]] = Counter()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_SchedulerCollector(scheduler))
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency (algorithm and binding), by result and profile.",
            ["result", "profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=self.registry,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Victims chosen by each successful preemption.",
            buckets=_exponential(1, 2, 7),
            registry=self.registry,
        )
        self.pod_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Attempts a pod needed to be scheduled.",
            buckets=_exponential(1, 2, 5),
            registry=self.registry,
        )
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "From a pod's first entry into activeQ to its binding, by attempts.",
            ["attempts"],
            buckets=_exponential(0.01, 2, 20),
            registry=self.registry,
        )

    def watch_leader(self, elector: LeaderElector) -> None:
        """Report `elector`'s leadership with the scheduler's metrics."""
        self.registry.register(_LeaderCollector(elector))

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        self.attempt_duration.labels(result, profile).observe(seconds)

    def preemption_attempted(self) -> None:
        self.preemption_attempts += 1

    def preemption(self, victims: int) -> None:
        self.preemption_victims.observe(victims)

    def plugin_exception(self, plugin: str, point: str) -> None:
        self.plugin_exceptions[(plugin, point)] += 1

    def scheduled(self, attempts: int, since_first_active: float) -> None:
        self.pod_attempts.observe(attempts)
        self.sli_duration.labels(str(attempts) if attempts < 15 else "15+").observe(since_first_active)

    def exposition(self) -> bytes:
        """The text format Prometheus scrapes."""
        return generate_latest(self.registry)
