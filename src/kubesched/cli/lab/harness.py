"""The memory cluster a lab runs in: a store, the scheduler over it and a tracer, on virtual time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubesched.cli.drill.story import failed_scheduling
from kubesched.cli.scenario import run_alongside
from kubesched.clock import VirtualClock
from kubesched.cluster.memory import MemoryCluster, MemoryStore
from kubesched.config import default_config
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import plugin_registry
from kubesched.trace import Record, Tracer


@dataclass
class LabCluster:
    clock: VirtualClock
    tracer: Tracer
    store: MemoryStore
    cluster: MemoryCluster
    scheduler: Scheduler

    def run(self, body: Callable[[], Awaitable[None]]) -> None:
        """Run `body` while the scheduler runs, on the virtual clock."""
        run_alongside(self.clock, [self.scheduler], body)

    def records(self, *kinds: str, pod: str | None = None) -> list[Record]:
        return [r for r in self.tracer.records if r.kind in kinds and (pod is None or r.pod == pod)]

    def failed_scheduling(self) -> dict[str, str]:
        """Each pod's latest FailedScheduling message, by name."""
        return failed_scheduling(self.store)


def lab_cluster(*, seed: int, nodes: Iterable[Any], **config: Any) -> LabCluster:
    """`nodes` stored, and a scheduler with upstream's default configuration plus `config`'s
    top-level fields (`profiles`, `percentageOfNodesToScore`...)."""
    clock = VirtualClock()
    tracer = Tracer(clock.now, keep=True)
    store = MemoryStore(clock=clock, seed=seed)
    for node in nodes:
        store.create(node)
    registry = plugin_registry()
    built = default_config(registry, **config)
    cluster = MemoryCluster(store)
    scheduler = Scheduler(cluster, clock, built, registry, tracer=tracer, seed=seed, identity="lab")
    return LabCluster(clock, tracer, store, cluster, scheduler)
