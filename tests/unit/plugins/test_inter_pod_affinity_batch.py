"""InterPodAffinity's table paths (memo columns, bincounts) agree with its pod-by-pod paths, and its
batch methods with its per-node methods, on random clusters, also as the cluster changes."""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Iterator
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lightkube.models import core_v1, meta_v1

from builders import make_node, make_pod, plugin_handle
from kubesched.cache import Cache, PodInfo, Snapshot
from kubesched.config import load_data
from kubesched.framework.batch import fails
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugin.testing import services
from kubesched.plugins import inter_pod_affinity as ipa
from kubesched.plugins.inter_pod_affinity import precompute
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.algorithm import Algorithm, plain_filter
from kubesched.scheduler.fit_error import FitError
from kubesched.scheduler.profiles import build_frameworks

KEYS = ["kubernetes.io/hostname", "zone", "rack", "absent"]
LABELS = {"app": ["a", "b", "c"], "tier": ["x", "y"], "version": ["1", "2"]}
NAMESPACES = {
    "default": {"kubernetes.io/metadata.name": "default", "env": "prod"},
    "ns-a": {"kubernetes.io/metadata.name": "ns-a", "env": "prod", "team": "a"},
    "ns-b": {"kubernetes.io/metadata.name": "ns-b", "env": "dev"},
}
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def handle(cluster: Cluster) -> Any:
    return plugin_handle(cluster.snapshot, namespaces=NAMESPACES)


@contextlib.contextmanager
def path(table: bool) -> Iterator[None]:
    """Force the table paths (every size is "large") or the pod-by-pod ones."""
    saved = precompute.FEW_PODS, precompute.FEW_NODES
    precompute.FEW_PODS = precompute.FEW_NODES = -1 if table else 1 << 30
    try:
        yield
    finally:
        precompute.FEW_PODS, precompute.FEW_NODES = saved


# -- random clusters ---------------------------------------------------------------------------------


def random_labels(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(values) for k, values in LABELS.items() if rng.random() < 0.6}


def random_selector(rng: random.Random) -> meta_v1.LabelSelector | None:
    kind = rng.randrange(6)
    if kind == 0:
        return None  # selects nothing
    if kind == 1:
        return meta_v1.LabelSelector()  # selects everything
    key = rng.choice(list(LABELS))
    if kind in (2, 3):
        return meta_v1.LabelSelector(matchLabels={key: rng.choice(LABELS[key])})
    operator = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    values = rng.sample(LABELS[key], rng.randint(1, len(LABELS[key]))) if operator in ("In", "NotIn") else None
    return meta_v1.LabelSelector(
        matchExpressions=[meta_v1.LabelSelectorRequirement(key=key, operator=operator, values=values)]
    )


def random_term(rng: random.Random) -> core_v1.PodAffinityTerm:
    namespace_selector = rng.choice(
        [
            None,
            None,
            None,
            meta_v1.LabelSelector(),
            meta_v1.LabelSelector(matchLabels={"env": "prod"}),
            meta_v1.LabelSelector(
                matchExpressions=[meta_v1.LabelSelectorRequirement(key="env", operator="NotIn", values=["dev"])]
            ),
        ]
    )
    return core_v1.PodAffinityTerm(
        topologyKey=rng.choice(KEYS),
        labelSelector=random_selector(rng),
        namespaces=rng.choice([None, None, [], ["ns-a"], ["default", "ns-b"]]),
        namespaceSelector=namespace_selector,
        matchLabelKeys=rng.choice([None, None, ["version"]]),
        mismatchLabelKeys=rng.choice([None, None, ["tier"]]),
    )


