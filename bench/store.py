"""Memory-store throughput: pod create+bind pairs per second, and memory per stored pod.

    .venv/bin/python -m bench.store [--pods N] [--repeat R]

Each figure is measured twice: with Python's default garbage-collector thresholds and with the
thresholds every `kubesched` command sets (`kubesched.cli.runtime.tune_gc`); and for pods that
share one spec (as pods of one ReplicaSet do) and pods whose specs all differ. Then, with the
`kubesched` thresholds, creates recorded in managedFields (as every write through the API server
is, `field_manager=`) against creates that are not, in alternating runs.
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

from kubesched.cli.runtime import tune_gc
from kubesched.clock import VirtualClock
from kubesched.storage import MemoryStore

DEFAULT_GC = gc.get_threshold()


def _pods(n: int, *, distinct: bool = False) -> list[core_v1.Pod]:
    def requests(i: int) -> dict[str, str]:
        if distinct:
            return {"cpu": f"{100 + i % 1000}m", "memory": f"{128 + i // 1000}Mi"}
        return {"cpu": "100m", "memory": "128Mi"}

    return [
        core_v1.Pod(
            metadata=meta_v1.ObjectMeta(name=f"pod-{i}", namespace="default", labels={"app": "bench"}),
            spec=m.PodSpec(
                containers=[
                    m.Container(
                        name="app",
                        image="registry.k8s.io/pause:3.10",
                        resources=m.ResourceRequirements(requests=requests(i)),
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


def create_bind_rate(n: int, *, distinct: bool = False, field_manager: str | None = None) -> float:
    store = MemoryStore(clock=VirtualClock(), history=n * 2 + 100)
    pods = _pods(n, distinct=distinct)
    bindings = _bindings(pods)
    gc.collect()
    start = time.perf_counter()
    for pod, b in zip(pods, bindings, strict=True):
        store.create(pod, field_manager=field_manager)
        store.post(core_v1.Pod, "binding", b)
    return n / (time.perf_counter() - start)


def bytes_per_pod(n: int) -> float:
    """Memory held by the store per pod created and bound (including its watch history)."""
    pods = _pods(n)
    bindings = _bindings(pods)
    store = MemoryStore(clock=VirtualClock(), history=10_000)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for pod, b in zip(pods, bindings, strict=True):
        store.create(pod)
        store.post(core_v1.Pod, "binding", b)
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
    for gc_label in ("default gc", "kubesched gc"):
        if gc_label == "kubesched gc":
            tune_gc()
        else:
            gc.set_threshold(*DEFAULT_GC)
        for spec_label, distinct in (("one spec", False), ("distinct specs", True)):
            rates = [create_bind_rate(args.pods, distinct=distinct) for _ in range(args.repeat)]
            print(
                f"{gc_label:12} {spec_label:14} create+bind pairs/s, {args.pods} pods, {args.repeat} runs: "
                f"median {statistics.median(rates):,.0f} (min {min(rates):,.0f}, max {max(rates):,.0f})"
            )
    for spec_label, distinct in (("one spec", False), ("distinct specs", True)):
        by: dict[str | None, list[float]] = {None: [], "bench": []}
        for run in range(args.repeat):
            for manager in (None, "bench") if run % 2 == 0 else ("bench", None):
                by[manager].append(create_bind_rate(args.pods, distinct=distinct, field_manager=manager))
        for manager, rates in by.items():
            label = "managedFields" if manager else "untracked"
            print(
                f"kubesched gc {spec_label:14} {label:13} create+bind pairs/s, {args.pods} pods, {args.repeat} runs: "
                f"median {statistics.median(rates):,.0f} (min {min(rates):,.0f}, max {max(rates):,.0f})"
            )
    print(f"memory per stored pod (created and bound, 10,000-change history): {bytes_per_pod(20_000):,.0f} bytes")


if __name__ == "__main__":
    main()
