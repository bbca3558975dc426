"""A scheduler on the memory cluster and virtual time, for behaviour tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from lightkube.resources import core_v1

from builders import make_node
from kubesched.clock import VirtualClock
from kubesched.cluster import Cluster
from kubesched.config import load_data
from kubesched.framework.features import Features
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import Tracer


class Harness:
    def __init__(
        self,
        clock: VirtualClock,
        *,
        config: dict[str, Any] | None = None,
        extra: Registry | None = None,
        tracer: Tracer | None = None,
        event_ttl: float | None = None,
        features: Features | None = None,
        link: Callable[[MemoryStore, VirtualClock], Cluster] | None = None,
    ):
        """`link`: the cluster the scheduler talks to, made from the store (a slow network);
        `cluster` stays the direct one."""
        self.clock = clock
        self.store = MemoryStore(clock=clock, watch_latency=0.001, event_ttl=event_ttl)
        self.cluster = MemoryCluster(self.store)
        self.registry = in_tree_registry()
        if extra is not None:
            self.registry.merge(extra)
        raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **(config or {})}
        config_ = load_data(raw, self.registry)
        scheduling = link(self.store, clock) if link is not None else self.cluster
        self.scheduler = Scheduler(scheduling, clock, config_, self.registry, seed=1, tracer=tracer, features=features)
        self._task: asyncio.Task[None] | None = None

    def node(self, name: str, *, labels: dict[str, str] | None = None, **capacity: Any) -> None:
        node = make_node(name).capacity(**capacity) if capacity else make_node(name)
        self.store.create(node.labels(**(labels or {})).obj)

    def start(self) -> None:
        self._task = self.clock.loop.create_task(self.scheduler.run())
        self.clock.advance(0.01)

    def pod(self, name: str) -> Any:
        return self.store.get(core_v1.Pod, name, namespace="default")

    def events(self, name: str) -> list[tuple[str, str]]:
        return [(e.reason, e.message) for e in self.store.list(core_v1.Event).items if e.involvedObject.name == name]

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self.clock.advance(0.01)


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()


@pytest.fixture
def harness(clock):
    made: list[Harness] = []

    def make(**kw: Any) -> Harness:
        h = Harness(clock, **kw)
        made.append(h)
        return h

    yield make
    for h in made:
        h.stop()