def random_affinity(rng: random.Random, chance: float) -> core_v1.Affinity | None:
    def terms() -> list[core_v1.PodAffinityTerm] | None:
        return [random_term(rng) for _ in range(rng.randint(1, 2))] if rng.random() < chance else None

    def preferred() -> list[core_v1.WeightedPodAffinityTerm] | None:
        if rng.random() >= chance:
            return None
        return [core_v1.WeightedPodAffinityTerm(weight=rng.randint(1, 100), podAffinityTerm=random_term(rng))]

    positive = core_v1.PodAffinity(requiredDuringSchedulingIgnoredDuringExecution=terms())
    positive.preferredDuringSchedulingIgnoredDuringExecution = preferred()
    negative = core_v1.PodAntiAffinity(requiredDuringSchedulingIgnoredDuringExecution=terms())
    negative.preferredDuringSchedulingIgnoredDuringExecution = preferred()
    if rng.random() < 0.3:
        return None
    return core_v1.Affinity(podAffinity=positive, podAntiAffinity=negative)


def random_pod(rng: random.Random, name: str, node: str | None, chance: float) -> Any:
    namespace = rng.choice(["default", "default", "ns-a", "ns-b", "unlisted"])
    p = make_pod(name, namespace).obj
    p.metadata.uid = f"uid-{namespace}-{name}"
    p.metadata.labels = random_labels(rng) or None
    p.spec.nodeName = node
    p.spec.affinity = random_affinity(rng, chance)
    return p


def random_node(rng: random.Random, i: int) -> Any:
    n = make_node(f"n{i:03d}").obj
    for key, values in (("zone", ["z1", "z2", "z3", None]), ("rack", ["r1", "r2", None])):
        value = rng.choice(values)
        if value is not None:
            n.metadata.labels[key] = value
    if rng.random() < 0.1:
        n.metadata.labels = {}  # not even a hostname
    return n


class Cluster:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.cache, self.snapshot = Cache(), Snapshot()
        self.nodes = [random_node(rng, i) for i in range(rng.randint(1, 10))]
        for n in self.nodes:
            self.cache.add_node(n)
        self.pods: list[Any] = []
        self.added = 0
        for _ in range(rng.randint(0, 25)):
            self.add_pod()
        self.refresh()

    def add_pod(self) -> Any:
        node = self.rng.choice(self.nodes).metadata.name
        p = random_pod(self.rng, f"e{self.added}", node, 0.3)
        self.added += 1
        self.pods.append(p)
        self.cache.add_pod(p)
        return p

    def change(self) -> None:
        """Some pods added or deleted, a node relabelled."""
        for _ in range(self.rng.randint(1, 4)):
            if self.pods and self.rng.random() < 0.3:
                self.cache.remove_pod(self.pods.pop(self.rng.randrange(len(self.pods))))
            else:
                self.add_pod()
        if self.rng.random() < 0.5:
            i = self.rng.randrange(len(self.nodes))
            relabelled = copy.deepcopy(self.nodes[i])
            relabelled.metadata.labels = random_node(self.rng, i).metadata.labels
            self.cache.update_node(self.nodes[i], relabelled)
            self.nodes[i] = relabelled
        self.refresh()

    def refresh(self) -> None:
        self.cache.update_snapshot(self.snapshot)


# -- both paths ---------------------------------------------------------------------------------------


def status_of(status: Any) -> tuple[Any, ...] | None:
    return None if status is None else (status.code, tuple(status.reasons))


def filter_verdicts(plugin: Any, snapshot: Snapshot, pod: PodInfo, table: bool) -> Any:
    """PreFilter's status and, when it ran, each node's Filter status, with one path forced."""
    state = CycleState()
    with path(table):
        _, status = plugin.pre_filter(state, pod, snapshot.node_info_list)
    if status is not None:
        return status_of(status), state, None
    return None, state, [status_of(plugin.filter(state, pod, n)) for n in snapshot.table.nodes]


