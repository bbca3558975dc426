"""The cost of one preemption attempt (DefaultPreemption's PostFilter) on a full cluster.

.venv/bin/python -m bench.preemption [--nodes N] [--per-node P] [--repeat R]

`--nodes` 4-CPU nodes each run `--per-node` pods of 200m with priorities 0-9 (20,000 pods by
default). Two preemptors: one (1 CPU, priority 100) for which every pod is a potential victim,
so the dry run stops after the candidates it needs; one (3 CPU, priority 5) that no node can
make room for, so every node is dry-run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta

from lightkube.models import core_v1 as m

from kubesched.cache import Cache, PodInfo, Snapshot
from kubesched.config import default_config
from kubesched.framework.cycle_state import CycleState
from kubesched.plugin.testing import FrozenClock, services
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.algorithm import Algorithm, plain_filter
from kubesched.scheduler.fit_error import FitError
from kubesched.scheduler.profiles import build_frameworks
from kubesched.sim import NodeTemplate
from kubesched.workloads.runner import make_pod

START = datetime(2026, 1, 1, tzinfo=UTC)


def _cluster(nodes: int, per_node: int) -> Cache:
    cache = Cache()
    template = NodeTemplate(capacity={"cpu": "4", "memory": "64Gi", "pods": "110"}, zones=())
    for i in range(nodes):
        node = template.make(f"n{i:04d}", i)
        node.metadata.uid = node.metadata.name
        cache.add_node(node)
        for j in range(per_node):
            pod = make_pod(
                f"p{i}-{j}", {"cpu": "200m", "memory": "1Gi"}, {"app": f"a{j % 4}"}, nodeName=node.metadata.name
            )
            pod.metadata.uid = f"uid-{i}-{j}"
            pod.spec.priority = (i * 7 + j) % 10
            pod.status = m.PodStatus(phase="Running", startTime=START + timedelta(seconds=j))
            cache.add_pod(pod)
    return cache


def _preemptor(cpu: str, priority: int) -> PodInfo:
    pod = make_pod("preemptor", {"cpu": cpu, "memory": "1Gi"}, schedulerName="default-scheduler")
    pod.metadata.uid = "uid-preemptor"
    pod.spec.priority = priority
    return PodInfo(pod)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1_000)
    parser.add_argument("--per-node", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    cache, snapshot = _cluster(args.nodes, args.per_node), Snapshot()
    registry = in_tree_registry()
    clock = FrozenClock((START + timedelta(hours=1)).timestamp())
    svc = services(snapshot=snapshot, clock=clock, namespaces={"default": {}})
    fwk = build_frameworks(default_config(registry), registry, svc)["default-scheduler"]
    algorithm = Algorithm(cache, snapshot, percentage=0)
    print(f"{args.nodes} nodes, {args.nodes * args.per_node} running pods; PostFilter per attempt:")
    for label, pod in (
        ("every pod a potential victim (1 CPU, priority 100)", _preemptor("1", 100)),
        ("no node can make room (3 CPU, priority 5)", _preemptor("3", 5)),
    ):
        times = []
        for _ in range(args.repeat):
            state = CycleState()
            try:
                algorithm.schedule_pod(fwk, state, pod, plain_filter)
            except FitError as fit:
                began = time.perf_counter()
                fwk.run_post_filter(state, pod, fit.diagnosis.node_to_status)
                times.append(time.perf_counter() - began)
        print(f"  {label}: median {statistics.median(times) * 1000:.1f} ms (min {min(times) * 1000:.1f})")


if __name__ == "__main__":
    main()
