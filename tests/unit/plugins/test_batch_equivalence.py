"""The plugins' batch methods over the NodeTable agree with their per-node methods, node for node,
on random clusters; and the search gives the same results with and without them."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lightkube.models import core_v1 as m

from builders import make_node, make_pod, plugin_handle, profile_framework
from kubesched.cache import Cache, PodInfo, Snapshot
from kubesched.framework.conformance import declares
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugin import FilterPlugin, PreFilterPlugin, PreScorePlugin, ScorePlugin
from kubesched.plugin.batch import FilterBatchPlugin, ScoreBatchPlugin, fails
from kubesched.plugins import (
    balanced_allocation,
    dynamic_resources,
    image_locality,
    node_affinity,
    node_declared_features,
    node_name,
    node_ports,
    node_unschedulable,
    noderesources_fit,
    taint_toleration,
    volumes,
)
from kubesched.plugins.registry import in_tree_registry
from kubesched.plugins.resource_scoring import ResourceSpec, UtilizationShapePoint
from kubesched.scheduler.algorithm import Algorithm, plain_filter
from kubesched.scheduler.fit_error import FitError

Pick = Callable[[Sequence[Any]], Any]

GPU = "example.com/gpu"
FPGA = "example.com/fpga"  # requested by pods, offered by no node
HUGE = "hugepages-2Mi"
IGNORED_GROUP_RESOURCE = "ignored.io/widget"
IMAGES = [
    ("registry.k8s.io/pause:3.10", 700_000),
    ("nginx:latest", 60 * 1024 * 1024),
    ("example.com/big:1", 900 * 1024 * 1024),
    ("example.com/huge:2", 3 * 1024 * 1024 * 1024),
]
POD_IMAGES = [
    "nginx",
    "nginx:latest",
    "example.com/big:1",
    "example.com/huge:2",
    "unknown:1",
    "registry.k8s.io/pause:3.10",
]
PORTS = [(8080, "TCP", ""), (8080, "UDP", ""), (8080, "TCP", "10.0.0.1"), (9090, "TCP", "0.0.0.0"), (9090, "TCP", "")]
TAINT_EFFECTS = ["NoSchedule", "NoExecute", "PreferNoSchedule"]


# -- random clusters ---------------------------------------------------------------------------------


def _resources(pick: Pick, cpu: Sequence[Any], mem: Sequence[Any], extra: dict[str, Sequence[Any]]) -> dict[str, str]:
    out = {"cpu": pick(cpu), "memory": pick(mem)}
    for name, values in extra.items():
        out[name] = pick(values)
    return {k: v for k, v in out.items() if v is not None}


def random_node(pick: Pick, i: int) -> Any:
    node = make_node(f"n{i:03d}").obj
    alloc = _resources(
        pick,
        [None, "0", "100m", "300m", "500m", "1", "4"],
        [None, "0", "200Mi", "500Mi", "1Gi", "4Gi"],
        {
            "ephemeral-storage": [None, "0", "1Gi", "10Gi"],
            GPU: [None, None, "0", "1", "2", "4"],
            HUGE: [None, "0", "4Mi"],
        },
    )
    alloc["pods"] = pick(["0", "1", "2", "3", "110", "110"])
    node.status.allocatable = alloc
    node.status.capacity = dict(alloc)
    node.metadata.uid = f"uid-n{i}"
    labels = dict(node.metadata.labels or {})
    for key, values in (("zone", [None, "z1", "z2"]), ("disk", [None, "ssd", "hdd"])):
        value = pick(values)
        if value is not None:
            labels[key] = value
    node.metadata.labels = labels
    taints = []
    for _ in range(pick([0, 0, 0, 1, 2])):
        taints.append(m.Taint(key=pick(["a", "b"]), value=pick([None, "x"]), effect=pick(TAINT_EFFECTS)))
    node.spec.taints = taints or None
    node.spec.unschedulable = pick([None, False, False, True])
    images = [m.ContainerImage(names=[name], sizeBytes=size) for name, size in IMAGES if pick([False, True])]
    node.status.images = images or None
    return node


def _containers(pick: Pick, requests: dict[str, str], ports: Sequence[tuple[int, str, str]], image: str) -> Any:
    return m.Container(
        name="app",
        image=image,
        resources=m.ResourceRequirements(requests=requests) if requests else None,
        ports=[
            m.ContainerPort(containerPort=p, hostPort=p, protocol=proto, hostIP=ip or None) for p, proto, ip in ports
        ]
        or None,
    )


def random_pod_requests(pick: Pick, *, incoming: bool = True) -> dict[str, str]:
    if pick([False, True, True]):
        return {}
    return _resources(
        pick,
        [None, "0", "1m", "100m", "200m", "300m", "1", "3"],
        [None, "0", "100Mi", "200Mi", "300Mi", "500Mi", "2Gi"],
        {
            "ephemeral-storage": [None, None, "500Mi", "5Gi"],
            GPU: [None, "0", "1", "2"],
            HUGE: [None, None, "2Mi"],
            FPGA: [None, None, "1"] if incoming else [None],  # no column in the table: no node has any
            IGNORED_GROUP_RESOURCE: [None, None, "1"],
        },
    )


def existing_pod(pick: Pick, i: int, node: str) -> Any:
    pod = make_pod(f"e{i}").node(node).obj
    pod.metadata.uid = f"uid-e{i}"
    ports = [pick(PORTS)] if pick([False, False, True]) else []
    requests = random_pod_requests(pick, incoming=False)
    pod.spec.containers = [_containers(pick, requests, ports, "registry.k8s.io/pause:3.10")]
    return pod


def _term(pick: Pick) -> m.NodeSelectorTerm:
    choice = pick(["in", "notin", "exists", "field", "empty", "gt"])
    if choice == "field":
        return m.NodeSelectorTerm(
            matchFields=[m.NodeSelectorRequirement(key="metadata.name", operator="In", values=[pick(["n000", "n001"])])]
        )
    if choice == "empty":
        return m.NodeSelectorTerm()
    if choice == "gt":
        return m.NodeSelectorTerm(matchExpressions=[m.NodeSelectorRequirement(key="zone", operator="Gt", values=["1"])])
    operator = {"in": "In", "notin": "NotIn", "exists": "Exists"}[choice]
    values = None if operator == "Exists" else [pick(["z1", "z2", "ssd"])]
    return m.NodeSelectorTerm(
        matchExpressions=[m.NodeSelectorRequirement(key=pick(["zone", "disk"]), operator=operator, values=values)]
    )


def random_affinity(pick: Pick) -> m.NodeAffinity | None:
    required = pick([None, None, "terms", "no-terms"])
    preferred = pick([None, None, "terms"])
    if required is None and preferred is None:
        return None
    return m.NodeAffinity(
        requiredDuringSchedulingIgnoredDuringExecution=None
        if required is None
        else m.NodeSelector(
            nodeSelectorTerms=[_term(pick) for _ in range(pick([1, 2]))] if required == "terms" else []
        ),
        preferredDuringSchedulingIgnoredDuringExecution=None
        if preferred is None
        else [m.PreferredSchedulingTerm(weight=pick([0, 1, 5, 50]), preference=_term(pick)) for _ in range(2)],
    )


def incoming_pod(pick: Pick, name: str = "incoming") -> PodInfo:
    pod = make_pod(name).obj
    pod.metadata.uid = f"uid-{name}"
    pod.spec.schedulerName = "default-scheduler"
    ports = [pick(PORTS) for _ in range(pick([0, 0, 1, 2]))]
    containers = [_containers(pick, random_pod_requests(pick), ports, pick(POD_IMAGES))]
    if pick([False, True]):
        containers.append(_containers(pick, random_pod_requests(pick), [], pick(POD_IMAGES)))
        containers[-1].name = "second"
    pod.spec.containers = containers
    if pick([False, False, True]):
        pod.spec.initContainers = [m.Container(name="init", image=pick(POD_IMAGES))]
    tolerations = []
    for _ in range(pick([0, 0, 1, 2])):
        tolerations.append(
            m.Toleration(
                key=pick([None, "a", "b", "node.kubernetes.io/unschedulable"]),
                operator=pick([None, "Exists", "Equal"]),
                value=pick([None, "x"]),
                effect=pick([None, *TAINT_EFFECTS]),
            )
        )
    pod.spec.tolerations = tolerations or None
    pod.spec.nodeSelector = pick([None, None, {}, {"zone": "z1"}, {"disk": "ssd", "zone": "z2"}])
    affinity = random_affinity(pick)
    pod.spec.affinity = m.Affinity(nodeAffinity=affinity) if affinity is not None else None
    pod.spec.nodeName = pick([None, None, None, "n000", "n001", "missing"])
    return PodInfo(pod)


def exact_fit(pod: PodInfo, node: Any) -> PodInfo:
    free_cpu = node.allocatable.cpu - node.requested.cpu
    free_memory = node.allocatable.memory - node.requested.memory
    container = pod.pod.spec.containers[0]
    requests = dict((container.resources.requests if container.resources else None) or {})
    for name, free in (("cpu", f"{free_cpu}m"), ("memory", str(free_memory))):
        if not free.startswith("-"):
            requests[name] = free
    container.resources = m.ResourceRequirements(requests=requests)
    return PodInfo(pod.pod)


def build_cluster(pick: Pick, nodes: int, pods: int) -> tuple[Cache, Snapshot]:
    cache, snapshot = Cache(), Snapshot()
    for i in range(nodes):
        cache.add_node(random_node(pick, i))
    for i in range(pods):
        cache.add_pod(existing_pod(pick, i, pick([f"n{j:03d}" for j in range(nodes)] + ["gone"])))
    cache.update_snapshot(snapshot)  # the snapshot's NodeTable comes with it
    return cache, snapshot


@st.composite
def cases(draw: st.DrawFn) -> tuple[Cache, Snapshot, PodInfo, np.ndarray]:
    """A random cluster, an incoming pod and some of the table's rows in random order. The
    cluster comes from a seeded generator (drawing each choice through Hypothesis is ~30x slower)."""
    rng = random.Random(draw(st.integers(0, 2**64 - 1)))
    cache, snapshot = build_cluster(rng.choice, rng.randint(1, 8), rng.randint(0, 12))
    pod = incoming_pod(rng.choice)
    n = len(snapshot.node_info_list)
    if rng.random() < 0.3:  # requests that exactly fill one node's free cpu and memory
        pod = exact_fit(pod, snapshot.node_info_list[rng.randrange(n)])
    order = rng.sample(range(n), n)
    rows = np.array(order[: rng.randint(1, n)], dtype=np.int64)
    return cache, snapshot, pod, rows


# -- the plugins under test ---------------------------------------------------------------------------


Handle = plugin_handle


SHAPES = [
    [(20, 3), (50, 8), (90, 2)],
    [(0, 0), (100, 10)],
    [(0, 10), (40, 0), (60, 0), (100, 4)],
]


def _fit_args(strategy: str, resources: list[tuple[str, int]], ignore: bool, shape: int = 0) -> noderesources_fit.Args:
    ratio = None
    if strategy == "RequestedToCapacityRatio":
        points = [UtilizationShapePoint(u, s) for u, s in SHAPES[shape]]
        ratio = noderesources_fit.RequestedToCapacityRatioParam(points)
    return noderesources_fit.Args(
        ignored_resources=[FPGA] if ignore else [],
        ignored_resource_groups=["ignored.io"] if ignore else [],
        scoring_strategy=noderesources_fit.ScoringStrategy(
            type=strategy,
            resources=[ResourceSpec(name, weight) for name, weight in resources],
            requested_to_capacity_ratio=ratio,
        ),
    )


FIT_RESOURCES = [
    [],
    [("cpu", 1), ("memory", 1)],
    [("cpu", 3), ("memory", 1), (GPU, 5), (HUGE, 2), ("ephemeral-storage", 1)],
    [(GPU, 1)],
    [("pods", 1), ("cpu", 2)],
]
ADDED_AFFINITY = node_affinity.NodeAffinityArgs(
    addedAffinity=m.NodeAffinity(
        requiredDuringSchedulingIgnoredDuringExecution=m.NodeSelector(
            nodeSelectorTerms=[
                m.NodeSelectorTerm(
                    matchExpressions=[m.NodeSelectorRequirement(key="zone", operator="NotIn", values=["z2"])]
                )
            ]
        ),
        preferredDuringSchedulingIgnoredDuringExecution=[
            m.PreferredSchedulingTerm(
                weight=7,
                preference=m.NodeSelectorTerm(
                    matchExpressions=[m.NodeSelectorRequirement(key="disk", operator="In", values=["ssd"])]
                ),
            )
        ],
    )
)

# Each entry: one plugin, with the argument variants the tests draw from.
PLUGINS: dict[str, list[Callable[[Handle], Any]]] = {
    "NodeUnschedulable": [lambda h: node_unschedulable.new(None, h)],
    "NodeName": [lambda h: node_name.new(None, h)],
    "TaintToleration": [lambda h: taint_toleration.new(None, h)],
    "NodeAffinity": [lambda h: node_affinity.new(None, h), lambda h: node_affinity.new(ADDED_AFFINITY, h)],
    "NodePorts": [lambda h: node_ports.new(None, h)],
    "VolumeRestrictions": [lambda h: volumes.new_volume_restrictions(None, h)],
    "NodeVolumeLimits": [lambda h: volumes.new_node_volume_limits(None, h)],
    "VolumeBinding": [lambda h: volumes.new_volume_binding(None, h)],
    "VolumeZone": [lambda h: volumes.new_volume_zone(None, h)],
    "DynamicResources": [lambda h: dynamic_resources.new(None, h)],
    "NodeDeclaredFeatures": [lambda h: node_declared_features.new(None, h)],
    "ImageLocality": [lambda h: image_locality.new(None, h)],
    "NodeResourcesBalancedAllocation": [
        lambda h: balanced_allocation.new(None, h),
        lambda h: balanced_allocation.new(
            balanced_allocation.Args([ResourceSpec("cpu"), ResourceSpec("memory"), ResourceSpec(GPU)]), h
        ),
        lambda h: balanced_allocation.new(
            balanced_allocation.Args([ResourceSpec(GPU), ResourceSpec("ephemeral-storage"), ResourceSpec(HUGE)]), h
        ),
    ],
    "NodeResourcesFit": [
        (lambda h, s=strategy, r=resources, ig=ignore, sh=shape: noderesources_fit.new(_fit_args(s, r, ig, sh), h))
        for strategy in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
        for resources in FIT_RESOURCES
        for ignore in (False, True)
        for shape in range(len(SHAPES) if strategy == "RequestedToCapacityRatio" else 1)
        if resources or strategy == "LeastAllocated"
    ],
}
FILTERS = [name for name, makes in PLUGINS.items() if declares(makes[0](Handle(Snapshot())), FilterPlugin)]
SCORES = [name for name, makes in PLUGINS.items() if declares(makes[0](Handle(Snapshot())), ScorePlugin)]
BATCH_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_filter_and_score_plugin_has_a_batch_method() -> None:
    registry = in_tree_registry()
    for name in registry:
        entry = registry.get(name)
        assert entry is not None
        plugin = entry.factory(None, Handle(Snapshot()))
        assert not declares(plugin, FilterPlugin) or declares(plugin, FilterBatchPlugin), name
        assert not declares(plugin, ScorePlugin) or declares(plugin, ScoreBatchPlugin), name


def _verdicts(plugin: Any, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: np.ndarray) -> list[bool]:
    nodes = snapshot.table.nodes
    return [fails(plugin.filter(state, pod, nodes[r])) for r in rows.tolist()]


def _mask(plugin: Any, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: np.ndarray) -> list[bool]:
    mask = plugin.filter_batch(state, pod, snapshot.table, rows)
    if mask is None:
        return [False] * len(rows)
    assert mask.dtype == np.bool_ and mask.shape == rows.shape
    return [bool(x) for x in mask.tolist()]


@pytest.mark.parametrize("name", FILTERS)
@BATCH_SETTINGS
@given(case=cases(), pre_filter=st.sampled_from([True, True, True, False]))
def test_filter_batch_matches_filter(name: str, case: Any, pre_filter: bool) -> None:
    _, snapshot, pod, rows = case
    for make in PLUGINS[name]:
        plugin = make(Handle(snapshot))
        state = CycleState()
        if pre_filter and declares(plugin, PreFilterPlugin):
            _, status = plugin.pre_filter(state, pod, snapshot.node_info_list)
            if status is not None and status.code != Code.SUCCESS:
                continue  # Skip (Filter does not run) or a rejection before Filter
        # Without PreFilter (pre_filter False) the per-node method's answer is an error: the
        # batch method must reject the same nodes.
        assert _mask(plugin, state, pod, snapshot, rows) == _verdicts(plugin, state, pod, snapshot, rows)


@pytest.mark.parametrize("name", SCORES)
@BATCH_SETTINGS
@given(case=cases())
def test_score_batch_matches_score(name: str, case: Any) -> None:
    _, snapshot, pod, rows = case
    nodes = [snapshot.table.nodes[r] for r in rows.tolist()]
    for make in PLUGINS[name]:
        plugin = make(Handle(snapshot))
        state = CycleState()
        if declares(plugin, PreScorePlugin):
            status = plugin.pre_score(state, pod, nodes)
            if status is not None and status.code != Code.SUCCESS:
                continue  # Skip (Score does not run) or an error before Score
        expected = [plugin.score(state, pod, node) for node in nodes]
        scores = plugin.score_batch(state, pod, snapshot.table, rows)
        assert scores.dtype == np.int64 and scores.shape == rows.shape
        assert scores.tolist() == expected


@pytest.mark.parametrize(
    ("alloc", "used", "want"),
    [
        (2**60, 2**59, 2**58),  # beyond the exact int64 range: the per-node arithmetic decides
        (-4, 0, 1),
        (8, 2**57, 1),
    ],
)
def test_out_of_range_amounts_fall_back_to_the_per_node_methods(alloc: int, used: int, want: int) -> None:
    cache, snapshot = Cache(), Snapshot()
    for i, name in enumerate(("a", "b")):
        node = make_node(name).obj
        node.status.allocatable = {"cpu": "4", "memory": str(alloc), GPU: str(alloc), "pods": "110"}
        node.metadata.uid = f"uid-{i}"
        cache.add_node(node)
        pod = make_pod(f"e{i}").node(name).req(memory=str(used + i), **{"example.com/gpu": str(used)}).obj
        pod.metadata.uid = f"uid-e{i}"
        cache.add_pod(pod)
    cache.update_snapshot(snapshot)
    pod = PodInfo(make_pod("p").req(cpu="1", memory=str(want), **{"example.com/gpu": str(want)}).obj)
    rows = np.arange(2, dtype=np.int64)
    most_allocated = _fit_args("MostAllocated", FIT_RESOURCES[2], False)
    for make in (
        lambda h: noderesources_fit.new(most_allocated, h),
        PLUGINS["NodeResourcesBalancedAllocation"][2],
    ):
        plugin = make(Handle(snapshot))
        state = CycleState()
        if declares(plugin, PreFilterPlugin):
            plugin.pre_filter(state, pod, snapshot.node_info_list)
            assert _mask(plugin, state, pod, snapshot, rows) == _verdicts(plugin, state, pod, snapshot, rows)
        plugin.pre_score(state, pod, snapshot.node_info_list)
        expected = [plugin.score(state, pod, n) for n in snapshot.table.nodes]
        assert plugin.score_batch(state, pod, snapshot.table, rows).tolist() == expected


# -- the whole search ---------------------------------------------------------------------------------


def _frameworks(snapshot: Snapshot, percentage: int, strategy: str) -> Any:
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": percentage,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}],
            }
        ],
    }
    return profile_framework(snapshot, raw)


def _outcome(algorithm: Algorithm, fwk: Any, pod: PodInfo) -> tuple[Any, ...]:
    state = CycleState()
    try:
        r = algorithm.schedule_pod(fwk, state, pod, plain_filter)
    except FitError as e:
        statuses = {n: (s.code, s.plugin, tuple(s.reasons)) for n, s in e.diagnosis.node_to_status.statuses.items()}
        return (
            "fit-error",
            str(e),
            statuses,
            sorted(e.diagnosis.unschedulable_plugins),
            algorithm.next_start_node_index,
        )
    return (
        r.host,
        r.evaluated_nodes,
        r.feasible_nodes,
        [n.name for n in r.scored],
        r.totals.tolist(),
        [(s.plugin, s.raw.tolist(), s.normalized.tolist(), s.weight) for s in r.plugin_scores],
        r.top,
        algorithm.next_start_node_index,
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    nodes=st.integers(90, 220),
    percentage=st.sampled_from([0, 1, 30, 60, 100]),
    strategy=st.sampled_from(["LeastAllocated", "MostAllocated"]),
)
def test_search_with_batch_methods_matches_per_node_search(
    seed: int, nodes: int, percentage: int, strategy: str
) -> None:
    rng = random.Random(seed)
    cache, snapshot = build_cluster(rng.choice, nodes, nodes // 2)
    fwk = _frameworks(snapshot, percentage, strategy)
    batch = Algorithm(cache, snapshot, percentage=percentage, seed=seed, batch=True)
    plain = Algorithm(cache, snapshot, percentage=percentage, seed=seed, batch=False)
    for i in range(4):
        if i % 2:
            pod = incoming_pod(rng.choice, f"p{i}")
        else:  # a plain pod tolerating everything: most nodes fit, so the search stops early
            plain_pod = make_pod(f"p{i}").obj if i == 0 else make_pod(f"p{i}").req(memory="1").obj
            plain_pod.metadata.uid = f"uid-p{i}"
            plain_pod.spec.tolerations = [m.Toleration(operator="Exists")]
            pod = PodInfo(plain_pod)
        outcome = _outcome(batch, fwk, pod)
        assert outcome == _outcome(plain, fwk, pod)
        if outcome[0] != "fit-error":  # bind it there: the next search sees the node's table row updated
            bound = pod.pod
            bound.spec.nodeName = outcome[0]
            cache.add_pod(bound)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_cpu_memory_fast_paths_agree_with_per_node_scores(seed):
    """Every node offers cpu and memory: the default strategies take their fast array paths."""
    from builders import make_node, make_pod
    from kubesched.cache import Cache, PodInfo, Snapshot
    from kubesched.framework.cycle_state import CycleState
    from kubesched.plugins import balanced_allocation, noderesources_fit

    rng = random.Random(seed)
    cache, snapshot = Cache(), Snapshot()
    for i in range(40):
        cache.add_node(make_node(f"n{i}").capacity(cpu=f"{rng.randint(1, 64000)}m", memory=rng.randint(1, 2**36)).obj)
        for j in range(rng.randint(0, 3)):
            p = make_pod(f"p{i}-{j}").req(cpu=f"{rng.randint(0, 4000)}m", memory=rng.randint(0, 2**33)).obj
            p.metadata.uid, p.spec.nodeName = f"u{i}-{j}", f"n{i}"
            cache.add_pod(p)
    plugins = (noderesources_fit.new(None, None), balanced_allocation.new(None, None))
    for round_ in range(3):  # between rounds a pod lands on a node: its row (and derived columns) change
        cache.update_snapshot(snapshot)
        incoming = make_pod(f"in{round_}").req(cpu=f"{rng.randint(0, 3000)}m", memory=rng.randint(0, 2**32)).obj
        incoming.metadata.uid = f"in{round_}"
        pod = PodInfo(incoming)
        rows = np.arange(len(snapshot.table), dtype=np.int64)
        for plugin in plugins:
            state = CycleState()
            if plugin.pre_score(state, pod, snapshot.node_info_list) is not None:
                continue
            expected = [plugin.score(state, pod, n) for n in snapshot.table.nodes]
            assert plugin.score_batch(state, pod, snapshot.table, rows).tolist() == expected
        incoming.spec.nodeName = f"n{rng.randrange(40)}"
        cache.add_pod(incoming)


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.integers(-(2**40), 2**40), max_size=30),
    reverse=st.booleans(),
    max_priority=st.sampled_from([1, 10, 100]),
)
def test_array_normalization_matches_list_normalization(scores: list[int], reverse: bool, max_priority: int) -> None:
    from kubesched.framework.normalize import default_normalize_array, default_normalize_score

    expected = list(scores)
    default_normalize_score(max_priority, reverse, expected)
    assert default_normalize_array(max_priority, reverse, np.asarray(scores, dtype=np.int64)).tolist() == expected