def check_batch_filter(plugin: Any, state: CycleState, pod: PodInfo, snapshot: Snapshot, rng: random.Random) -> None:
    """filter_batch and failure_signatures agree with filter on some rows in random order."""
    table = snapshot.table
    rows = np.array(rng.sample(range(len(table)), rng.randint(1, len(table))), dtype=np.int64)
    expected = [plugin.filter(state, pod, table.nodes[r]) for r in rows.tolist()]
    mask = plugin.filter_batch(state, pod, table, rows)
    assert (mask.tolist() if mask is not None else [False] * len(rows)) == [fails(s) for s in expected]
    failing = rows[[fails(s) for s in expected]]
    if len(failing):
        signatures = plugin.failure_signatures(state, pod, table, failing).tolist()
        statuses = [status_of(s) for s in expected if fails(s)]
        by_signature: dict[int, Any] = {}
        for signature, status in zip(signatures, statuses, strict=True):
            assert signature != 0
            assert by_signature.setdefault(signature, status) == status


def score_outcome(plugin: Any, snapshot: Snapshot, pod: PodInfo, table: bool) -> Any:
    state = CycleState()
    nodes = snapshot.node_info_list
    with path(table):
        status = plugin.pre_score(state, pod, nodes)
    if status is not None:
        return status_of(status), state, None
    return None, state, [plugin.score(state, pod, n) for n in snapshot.table.nodes]


def check_batch_score(plugin: Any, state: CycleState, pod: PodInfo, snapshot: Snapshot, rng: random.Random) -> None:
    table = snapshot.table
    rows = np.array(rng.sample(range(len(table)), rng.randint(1, len(table))), dtype=np.int64)
    expected = [plugin.score(state, pod, table.nodes[r]) for r in rows.tolist()]
    raw = plugin.score_batch(state, pod, table, rows)
    assert raw.dtype == np.int64 and raw.tolist() == expected
    normalized = list(expected)
    assert plugin.normalize_score(state, pod, normalized) is None
    assert plugin.normalize_score_batch(state, pod, raw).tolist() == normalized


@SETTINGS
@given(seed=st.integers(0, 2**64 - 1))
def test_table_and_pod_paths_agree_as_the_cluster_changes(seed: int) -> None:
    rng = random.Random(seed)
    cluster = Cluster(rng)
    by_table = ipa.new(None, handle(cluster))  # kept across changes: its memo columns refresh
    for step in range(4):
        if step:
            cluster.change()
        for i in range(3):
            incoming = PodInfo(random_pod(rng, f"in{step}-{i}", None, 0.7))
            by_pods = ipa.new(None, handle(cluster))
            filtered = filter_verdicts(by_table, cluster.snapshot, incoming, table=True)
            assert filtered[0::2] == filter_verdicts(by_pods, cluster.snapshot, incoming, table=False)[0::2]
            if filtered[0] is None:
                check_batch_filter(by_table, filtered[1], incoming, cluster.snapshot, rng)
            scored = score_outcome(by_table, cluster.snapshot, incoming, table=True)
            assert scored[0::2] == score_outcome(by_pods, cluster.snapshot, incoming, table=False)[0::2]
            if scored[0] is None:
                check_batch_score(by_table, scored[1], incoming, cluster.snapshot, rng)


@SETTINGS
@given(seed=st.integers(0, 2**64 - 1), table=st.booleans())
def test_add_and_remove_pod_match_a_pre_filter_over_the_changed_cluster(seed: int, table: bool) -> None:
    """A PreFilter state with pods added (as nominated pods are) or removed (as preemption victims
    are) filters like a PreFilter over the cluster that has them, or lacks them."""
    rng = random.Random(seed)
    cluster = Cluster(rng)
    plugin = ipa.new(None, handle(cluster))
    incoming = PodInfo(random_pod(rng, "in", None, 0.8))
    before, state, unchanged = filter_verdicts(plugin, cluster.snapshot, incoming, table)
    if before is not None:
        return  # Skip (or a rejection): no state to update
    removed = rng.sample(cluster.pods, min(len(cluster.pods), rng.randint(0, 3)))
    added = [random_pod(rng, f"x{i}", rng.choice(cluster.nodes).metadata.name, 0.6) for i in range(rng.randint(0, 3))]
    changed = state.clone()
    for p in removed:
        node = cluster.snapshot.get(p.spec.nodeName)
        assert plugin.remove_pod(changed, incoming, PodInfo(p), node) is None
        cluster.cache.remove_pod(p)
    for p in added:
        cluster.cache.add_pod(p)
        cluster.refresh()  # the node with the pod, as AddPod receives it
        assert plugin.add_pod(changed, incoming, PodInfo(p), cluster.snapshot.get(p.spec.nodeName)) is None
    cluster.refresh()
    nodes = cluster.snapshot.table.nodes
    got = [status_of(plugin.filter(changed, incoming, n)) for n in nodes]
    # The state cloned before the changes is untouched by them.
    assert [status_of(plugin.filter(state, incoming, n)) for n in nodes] == unchanged
    fresh = ipa.new(None, handle(cluster))
    after, _, want = filter_verdicts(fresh, cluster.snapshot, incoming, table)
    if after is not None:  # the changed cluster has nothing left to check: every node passes
        assert got == [None] * len(nodes)
        return
    assert got == want
    check_batch_filter(plugin, changed, incoming, cluster.snapshot, rng)


