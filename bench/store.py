"""Memory-store throughput: pod create+bind pairs per second, and memory per stored pod.

.venv/bin/python -m bench.store [--pods N] [--repeat R]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc

from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.clock import VirtualClock
from kubesched.cluster.memory import MemoryStore


def _pods(n: int) -> list[core_v1.Pod]:
    return [
        core_v1.Pod(
            metadata=meta_v1.ObjectMeta(name=f"pod-{i}", namespace="default", labels={"app": "bench"}),
            spec=m.PodSpec(
                containers=[
                    m.Container(
                        name="app",
                        image="registry.k8s.io/pause:3.10",
                        resources=m.ResourceRequirements(requests={"cpu": "100m", "memory": "128Mi"}),
                    )
                ]
            ),
        )
        for i in range(n)
    ]


def _bindings(pods: list[core_v1.Pod]) -> list[core_v1.Binding]:
    return [
        core_v1.Binding(
            metadata=meta_v1.ObjectMeta(name=p.metadata.name, namespace="default"),
            target=m.ObjectReference(kind="Node", name=f"node-{i % 100}"),
        )
        for i, p in enumerate(pods)
    ]


def create_bind_rate(n: int) -> float:
    store = MemoryStore(clock=VirtualClock(), history=n * 2 + 100)
    pods, bindings = _pods(n), _bindings(_pods(n))
    gc.collect()
    start = time.perf_counter()
    for pod, b in zip(pods, bindings, strict=True):
        store.create(pod)
        store.bind(b)
    return n / (time.perf_counter() - start)


def bytes_per_pod(n: int) -> float:
    """Memory held by the store per pod created and bound (including its watch history)."""
    pods, bindings = _pods(n), _bindings(_pods(n))
    store = MemoryStore(clock=VirtualClock(), history=10_000)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for pod, b in zip(pods, bindings, strict=True):
        store.create(pod)
        store.bind(b)
    del pods, bindings
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rates = [create_bind_rate(args.pods) for _ in range(args.repeat)]
    print(
        f"create+bind pairs/s over {args.pods} pods, {args.repeat} runs: median {statistics.median(rates):,.0f}"
        f" (min {min(rates):,.0f}, max {max(rates):,.0f})"
    )
    print(f"memory per stored pod (created+bound, 10,000-change history): {bytes_per_pod(20_000):,.0f} bytes")


if __name__ == "__main__":
    main()
