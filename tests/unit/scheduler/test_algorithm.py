"""numFeasibleNodesToFind, the round-robin start, and never overcommitting."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod
from kubesched.cache import Cache, PodInfo, Snapshot
from kubesched.config import load_data
from kubesched.framework.cycle_state import CycleState
from kubesched.plugin.testing import services
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.algorithm import Algorithm
from kubesched.scheduler.fit_error import num_feasible_nodes_to_find
from kubesched.scheduler.profiles import build_frameworks


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        (50, 0, 50),
        (100, 0, 100),
        (101, 0, 100),
        (1000, 0, 420),
        (5000, 0, 500),
        (15000, 0, 750),
        (6000, 0, 300),
        (1000, 30, 300),
        (1000, 5, 100),
        (1000, 100, 1000),
        (99, 10, 99),
    ],
)
def test_num_feasible_nodes_to_find(nodes, percentage, expected):
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def _setup(node_count, *, percentage=0, cpu="4"):
    cache, snapshot = Cache(), Snapshot()
    for i in range(node_count):
        node = make_node(f"n{i:04d}").capacity(cpu=cpu, memory="32Gi").obj
        node.metadata.uid = f"uid-n{i}"
        cache.add_node(node)
    config = load_data(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": percentage,
        },
        in_tree_registry(),
    )
    fwk = build_frameworks(config, in_tree_registry(), services(snapshot=snapshot))["default-scheduler"]
    return cache, snapshot, Algorithm(cache, snapshot, percentage=percentage), fwk


def _pod(name, cpu="100m"):
    pod = make_pod(name).req(cpu=cpu).obj
    pod.metadata.uid = f"uid-{name}"
    pod.spec.schedulerName = "default-scheduler"
    return PodInfo(pod)


def test_round_robin_start_moves_by_the_nodes_processed():
    _, _, algorithm, fwk = _setup(1000, percentage=10)
    run_filter = lambda f, s, p, n: f.run_filter(s, p, n)  # noqa: E731
    result = algorithm.schedule_pod(fwk, CycleState(), _pod("a"), run_filter)
    assert (result.feasible_nodes, result.evaluated_nodes) == (100, 100)
    assert algorithm.next_start_node_index == 100
    assert {n.name for n in result.scored} == {f"n{i:04d}" for i in range(100)}
    result = algorithm.schedule_pod(fwk, CycleState(), _pod("b"), run_filter)
    assert {n.name for n in result.scored} == {f"n{i:04d}" for i in range(100, 200)}
    assert algorithm.next_start_node_index == 200


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.lists(st.sampled_from(["500m", "1", "2", "4"]), min_size=1, max_size=6),
    pods=st.lists(st.sampled_from(["100m", "250m", "500m", "1", "3"]), min_size=1, max_size=25),
)
def test_never_overcommits(nodes, pods):
    cache, snapshot = Cache(), Snapshot()
    for i, cpu in enumerate(nodes):
        cache.add_node(make_node(f"n{i}").capacity(cpu=cpu, memory="1Gi", pods="110").obj)
    config = load_data(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, in_tree_registry()
    )
    fwk = build_frameworks(config, in_tree_registry(), services(snapshot=snapshot))["default-scheduler"]
    algorithm = Algorithm(cache, snapshot, percentage=0, seed=3)
    run_filter = lambda f, s, p, n: f.run_filter(s, p, n)  # noqa: E731
    from kubesched.scheduler.fit_error import FitError

    for i, cpu in enumerate(pods):
        pod = _pod(f"p{i}", cpu)
        try:
            result = algorithm.schedule_pod(fwk, CycleState(), pod, run_filter)
        except FitError:
            continue
        cache.assume_pod(pod.with_node(result.host))
    for info in cache.nodes.values():
        assert info.requested.cpu <= info.allocatable.cpu
        assert len(info.pods) <= info.allocatable.pods
