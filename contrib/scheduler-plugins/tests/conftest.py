"""A cluster on virtual time with the package's CRDs, and kubesched's scheduler over it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from lightkube.resources import apiextensions_v1, core_v1, events_v1

import kubesched_scheduler_plugins
from kubesched.clock import VirtualClock
from kubesched.config import load_data, load_file
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import plugin_registry
from kubesched.sim import FakeKubelets, KubeletConfig
from kubesched.storage import MemoryCluster, MemoryStore

MANIFESTS = Path(kubesched_scheduler_plugins.__file__).parent / "manifests"
SECOND = "scheduler-plugins-scheduler"
ATTEMPT = 0.001  # virtual seconds per scheduling attempt: a gang that keeps retrying still lets time pass


def crd(name: str) -> Any:
    text = (MANIFESTS / f"crd-{name}.yaml").read_text()
    return msgspec.convert(yaml.safe_load(text), apiextensions_v1.CustomResourceDefinition)


class Cluster:
    """The store with both CRDs, nodes and pods made by the tests, and one scheduler."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.store = MemoryStore(clock=clock, watch_latency=0.001)
        self.store.create(crd("podgroups"))
        self.store.create(crd("elasticquotas"))
        self.cluster = MemoryCluster(self.store)
        self.scheduler: Scheduler | None = None
        self._task: asyncio.Task[None] | None = None
        self._kubelets: asyncio.Task[None] | None = None

    def start(self, config: str | dict[str, Any] = "scheduler-config.yaml") -> Scheduler:
        registry = plugin_registry()
        if isinstance(config, str):
            settings = load_file(MANIFESTS / config, registry)
        else:
            head = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
            settings = load_data({**head, **config}, registry)
        self.scheduler = Scheduler(self.cluster, self.clock, settings, registry, seed=1, attempt_seconds=ATTEMPT)
        self._task = self.clock.loop.create_task(self.scheduler.run())
        self.clock.advance(0.01)
        return self.scheduler

    def create(self, *objects: Any) -> None:
        for obj in objects:
            self.store.create(obj)

    def pods(self, namespace: str = "default") -> list[Any]:
        return self.store.list(core_v1.Pod, namespace=namespace).items

    def bound(self, namespace: str = "default") -> dict[str, str]:
        return {p.metadata.name: p.spec.nodeName for p in self.pods(namespace) if p.spec.nodeName}

    def messages(self, reason: str = "FailedScheduling") -> list[str]:
        return [e.note for e in self.events(reason)]

    def events(self, reason: str) -> list[Any]:
        return [e for e in self.store.list(events_v1.Event).items if e.reason == reason]

    def run_kubelets(self) -> None:
        """Fake kubelets: bound pods start; deleted ones terminate after their grace period."""
        kubelets = FakeKubelets(self.cluster, self.clock, config=KubeletConfig(stop_seconds=0.5))
        self._kubelets = self.clock.loop.create_task(kubelets.run())
        self.clock.advance(0.01)

    def stop(self) -> None:
        for task in (self._task, self._kubelets):
            if task is not None:
                task.cancel()
        self.clock.advance(0.01)


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()


@pytest.fixture
def cluster(clock):
    made = Cluster(clock)
    yield made
    made.stop()
