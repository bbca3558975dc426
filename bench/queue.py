"""How fast the queue decides what a burst of cluster events means for a large backlog.

.venv/bin/python -m bench.queue [--pods N] [--events E] [--classes C] [--repeat R]

`--pods` pods wait in unschedulablePods, rejected by NodeResourcesFit (each asks for more CPU
than any node has; `--classes` distinct request sizes). Then `--events` node events arrive, as
the scheduler's informer would turn them into queue calls: a third are label changes, a third
allocatable changes that still leave every node too small, a third new nodes too small for the
pods. Every pod must stay where it is; the figure is the time the queue takes to decide that.
"""

from __future__ import annotations

import argparse
import statistics
import time

import msgspec

from kubesched.clock import VirtualClock
from kubesched.config import default_config
from kubesched.framework.events import NODE, ActionType, ClusterEvent, node_update_events
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.sim import NodeTemplate, make_nodes
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.workloads.runner import make_pod


def _backlog(pods: int, classes: int) -> tuple[Scheduler, VirtualClock]:
    clock = VirtualClock()
    registry = in_tree_registry()
    config = default_config(registry)
    scheduler = Scheduler(MemoryCluster(MemoryStore(clock=clock)), clock, config, registry)
    queue = scheduler.queue
    for i in range(pods):
        pod = make_pod(f"big-{i}", {"cpu": str(9 + i % classes)})
        pod.metadata.uid = f"uid-{i}"
        pod.spec.schedulerName = "default-scheduler"
        queue.add(pod)
        qpi = clock.run(queue.pop())
        assert qpi is not None
        qpi.unschedulable_plugins = {"NodeResourcesFit"}
        queue.add_unschedulable_if_not_present(qpi)
    return scheduler, clock


def decide_seconds(pods: int, events: int, classes: int) -> float:
    scheduler, clock = _backlog(pods, classes)
    queue = scheduler.queue
    nodes = make_nodes(events, NodeTemplate(zones=()))
    start = time.perf_counter()
    for i, node in enumerate(nodes):
        if i % 3 == 0:  # a label change
            changed = msgspec.structs.replace(
                node, metadata=msgspec.structs.replace(node.metadata, labels={"tier": str(i)})
            )
            for event in node_update_events(node, changed):
                queue.move_all_to_active_or_backoff(event, node, changed)
        elif i % 3 == 1:  # more allocatable, still too small
            status = msgspec.structs.replace(node.status, allocatable={**node.status.allocatable, "cpu": "8"})
            grown = msgspec.structs.replace(node, status=status)
            for event in node_update_events(node, grown):
                queue.move_all_to_active_or_backoff(event, node, grown)
        else:  # a new node, too small
            queue.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD), None, node)
    seconds = time.perf_counter() - start
    assert len(queue.unschedulable) == pods, "a pod moved: the events should not help any"
    clock.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--events", type=int, default=1_000)
    parser.add_argument("--classes", type=int, default=20, help="distinct request sizes among the pods")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    times = [decide_seconds(args.pods, args.events, args.classes) for _ in range(args.repeat)]
    print(
        f"{args.pods} unschedulable pods ({args.classes} request sizes), {args.events} node events, "
        f"{args.repeat} runs: median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})"
    )


if __name__ == "__main__":
    main()
