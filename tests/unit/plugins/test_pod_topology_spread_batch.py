"""PodTopologySpread over the NodeTable agrees with its per-node path on random clusters: PreFilter
state, Filter verdicts and statuses, scores and their normalization, after incremental cluster
changes, and AddPod/RemovePod against a PreFilter over the changed cluster; the whole search gives
the same results with and without batch methods; and pods with equal hint keys get equal hints."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lightkube.models import core_v1, meta_v1
from lightkube.resources import core_v1 as res

from builders import plugin_handle, profile_framework, web_service, without_table
from kubesched.cache import Cache, NodeInfo, PodInfo, Snapshot
from kubesched.cache.table import RowNodes
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins import pod_topology_spread as pts
from kubesched.scheduler.algorithm import Algorithm, plain_filter
from kubesched.scheduler.fit_error import FitError

Pick = Callable[[Sequence[Any]], Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
KEYS = [ZONE, ZONE, HOST, "rack"]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def Handle(snapshot: Snapshot | None, *, workloads: bool = False) -> Any:
    """A handle whose Services (with `workloads`) select `app: web` in both namespaces."""
    return plugin_handle(snapshot, services=[web_service("default"), web_service("prod")] if workloads else ())


# -- random clusters -------------------------------------------------------------------------------------


def random_node(pick: Pick, i: int) -> Any:
    labels = {HOST: f"n{i:02d}"} if pick([True, True, True, False]) else {}
    for key, values in ((ZONE, ["z1", "z2", "z3", "", None]), ("rack", ["r1", "r2", None]), ("pool", ["a", None])):
        value = pick(values)
        if value is not None:
            labels[key] = value
    taints = [{"key": pick(["t1", "t2"]), "effect": pick(["NoSchedule", "NoExecute", "PreferNoSchedule"])}]
    body = {
        "metadata": {"name": f"n{i:02d}", "uid": f"uid-n{i}", "labels": labels},
        "spec": {"taints": taints if pick([False, False, True]) else None},
        "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "110"}},
    }
    return msgspec.convert(body, res.Node)


def random_pod(pick: Pick, name: str, on: str | None) -> Any:
    labels = {k: v for k, v in (("app", pick(["web", "db", None])), ("rev", pick(["1", "2", None]))) if v}
    meta: dict[str, Any] = {
        "name": name,
        "uid": f"uid-{name}",
        "namespace": pick(["default", "default", "prod"]),
        "labels": labels or None,
    }
    if pick([False, False, False, True]):
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return msgspec.convert({"metadata": meta, "spec": {"containers": [{"name": "c"}], "nodeName": on}}, res.Pod)


def random_constraint(pick: Pick, when: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "maxSkew": pick([1, 1, 2, 3]),
        "topologyKey": pick(KEYS),
        "whenUnsatisfiable": when or pick(["DoNotSchedule", "ScheduleAnyway"]),
    }
    selector = pick(["web", "web", "in", "empty", None])
    if selector == "web":
        body["labelSelector"] = {"matchLabels": {"app": "web"}}
    elif selector == "in":
        body["labelSelector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}
    elif selector == "empty":
        body["labelSelector"] = {}
    for name, values in (
        ("minDomains", [None, None, 1, 2, 4]),
        ("nodeAffinityPolicy", [None, "Honor", "Ignore"]),
        ("nodeTaintsPolicy", [None, "Honor", "Ignore"]),
        ("matchLabelKeys", [None, None, ["rev"]]),
    ):
        value = pick(values)
        if value is not None:
            body[name] = value
    return body


def random_incoming(pick: Pick, name: str = "incoming", when: str | None = None) -> PodInfo:
    p = random_pod(pick, name, None)
    p.metadata.deletionTimestamp = None
    constraints = [random_constraint(pick, when) for _ in range(pick([1, 1, 2, 3]))]
    p.spec.topologySpreadConstraints = msgspec.convert(constraints, list[core_v1.TopologySpreadConstraint])
    p.spec.nodeSelector = pick([None, None, {"pool": "a"}])
    if pick([False, False, True]):
        term = {"matchExpressions": [{"key": "rack", "operator": pick(["In", "NotIn"]), "values": ["r1"]}]}
        required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        p.spec.affinity = msgspec.convert({"nodeAffinity": required}, core_v1.Affinity)
    if pick([False, True]):
        p.spec.tolerations = [core_v1.Toleration(key=pick(["t1", "t2"]), operator="Exists")]
    return PodInfo(p)


def build(pick: Pick, nodes: int, pods: int) -> tuple[Cache, Snapshot]:
    cache, snapshot = Cache(), Snapshot()
    for i in range(nodes):
        cache.add_node(random_node(pick, i))
    for i in range(pods):
        cache.add_pod(random_pod(pick, f"e{i}", pick([f"n{j:02d}" for j in range(nodes)] + ["gone"])))
    cache.update_snapshot(snapshot)
    return cache, snapshot


def change(pick: Pick, cache: Cache, snapshot: Snapshot, step: int) -> None:
    """Some pods added or removed and a node relabelled, then the snapshot (and table) refreshed."""
    nodes = snapshot.node_info_list
    for i in range(pick([1, 2, 3])):
        cache.add_pod(random_pod(pick, f"s{step}-{i}", pick(nodes).name))
    existing = [p for n in nodes for p in n.pods]
    if existing and pick([False, True]):
        cache.remove_pod(pick(existing).pod)
    victim = pick(nodes).node
    relabelled = copy.deepcopy(victim)
    relabelled.metadata.labels = {**(victim.metadata.labels or {}), ZONE: pick(["z1", "z4"])}
    cache.update_node(victim, relabelled)
    cache.update_snapshot(snapshot)


@st.composite
def clusters(draw: st.DrawFn) -> tuple[random.Random, Cache, Snapshot]:
    rng = random.Random(draw(st.integers(0, 2**64 - 1)))
    cache, snapshot = build(rng.choice, rng.randint(1, 9), rng.randint(0, 16))
    return rng, cache, snapshot


# -- comparing the two paths -----------------------------------------------------------------------------


def pair(snapshot: Snapshot, workloads: bool = False) -> tuple[Any, Any]:
    return pts.new(None, Handle(snapshot, workloads=workloads)), pts.new(
        None, Handle(without_table(snapshot), workloads=workloads)
    )


def domains_of(state: CycleState) -> list[tuple[dict[str, int], int, int]]:
    pre = state.read(pts.PRE_FILTER_STATE_KEY)
    return [(d.as_dict(), d.size, d.minimum) for d in pre.domains]


def pre_filter_both(
    snapshot: Snapshot, pod: PodInfo, nodes: list[NodeInfo] | None = None
) -> tuple[Any, CycleState, Any, CycleState] | None:
    """PreFilter over the table and node by node (over `nodes`, by default all of them)."""
    table_plugin, plain_plugin = pair(snapshot)
    states = CycleState(), CycleState()
    results = [
        table_plugin.pre_filter(states[0], pod, snapshot.node_info_list if nodes is None else nodes),
        plain_plugin.pre_filter(states[1], pod, list(snapshot.node_info_list) if nodes is None else nodes),
    ]
    assert results[0] == results[1]
    if results[0][1] is not None:
        assert results[0][1].code == Code.SKIP
        return None
    assert domains_of(states[0]) == domains_of(states[1])
    return table_plugin, states[0], plain_plugin, states[1]


def check_filter(snapshot: Snapshot, pod: PodInfo, plugin: Any, state: CycleState, reference: list[Any]) -> None:
    table = snapshot.table
    rows = np.arange(len(table), dtype=np.int64)
    mask = plugin.filter_batch(state, pod, table, rows)
    verdicts = [plugin.filter(state, pod, n) for n in table.nodes]
    assert verdicts == reference
    assert (mask.tolist() if mask is not None else [False] * len(rows)) == [v is not None for v in verdicts]
    signatures = plugin.failure_signatures(state, pod, table, rows).tolist()
    by_signature: dict[int, Status | None] = {}
    for signature, verdict in zip(signatures, verdicts, strict=True):
        assert by_signature.setdefault(signature, verdict) == verdict


def check_scores(snapshot: Snapshot, pod: PodInfo, rows: np.ndarray, workloads: Any) -> None:
    table_plugin, plain_plugin = pair(snapshot, workloads)
    nodes = [snapshot.table.nodes[r] for r in rows.tolist()]
    results = []
    for plugin, given_nodes in ((table_plugin, RowNodes(snapshot.table, rows)), (plain_plugin, nodes)):
        state = CycleState()
        status = plugin.pre_score(state, pod, given_nodes)
        if status is not None:
            assert status.code == Code.SKIP
            results.append(None)
            continue
        raw = [plugin.score(state, pod, n) for n in nodes]
        assert plugin.score_batch(state, pod, snapshot.table, rows).tolist() == raw
        normalized = list(raw)
        plugin.normalize_score(state, pod, normalized)
        assert plugin.normalize_score_batch(state, pod, np.asarray(raw, dtype=np.int64)).tolist() == normalized
        assert all(0 <= s <= 100 for s in normalized)
        results.append((raw, normalized))
    assert results[0] == results[1]


@SETTINGS
@given(case=clusters())
def test_filter_on_the_table_matches_the_per_node_path(case: Any) -> None:
    rng, cache, snapshot = case
    for step in range(3):
        pod = random_incoming(rng.choice, when=rng.choice(["DoNotSchedule", None]))
        found = pre_filter_both(snapshot, pod)
        if found is not None:
            table_plugin, table_state, plain_plugin, plain_state = found
            reference = [plain_plugin.filter(plain_state, pod, n) for n in snapshot.table.nodes]
            check_filter(snapshot, pod, table_plugin, table_state, reference)
            check_filter(snapshot, pod, plain_plugin, plain_state, reference)
        some = rng.sample(snapshot.node_info_list, rng.randint(1, len(snapshot.node_info_list)))
        pre_filter_both(snapshot, pod, some)  # some nodes only: the same rows of the table
        change(rng.choice, cache, snapshot, step)


@SETTINGS
@given(case=clusters())
def test_scores_on_the_table_match_the_per_node_path(case: Any) -> None:
    rng, cache, snapshot = case
    for step in range(3):
        n = len(snapshot.table)
        rows = np.array(rng.sample(range(n), rng.randint(1, n)), dtype=np.int64)
        pod = random_incoming(rng.choice, when=rng.choice(["ScheduleAnyway", None]))
        workloads = False
        if rng.random() < 0.3:  # the system default constraints, with the selector of a Service
            pod.pod.spec.topologySpreadConstraints = None
            workloads = True
        check_scores(snapshot, pod, rows, workloads)
        change(rng.choice, cache, snapshot, step)


@SETTINGS
@given(case=clusters())
def test_add_and_remove_pod_match_a_pre_filter_over_the_changed_cluster(case: Any) -> None:
    rng, cache, snapshot = case
    pod = random_incoming(rng.choice, when="DoNotSchedule")
    for c in pod.pod.spec.topologySpreadConstraints:  # AddPod counts what an empty selector matches
        c.labelSelector = c.labelSelector if c.labelSelector != meta_v1.LabelSelector() else None
    found = pre_filter_both(snapshot, pod)
    if found is None:
        return
    table_plugin, state, _, _ = found
    for step in range(4):
        target = rng.choice(snapshot.node_info_list)
        counted = [p for p in target.pods if p.pod.metadata.deletionTimestamp is None]
        if counted and rng.random() < 0.4:
            other = rng.choice(counted)
            assert table_plugin.remove_pod(state, pod, other, target) is None
            cache.remove_pod(other.pod)
        else:
            added = random_pod(rng.choice, f"x{step}", target.name)
            added.metadata.deletionTimestamp = None
            assert table_plugin.add_pod(state, pod, PodInfo(added), target) is None
            cache.add_pod(added)
        cache.update_snapshot(snapshot)
        fresh = pre_filter_both(snapshot, pod)
        assert fresh is not None
        assert domains_of(state) == domains_of(fresh[1])
        check_filter(
            snapshot, pod, table_plugin, state, [fresh[2].filter(fresh[3], pod, n) for n in snapshot.table.nodes]
        )
        state = state.clone()


# -- the whole search -----------------------------------------------------------------------------------


def framework(snapshot: Snapshot) -> Any:
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [{"schedulerName": "default-scheduler"}],
    }
    return profile_framework(snapshot, raw)


def outcome(algorithm: Algorithm, fwk: Any, pod: PodInfo) -> tuple[Any, ...]:
    try:
        r = algorithm.schedule_pod(fwk, CycleState(), pod, plain_filter)
    except FitError as e:
        statuses = {n: (s.code, s.plugin, tuple(s.reasons)) for n, s in e.diagnosis.node_to_status.statuses.items()}
        return "fit-error", str(e), statuses
    scores = [(s.plugin, s.raw.tolist(), s.normalized.tolist()) for s in r.plugin_scores]
    return r.host, [n.name for n in r.scored], r.totals.tolist(), scores, r.top


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_search_with_batch_methods_matches_per_node_search(seed: int) -> None:
    rng = random.Random(seed)
    cache, snapshot = build(rng.choice, rng.randint(2, 40), rng.randint(0, 60))
    fwk = framework(snapshot)
    batch = Algorithm(cache, snapshot, percentage=100, seed=seed, batch=True)
    plain = Algorithm(cache, snapshot, percentage=100, seed=seed, batch=False)
    for i in range(3):
        pod = random_incoming(rng.choice, f"p{i}")
        assert outcome(batch, fwk, pod) == outcome(plain, fwk, pod)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_pods_with_equal_hint_keys_get_equal_hints(seed: int) -> None:
    rng = random.Random(seed)
    plugin = pts.new(None, Handle(None, workloads=rng.random() < 0.5))
    queued = [random_incoming(rng.choice, f"q{i}").pod for i in range(12)]
    for p in queued[::3]:
        p.spec.topologySpreadConstraints = None
    for p in queued[1::4]:  # a copy under another name: same key, possibly other labels
        twin = copy.deepcopy(p)
        twin.metadata.name, twin.metadata.uid = f"{p.metadata.name}-twin", f"uid-{p.metadata.name}-twin"
        twin.metadata.labels = {"app": rng.choice(["web", "db"]), "rev": rng.choice(["1", "2"])}
        queued.append(twin)
    registered = {r.event.resource: r.hint for r in plugin.events_to_register()}
    for _ in range(20):
        if rng.random() < 0.5:
            old = random_pod(rng.choice, "changed", rng.choice(["n00", None]))
            new = copy.deepcopy(old)
            new.metadata.labels = {"app": rng.choice(["web", "db"])}
            new.spec.tolerations = rng.choice([None, [core_v1.Toleration(operator="Exists")]])
            event = rng.choice([(None, new), (old, None), (old, new)])
            hint = registered["Pod"]
        else:
            old, new = random_node(rng.choice, 0), random_node(rng.choice, 0)
            event = rng.choice([(None, new), (old, None), (old, new)])
            hint = registered["Node"]
        answers: dict[Any, Any] = {}
        for p in queued:
            try:
                answer = hint(p, *event)
            except ValueError:
                answer = "error"
            assert answers.setdefault(plugin.hint_key(p), answer) == answer