def test_skip_and_parse_errors_are_the_same_on_both_paths() -> None:
    rng = random.Random(7)
    cluster = Cluster(rng)
    bad = make_pod("bad").obj
    bad.spec.affinity = core_v1.Affinity(
        podAffinity=core_v1.PodAffinity(
            requiredDuringSchedulingIgnoredDuringExecution=[
                core_v1.PodAffinityTerm(
                    topologyKey="zone",
                    labelSelector=meta_v1.LabelSelector(
                        matchExpressions=[meta_v1.LabelSelectorRequirement(key="a", operator="Bad")]
                    ),
                )
            ]
        )
    )
    for table in (True, False):
        status, _, _ = filter_verdicts(ipa.new(None, handle(cluster)), cluster.snapshot, PodInfo(bad), table)
        assert status is not None and status[0] == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# -- the whole search ---------------------------------------------------------------------------------


def _framework(snapshot: Snapshot) -> Any:
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}},
            }
        ],
    }
    registry = in_tree_registry()
    return build_frameworks(load_data(raw, registry), registry, services(snapshot=snapshot, namespaces=NAMESPACES))[
        "default-scheduler"
    ]


def _search(algorithm: Algorithm, fwk: Any, pod: PodInfo, table: bool) -> tuple[Any, ...]:
    with path(table):
        try:
            r = algorithm.schedule_pod(fwk, CycleState(), pod, plain_filter)
        except FitError as e:
            statuses = {n: status_of(s) for n, s in e.diagnosis.node_to_status.statuses.items()}
            return ("fit-error", str(e), statuses)
    scores = [(s.plugin, s.raw.tolist(), s.normalized.tolist()) for s in r.plugin_scores]
    return (r.host, r.top, [n.name for n in r.scored], r.totals.tolist(), scores)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_search_with_batch_methods_matches_per_node_search(seed: int) -> None:
    rng = random.Random(seed)
    cluster = Cluster(rng)
    for _ in range(rng.randint(40, 90)):
        cluster.nodes.append(random_node(rng, len(cluster.nodes)))
        cluster.cache.add_node(cluster.nodes[-1])
    for _ in range(rng.randint(40, 90)):
        cluster.add_pod()
    cluster.refresh()
    fwk = _framework(cluster.snapshot)
    batch = Algorithm(cluster.cache, cluster.snapshot, percentage=100, seed=seed, batch=True)
    plain = Algorithm(cluster.cache, cluster.snapshot, percentage=100, seed=seed, batch=False)
    for i in range(4):
        pod = PodInfo(random_pod(rng, f"p{i}", None, 0.7))
        outcome = _search(batch, fwk, pod, table=True)
        assert outcome == _search(plain, fwk, pod, table=False)
        if outcome[0] != "fit-error":  # bind it there: the next search sees the node's row updated
            bound = copy.deepcopy(pod.pod)
            bound.spec.nodeName = outcome[0]
            cluster.cache.add_pod(bound)
