"""PodTopologySpread: skew and its global minimum, inclusion policies, missing labels, AddPod/RemovePod,
scores and their normalization, default constraints, arguments and queueing hints. Every filter and
score table is checked on both the per-node and the NodeTable path."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np
import pytest
from lightkube.models import apps_v1, core_v1, meta_v1
from lightkube.resources import apps_v1 as apps_res
from lightkube.resources import core_v1 as res

from builders import without_table
from kubesched.cache import Cache, NodeInfo, PodInfo, Snapshot
from kubesched.config import load_data
from kubesched.config.load import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent, QueueingHint
from kubesched.framework.status import Code, Status
from kubesched.plugin.testing import standalone_handle
from kubesched.plugins import pod_topology_spread as pts
from kubesched.plugins.registry import in_tree_registry
from kubesched.plugins.resource_scoring import ArgsError

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NOT_MATCH = "node(s) didn't match pod topology spread constraints"
MISSING = NOT_MATCH + " (missing required label)"
QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
UNSCHEDULABLE = (Code.UNSCHEDULABLE, NOT_MATCH)
UNRESOLVABLE = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MISSING)
OK = None


def node(name: str, zone: str | None = None, *, taint: str | None = None, **labels: str) -> Any:
    all_labels = {HOST: name, **({ZONE: zone} if zone else {}), **labels}
    spec: dict[str, Any] = {"taints": [{"key": taint, "value": "true", "effect": "NoSchedule"}]} if taint else {}
    body = {"metadata": {"name": name, "labels": all_labels}, "spec": spec}
    return msgspec.convert({**body, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}, res.Node)


def pod(name: str, on: str | None = None, namespace: str = "default", deleting: bool = False, **labels: str) -> Any:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": labels or None}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return msgspec.convert({"metadata": meta, "spec": {"containers": [{"name": "c"}], "nodeName": on}}, res.Pod)


def tsc(key: str = ZONE, skew: int = 1, when: str = "DoNotSchedule", selector: Any = "app=web", **extra: Any) -> Any:
    """A constraint; `selector` is `k=v` (matchLabels), None (no selector) or `{}` (empty selector)."""
    body: dict[str, Any] = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}
    if isinstance(selector, str):
        k, v = selector.split("=")
        body["labelSelector"] = {"matchLabels": {k: v}}
    elif selector is not None:
        body["labelSelector"] = selector
    return msgspec.convert(body, core_v1.TopologySpreadConstraint)


def incoming(*constraints: Any, labels: dict[str, str] | None = None, **spec: Any) -> PodInfo:
    p = pod("incoming", **(labels if labels is not None else {"app": "web"}))
    p.spec.topologySpreadConstraints = list(constraints) or None
    for name, value in spec.items():
        setattr(p.spec, name, value)
    return PodInfo(p)


CONTROLLERS = {
    "ReplicaSet": apps_res.ReplicaSet,
    "ReplicationController": res.ReplicationController,
    "StatefulSet": apps_res.StatefulSet,
}


def Handle(snapshot: Snapshot | None, workloads: Workloads | None = None) -> Any:
    """A handle whose informers hold the workloads' Services and controllers."""
    objects: dict[type[Any], list[Any]] = {}
    if workloads is not None:
        objects[res.Service] = list(workloads.svcs)
        for (kind, namespace, name), obj in workloads.objects.items():
            obj.metadata = meta_v1.ObjectMeta(name=name, namespace=namespace)
            objects.setdefault(CONTROLLERS[kind], []).append(obj)
    return standalone_handle(snapshot=snapshot, objects=objects)


def cluster(nodes: Sequence[Any], pods: Sequence[Any] = ()) -> Snapshot:
    cache, snapshot = Cache(), Snapshot()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    cache.update_snapshot(snapshot)
    return snapshot


def plugins(snapshot: Snapshot, args: Any = None, workloads: Any = None) -> tuple[Any, Any]:
    """The plugin over the NodeTable, and one over the plain node list."""
    table = pts.new(args, Handle(snapshot, workloads))
    plain = pts.new(args, Handle(without_table(snapshot), workloads))
    return table, plain


def verdicts(snapshot: Snapshot, p: PodInfo, args: Any = None) -> dict[str, tuple[Code, str] | None]:
    """Filter's verdict per node, checked equal on both paths (and with `filter_batch`)."""
    table_plugin, plain_plugin = plugins(snapshot, args)
    out: list[dict[str, tuple[Code, str] | None]] = []
    for plugin, nodes in ((table_plugin, snapshot.node_info_list), (plain_plugin, list(snapshot.node_info_list))):
        state = CycleState()
        result, status = plugin.pre_filter(state, p, nodes)
        assert result is None and status is None
        got = {}
        for n in snapshot.node_info_list:
            s = plugin.filter(state, p, n)
            got[n.name] = None if s is None else (s.code, s.message)
        out.append(got)
        rows = np.arange(len(snapshot.table), dtype=np.int64)
        mask = plugin.filter_batch(state, p, snapshot.table, rows)
        assert [bool(x) for x in (mask if mask is not None else np.zeros(len(rows)))] == [
            got[n] is not None for n in snapshot.table.names
        ]
    assert out[0] == out[1]
    return out[0]


def scores(snapshot: Snapshot, p: PodInfo, names: Sequence[str] | None = None, args: Any = None, workloads: Any = None):
    """(raw, normalized) per scored node, checked equal on both paths and with the batch methods."""
    chosen = [n for n in snapshot.node_info_list if names is None or n.name in names]
    table_plugin, plain_plugin = plugins(snapshot, args, workloads)
    results = []
    for plugin in (table_plugin, plain_plugin):
        state = CycleState()
        assert plugin.pre_score(state, p, chosen) is None
        raw = [plugin.score(state, p, n) for n in chosen]
        normalized = list(raw)
        assert plugin.normalize_score(state, p, normalized) is None
        rows = np.array([snapshot.table.index[n.name] for n in chosen], dtype=np.int64)
        batch = plugin.score_batch(state, p, snapshot.table, rows)
        assert batch.tolist() == raw
        assert plugin.normalize_score_batch(state, p, batch).tolist() == normalized
        results.append({n.name: (r, s) for n, r, s in zip(chosen, raw, normalized, strict=True)})
    assert results[0] == results[1]
    return results[0]


# -- Filter ----------------------------------------------------------------------------------------------

ZONES = [node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b"), node("c1", "c"), node("c2", "c")]
WEB = [pod("w1", "a1", app="web"), pod("w2", "a1", app="web"), pod("w3", "a2", app="web"), pod("w4", "c1", app="web")]


@pytest.mark.parametrize(
    ("constraint", "labels", "expected"),
    [
        # zone counts a=3, b=0, c=1; the pod matches itself: count + 1 - 0 must be <= maxSkew
        (tsc(skew=1), None, {"a": UNSCHEDULABLE, "b": OK, "c": UNSCHEDULABLE}),
        (tsc(skew=2), None, {"a": UNSCHEDULABLE, "b": OK, "c": OK}),
        (tsc(skew=3), None, {"a": UNSCHEDULABLE, "b": OK, "c": OK}),
        (tsc(skew=4), None, {"a": OK, "b": OK, "c": OK}),
        # a pod its own selector does not match adds nothing to the count
        (tsc(skew=1), {"app": "other"}, {"a": UNSCHEDULABLE, "b": OK, "c": OK}),
        (tsc(skew=3), {"app": "other"}, {"a": OK, "b": OK, "c": OK}),
        # an empty selector counts no pod but matches the pod itself; no selector matches nothing
        (tsc(skew=1, selector={}), None, {"a": OK, "b": OK, "c": OK}),
        (tsc(skew=1, selector=None), None, {"a": OK, "b": OK, "c": OK}),
    ],
)
def test_skew_against_the_global_minimum(constraint: Any, labels: Any, expected: dict[str, Any]) -> None:
    got = verdicts(cluster(ZONES, WEB), incoming(constraint, labels=labels))
    assert got == {n.metadata.name: expected[n.metadata.labels[ZONE]] for n in ZONES}


def test_hostname_spread_counts_each_node() -> None:
    nodes = [node(f"n{i}") for i in range(1, 4)]
    pods = [pod("w1", "n1", app="web"), pod("w2", "n2", app="web"), pod("w3", "n2", app="web")]
    got = verdicts(cluster(nodes, pods), incoming(tsc(HOST)))
    assert got == {"n1": UNSCHEDULABLE, "n2": UNSCHEDULABLE, "n3": OK}


def test_only_pods_of_the_namespace_not_being_deleted_count() -> None:
    pods = [
        pod("w1", "a1", app="web"),
        pod("other-ns", "b1", namespace="prod", app="web"),
        pod("leaving", "b1", deleting=True, app="web"),
    ]
    got = verdicts(cluster(ZONES[:3], pods), incoming(tsc()))
    assert got == {"a1": UNSCHEDULABLE, "a2": UNSCHEDULABLE, "b1": OK}


def test_a_node_without_a_key_is_unresolvable_and_not_a_domain() -> None:
    nodes = [node("a1", "a"), node("b1", "b"), node("bare")]
    pods = [pod("w1", "a1", app="web"), pod("w2", "bare", app="web")]  # pods on "bare" count nowhere
    got = verdicts(cluster(nodes, pods), incoming(tsc(), tsc(HOST, skew=5)))
    assert got == {"a1": UNSCHEDULABLE, "b1": OK, "bare": UNRESOLVABLE}
    # a node must carry every constraint's key to make up a domain of any constraint
    nodes = [node("a1", "a"), node("b1", "b", rack="r1"), node("b2", "b", rack="r2")]
    pods = [pod("w1", "b1", app="web"), pod("w2", "b2", app="web")]
    got = verdicts(cluster(nodes, pods), incoming(tsc(skew=1), tsc("rack", skew=9)))
    assert got == {"a1": UNRESOLVABLE, "b1": OK, "b2": OK}  # zone b is the only domain: skew 2 + 1 - 2


def test_the_first_failing_constraint_decides_the_status() -> None:
    nodes = [node("a1", "a"), node("a2", "a", rack="r"), node("b1", "b", rack="r")]
    pods = [pod("w1", "a2", app="web"), pod("w2", "a2", app="web")]
    # a1 is both too skewed by zone and without a rack: the constraints' order decides
    got = verdicts(cluster(nodes, pods), incoming(tsc(skew=1), tsc("rack", skew=1)))
    assert got == {"a1": UNSCHEDULABLE, "a2": UNSCHEDULABLE, "b1": OK}
    got = verdicts(cluster(nodes, pods), incoming(tsc("rack", skew=1), tsc(skew=1)))
    assert got == {"a1": UNRESOLVABLE, "a2": UNSCHEDULABLE, "b1": OK}


@pytest.mark.parametrize(
    ("min_domains", "expected"),
    [
        (None, {"a": OK, "b": OK}),  # minimum 2: 2 + 1 - 2 <= 1
        (2, {"a": OK, "b": OK}),
        (3, {"a": UNSCHEDULABLE, "b": UNSCHEDULABLE}),  # 2 domains < 3: the minimum counts as 0
    ],
)
def test_min_domains(min_domains: int | None, expected: dict[str, Any]) -> None:
    nodes = [node("a1", "a"), node("b1", "b")]
    pods = [pod(f"w{i}", n, app="web") for i, n in enumerate(["a1", "a1", "b1", "b1"])]
    extra = {} if min_domains is None else {"minDomains": min_domains}
    got = verdicts(cluster(nodes, pods), incoming(tsc(**extra)))
    assert got == {"a1": expected["a"], "b1": expected["b"]}


def test_node_affinity_policy() -> None:
    nodes = [node("a1", "a", pool="web"), node("b1", "b", pool="web"), node("c1", "c", pool="batch")]
    pods = [pod("w1", "a1", app="web"), pod("w2", "b1", app="web"), pod("w3", "b1", app="web")]
    snapshot = cluster(nodes, pods)
    honor = verdicts(snapshot, incoming(tsc(nodeAffinityPolicy="Honor"), nodeSelector={"pool": "web"}))
    assert honor == {"a1": OK, "b1": UNSCHEDULABLE, "c1": OK}  # zone c is not a domain: minimum 1
    ignore = verdicts(snapshot, incoming(tsc(nodeAffinityPolicy="Ignore"), nodeSelector={"pool": "web"}))
    assert ignore == {"a1": UNSCHEDULABLE, "b1": UNSCHEDULABLE, "c1": OK}  # zone c counts with 0
    default = verdicts(snapshot, incoming(tsc(), nodeSelector={"pool": "web"}))
    assert default == honor


def test_node_taints_policy() -> None:
    nodes = [node("a1", "a"), node("b1", "b"), node("c1", "c", taint="maintenance")]
    pods = [pod("w1", "a1", app="web"), pod("w2", "b1", app="web")]
    snapshot = cluster(nodes, pods)
    honor = verdicts(snapshot, incoming(tsc(nodeTaintsPolicy="Honor")))
    assert honor == {"a1": OK, "b1": OK, "c1": OK}  # zone c is not a domain: minimum 1
    assert verdicts(snapshot, incoming(tsc())) == {"a1": UNSCHEDULABLE, "b1": UNSCHEDULABLE, "c1": OK}
    tolerated = incoming(tsc(nodeTaintsPolicy="Honor"), tolerations=[core_v1.Toleration(operator="Exists")])
    assert verdicts(snapshot, tolerated) == {"a1": UNSCHEDULABLE, "b1": UNSCHEDULABLE, "c1": OK}


def test_match_label_keys_narrow_the_selector_to_the_pods_values() -> None:
    nodes = [node("a1", "a"), node("b1", "b")]
    pods = [
        pod("old1", "a1", app="web", rev="1"),
        pod("old2", "a1", app="web", rev="1"),
        pod("new1", "b1", app="web", rev="2"),
    ]
    snapshot = cluster(nodes, pods)
    p = incoming(tsc(matchLabelKeys=["rev"]), labels={"app": "web", "rev": "2"})
    assert verdicts(snapshot, p) == {"a1": OK, "b1": UNSCHEDULABLE}
    without = incoming(tsc(matchLabelKeys=["rev"]), labels={"app": "web"})  # key absent: selector unchanged
    assert verdicts(snapshot, without) == {"a1": UNSCHEDULABLE, "b1": OK}
    nothing = incoming(tsc(selector=None, matchLabelKeys=["rev"]), labels={"app": "web", "rev": "2"})
    assert verdicts(snapshot, nothing) == {"a1": OK, "b1": OK}


def test_pre_filter_skips_without_hard_constraints_and_reports_bad_selectors() -> None:
    snapshot = cluster(ZONES, WEB)
    plugin, _ = plugins(snapshot)
    for p in (incoming(), incoming(tsc(when="ScheduleAnyway"))):
        state = CycleState()
        assert plugin.pre_filter(state, p, snapshot.node_info_list)[1].code == Code.SKIP
        assert state.get(pts.PRE_FILTER_STATE_KEY) is None
    bad = tsc(selector={"matchExpressions": [{"key": "app", "operator": "In", "values": []}]})
    _, status = plugin.pre_filter(CycleState(), incoming(bad), snapshot.node_info_list)
    assert status.code == Code.ERROR
    assert status.message.startswith("get constraints from pod: obtaining pod's hard topology spread constraints: ")
    no_state = plugin.filter(CycleState(), incoming(tsc()), snapshot.node_info_list[0])
    assert no_state == Status.error('reading "PreFilterPodTopologySpread" from cycleState: not found')


def test_failure_signatures_name_the_status() -> None:
    nodes = [node("a1", "a"), node("b1", "b"), node("bare")]
    snapshot = cluster(nodes, [pod("w1", "a1", app="web"), pod("w2", "a1", app="web")])
    plugin, _ = plugins(snapshot)
    p = incoming(tsc())
    state = CycleState()
    plugin.pre_filter(state, p, snapshot.node_info_list)
    rows = np.array([snapshot.table.index[n] for n in ("a1", "b1", "bare")], dtype=np.int64)
    assert plugin.failure_signatures(state, p, snapshot.table, rows).tolist() == [2, 0, 1]


# -- AddPod / RemovePod ------------------------------------------------------------------------------------


def _state(plugin: Any, p: PodInfo, snapshot: Snapshot) -> CycleState:
    state = CycleState()
    assert plugin.pre_filter(state, p, snapshot.node_info_list) == (None, None)
    return state


def _counts(state: CycleState) -> list[dict[str, int]]:
    return [d.as_dict() for d in state.read(pts.PRE_FILTER_STATE_KEY).domains]


def test_add_and_remove_pod_move_counts_and_the_minimum() -> None:
    snapshot = cluster(ZONES, WEB)
    p = incoming(tsc(skew=1))
    for plugin in plugins(snapshot):
        state = _state(plugin, p, snapshot)
        assert _counts(state) == [{"a": 3, "b": 0, "c": 1}]
        b1 = snapshot.get("b1")
        clone = state.clone()
        assert plugin.add_pod(clone, p, PodInfo(pod("x", "b1", app="web")), b1) is None
        assert _counts(clone) == [{"a": 3, "b": 1, "c": 1}]
        assert _counts(state) == [{"a": 3, "b": 0, "c": 1}]  # the clone is independent
        assert plugin.filter(clone, p, snapshot.get("c1")) is None  # minimum now 1: 1 + 1 - 1
        assert plugin.filter(state, p, snapshot.get("c1")) == Status.unschedulable(NOT_MATCH)
        # pods of another namespace, not matching, or on a node without the keys change nothing
        plugin.add_pod(clone, p, PodInfo(pod("y", "b1", namespace="prod", app="web")), b1)
        plugin.add_pod(clone, p, PodInfo(pod("z", "b1", app="other")), b1)
        plugin.add_pod(clone, p, PodInfo(pod("v", "bare", app="web")), NodeInfo(node("bare")))
        assert _counts(clone) == [{"a": 3, "b": 1, "c": 1}]
        # a pod being deleted is not counted at PreFilter, but AddPod/RemovePod do not look
        plugin.add_pod(clone, p, PodInfo(pod("d", "b1", deleting=True, app="web")), b1)
        assert _counts(clone) == [{"a": 3, "b": 2, "c": 1}]
        for victim in ("w1", "w2", "w3"):
            plugin.remove_pod(clone, p, PodInfo(pod(victim, "a1", app="web")), snapshot.get("a1"))
        assert _counts(clone) == [{"a": 0, "b": 2, "c": 1}]
        assert plugin.filter(clone, p, snapshot.get("c1")) == Status.unschedulable(NOT_MATCH)  # 1 + 1 - 0


def test_add_pod_keeps_the_minimum_exact_when_the_last_minimal_domain_grows() -> None:
    nodes = [node("a1", "a"), node("b1", "b"), node("c1", "c")]
    snapshot = cluster(nodes)
    p = incoming(tsc(skew=1))
    plugin, _ = plugins(snapshot)
    state = _state(plugin, p, snapshot)
    domains = state.read(pts.PRE_FILTER_STATE_KEY).domains[0]
    for name, minimum in (("a1", 0), ("b1", 0), ("c1", 1), ("a1", 1), ("b1", 1), ("c1", 2)):
        plugin.add_pod(state, p, PodInfo(pod(f"x-{name}-{minimum}", name, app="web")), snapshot.get(name))
        assert domains.minimum == minimum
    plugin.remove_pod(state, p, PodInfo(pod("x", "b1", app="web")), snapshot.get("b1"))
    assert domains.minimum == 1


def test_add_pod_honours_the_inclusion_policies_of_the_incoming_pod() -> None:
    nodes = [node("a1", "a", pool="web"), node("b1", "b", pool="batch")]
    snapshot = cluster(nodes)
    p = incoming(tsc(), nodeSelector={"pool": "web"})
    plugin, _ = plugins(snapshot)
    state = _state(plugin, p, snapshot)
    plugin.add_pod(state, p, PodInfo(pod("x", "b1", app="web")), snapshot.get("b1"))
    assert _counts(state) == [{"a": 0}]
    assert plugin.add_pod(CycleState(), p, PodInfo(pod("x", "b1")), snapshot.get("b1")) == Status.error(
        'reading "PreFilterPodTopologySpread" from cycleState: not found'
    )


# -- Score -------------------------------------------------------------------------------------------------


def test_soft_constraints_score_fewer_matching_pods_higher() -> None:
    nodes = [node(f"{z}{i}", z) for z in "abc" for i in (1, 2)]
    pods = [pod(f"w{i}", "c1", app="web") for i in range(3)]
    p = incoming(tsc(when="ScheduleAnyway"), tsc(HOST, when="ScheduleAnyway"))
    got = scores(cluster(nodes, pods), p)
    # c1: 3 * ln(3 + 2) + 3 * ln(6 + 2) = 11.07; c2: 3 * ln(5) = 4.83
    assert got == {"a1": (0, 100), "a2": (0, 100), "b1": (0, 100), "b2": (0, 100), "c1": (11, 0), "c2": (5, 54)}


def test_score_weights_count_only_the_scored_nodes_domains() -> None:
    nodes = [node(f"{z}{i}", z) for z in "abc" for i in (1, 2)]
    pods = [pod("w1", "a1", app="web"), pod("w2", "b1", app="web"), pod("w3", "c1", app="web")]
    p = incoming(tsc(skew=2, when="ScheduleAnyway"))
    # two zones scored: weight ln(4); every zone counts its pods (1 * 1.386 + 1 -> 2)
    assert scores(cluster(nodes, pods), p, ["a1", "b2"]) == {"a1": (2, 100), "b2": (2, 100)}


def test_nodes_without_the_keys_are_ignored_and_score_zero() -> None:
    nodes = [node("a1", "a"), node("b1", "b"), node("bare")]
    pods = [pod("w1", "a1", app="web"), pod("w2", "a1", app="web")]
    got = scores(cluster(nodes, pods), incoming(tsc(when="ScheduleAnyway")))
    # a1: 2 * ln(2 + 2) = 2.77 -> 3; normalized 100 * (3 + 0 - s) / 3
    assert got == {"a1": (3, 0), "b1": (0, 100), "bare": (0, 0)}


def test_inclusion_policies_apply_to_scoring_counts() -> None:
    nodes = [node("a1", "a", pool="web"), node("a2", "a", pool="batch"), node("b1", "b", pool="web")]
    pods = [pod("w1", "a2", app="web"), pod("w2", "a2", app="web")]
    snapshot = cluster(nodes, pods)
    honor = incoming(tsc(when="ScheduleAnyway"), nodeSelector={"pool": "web"})
    assert scores(snapshot, honor, ["a1", "b1"]) == {"a1": (0, 100), "b1": (0, 100)}
    ignore = incoming(tsc(when="ScheduleAnyway", nodeAffinityPolicy="Ignore"), nodeSelector={"pool": "web"})
    assert scores(snapshot, ignore, ["a1", "b1"]) == {"a1": (3, 0), "b1": (0, 100)}


def test_pre_score_skips_without_soft_constraints() -> None:
    snapshot = cluster(ZONES, WEB)
    plugin, _ = plugins(snapshot)
    for p in (incoming(), incoming(tsc())):
        assert plugin.pre_score(CycleState(), p, snapshot.node_info_list).code == Code.SKIP
    assert pts.new(None, Handle(Snapshot())).pre_score(CycleState(), incoming(tsc()), []).code == Code.SKIP
    with pytest.raises(Exception, match='error reading "PreScorePodTopologySpread" from cycleState: not found'):
        plugin.score(CycleState(), incoming(), snapshot.node_info_list[0])


def test_go_log_and_rounding() -> None:
    assert pts.go_log(3.0) == 1.0986122886681096 != math.log(3)  # Go's algorithm, not the C library's
    assert all(math.isclose(pts.go_log(float(n)), math.log(n), rel_tol=1e-15) for n in range(2, 5000))
    assert [pts.go_round(x) for x in (0.0, 0.49, 0.5, 1.5, 2.5, 2.49999)] == [0, 0, 1, 2, 3, 2]


# -- default constraints -----------------------------------------------------------------------------------


@dataclass
class Workloads:
    svcs: list[Any] = field(default_factory=list)
    objects: dict[tuple[str, str, str], Any] = field(default_factory=dict)

    def services(self, namespace: str) -> list[Any]:
        return [s for s in self.svcs if (s.metadata.namespace or "default") == namespace]

    def controller(self, kind: str, namespace: str, name: str) -> Any | None:
        return self.objects.get((kind, namespace, name))


def service(name: str, selector: dict[str, str] | None, namespace: str = "default") -> Any:
    return core_v1.Service(
        metadata=meta_v1.ObjectMeta(name=name, namespace=namespace), spec=core_v1.ServiceSpec(selector=selector)
    )


def owned(p: Any, api_version: str, kind: str, name: str) -> Any:
    p.metadata.ownerReferences = [
        meta_v1.OwnerReference(apiVersion=api_version, kind=kind, name=name, uid="u", controller=True)
    ]
    return p


def _requirements(selector: Any) -> set[tuple[str, str, frozenset[str]]]:
    return {(r.key, r.operator, r.values) for r in selector.requirements}


def test_default_selector_merges_services_and_the_controller() -> None:
    p = pod("p", app="web", tier="front")
    workloads = Workloads(
        [service("web", {"app": "web"}), service("other", {"app": "db"}), service("nil", None)],
        {
            ("ReplicaSet", "default", "rs"): apps_v1.ReplicaSet(
                spec=apps_v1.ReplicaSetSpec(
                    selector=meta_v1.LabelSelector(matchLabels={"tier": "front"}), template=None
                )
            ),
            ("ReplicationController", "default", "rc"): core_v1.ReplicationController(
                spec=core_v1.ReplicationControllerSpec(selector={"app": "web", "tier": "front"})
            ),
        },
    )
    assert _requirements(pts.default_selector(p, workloads)) == {("app", "In", frozenset({"web"}))}
    with_rs = pts.default_selector(owned(copy.deepcopy(p), "apps/v1", "ReplicaSet", "rs"), workloads)
    assert _requirements(with_rs) == {("app", "In", frozenset({"web"})), ("tier", "In", frozenset({"front"}))}
    with_rc = pts.default_selector(owned(copy.deepcopy(p), "v1", "ReplicationController", "rc"), workloads)
    assert _requirements(with_rc) == {("app", "In", frozenset({"web"})), ("tier", "In", frozenset({"front"}))}
    unknown = pts.default_selector(owned(copy.deepcopy(p), "apps/v1", "Deployment", "rs"), workloads)
    assert _requirements(unknown) == {("app", "In", frozenset({"web"}))}
    assert pts.is_empty(pts.default_selector(pod("lonely", app="cache"), workloads))


def test_system_defaults_spread_pods_selected_by_a_service() -> None:
    nodes = [node("a1", "a"), node("b1", "b"), node("bare")]
    pods = [pod(f"w{i}", "a1", app="web") for i in range(4)]
    snapshot = cluster(nodes, pods)
    workloads = Workloads([service("web", {"app": "web"})])
    p = incoming()
    # hostname maxSkew 3, zone maxSkew 5; nodes without a zone are still scored (by hostname), and
    # make up the zone "" (three zones): a1: 4 * ln(3 + 2) + 2 + 4 * ln(3 + 2) + 4 = 18.9; b1: 2 + 4; bare: 2
    got = scores(snapshot, p, workloads=workloads)
    assert got == {"a1": (19, 10), "b1": (6, 78), "bare": (2, 100)}
    table_plugin, _ = plugins(snapshot, workloads=workloads)
    assert table_plugin.pre_filter(CycleState(), p, snapshot.node_info_list)[1].code == Code.SKIP  # all soft
    # without workloads (the scheduler has none yet) the default selector is empty: Skip
    assert pts.new(None, Handle(snapshot)).pre_score(CycleState(), p, snapshot.node_info_list).code == Code.SKIP


def test_list_defaulting_uses_the_given_constraints() -> None:
    nodes = [node("a1", "a"), node("b1", "b"), node("bare")]
    snapshot = cluster(nodes, [pod("w1", "a1", app="web")])
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}],
    }
    workloads = Workloads([service("web", {"app": "web"})])
    plugin = pts.new(args, Handle(snapshot, workloads))
    p = incoming()
    state = CycleState()
    assert plugin.pre_filter(state, p, snapshot.node_info_list) == (None, None)
    got = {n.name: plugin.filter(state, p, n) for n in snapshot.node_info_list}
    assert got == {"a1": Status.unschedulable(NOT_MATCH), "b1": None, "bare": Status.unresolvable(MISSING)}
    assert pts.new(args, Handle(snapshot)).pre_filter(CycleState(), p, snapshot.node_info_list)[1].code == Code.SKIP


# -- arguments ---------------------------------------------------------------------------------------------


def test_args_defaults_and_decoding() -> None:
    assert pts.ARGS is pts.PodTopologySpreadArgs
    plugin = pts.new(None, standalone_handle())
    assert plugin.system_defaulted and plugin.default_constraints == pts.SYSTEM_DEFAULT_CONSTRAINTS
    assert [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in pts.SYSTEM_DEFAULT_CONSTRAINTS] == [
        (HOST, 3, "ScheduleAnyway"),
        (ZONE, 5, "ScheduleAnyway"),
    ]
    listed = pts.new({"defaultingType": "List"}, standalone_handle())
    assert not listed.system_defaulted and listed.default_constraints == ()
    with pytest.raises(ValueError, match=r"PodTopologySpreadArgs: unknown field `defaultConstraint`"):
        pts.new({"defaultConstraint": []}, standalone_handle())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"defaultingType": "Other"}, 'defaultingType: Unsupported value: "Other": supported values: "System", "List"'),
        (
            {"defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]},
            'defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [{"topologyKey": "", "whenUnsatisfiable": ""}]},
            "[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), "
            "defaultConstraints[0].topologyKey: Required value: can not be empty, "
            "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty]",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "Sometimes"},
                    {"maxSkew": 1, "topologyKey": "a/b/c", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            '[defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: '
            '"DoNotSchedule", "ScheduleAnyway", defaultConstraints[1].topologyKey: Invalid value: "a/b/c": '
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
            "'/' (e.g. 'example.com/MyName')]",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
                    {
                        "maxSkew": 2,
                        "topologyKey": ZONE,
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"a": "b"}},
                    },
                ],
            },
            "[defaultConstraints[1].labelSelector: Forbidden: constraint must not define a selector, as they "
            'deduced for each pod, defaultConstraints[1]: Duplicate value: "{topology.kubernetes.io/zone, '
            'DoNotSchedule}"]',
        ),
    ],
)
def test_args_validation_messages(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgsError) as err:
        pts.new(args, standalone_handle())
    assert str(err.value) == message


def test_args_in_a_configuration_are_strict_and_validated_with_their_path() -> None:
    def load(args: dict[str, Any]) -> Any:
        profile = {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "PodTopologySpread", "args": args}]}
        raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        return load_data({**raw, "profiles": [profile]}, in_tree_registry())

    config = load(
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 2, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule"}],
        }
    )
    args = config.profiles[0].args["PodTopologySpread"]
    assert isinstance(args, pts.PodTopologySpreadArgs) and args.default_constraints[0].max_skew == 2
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.pluginConfig\[0\]\.args\.defaultingType: Unsupported"):
        load({"defaultingType": "Sometimes"})
    with pytest.raises(ConfigError, match="unknown"):
        load(
            {"defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "x": 1}]}
        )


# -- queueing hints -----------------------------------------------------------------------------------------


def hints(plugin: Any) -> dict[str, Any]:
    return {r.event.resource: r.hint for r in plugin.events_to_register()}


def test_registered_events() -> None:
    registered = [r.event for r in pts.new(None, standalone_handle()).events_to_register()]
    assert registered == [
        ClusterEvent(
            POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION | ActionType.DELETE
        ),
        ClusterEvent(
            NODE, ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
        ),
    ]


def _queued(*constraints: Any) -> Any:
    return incoming(*constraints).pod


def test_pod_hint() -> None:
    hint = hints(pts.new(None, standalone_handle()))[POD]
    target = _queued(tsc(nodeTaintsPolicy="Honor"))
    web, other = pod("w", "a1", app="web"), pod("o", "a1", app="other")
    assert hint(target, None, web) == QUEUE  # added, matching
    assert hint(target, None, other) == SKIP
    assert hint(target, web, None) == QUEUE  # deleted, matching
    assert hint(target, other, None) == SKIP
    assert hint(target, None, pod("u", None, app="web")) == SKIP  # not assigned
    assert hint(target, None, pod("n", "a1", namespace="prod", app="web")) == SKIP  # another namespace
    relabelled = copy.deepcopy(other)
    relabelled.metadata.labels = {"app": "web"}
    assert hint(target, other, relabelled) == QUEUE
    assert hint(target, web, copy.deepcopy(web)) == SKIP  # labels unchanged
    extra = copy.deepcopy(other)
    extra.metadata.labels = {"app": "other", "x": "y"}
    assert hint(target, other, extra) == SKIP  # still not matching
    tolerating = copy.deepcopy(target)
    tolerating.spec.tolerations = [core_v1.Toleration(operator="Exists")]
    assert hint(target, target, tolerating) == QUEUE  # the pod itself, honouring taints
    assert hint(_queued(tsc()), _queued(tsc()), tolerating) == SKIP  # taints ignored, labels unchanged
    assert hint(_queued(), None, web) == SKIP  # no hard constraint


def test_node_hint() -> None:
    hint = hints(pts.new(None, standalone_handle()))[NODE]
    target = _queued(tsc(), tsc(HOST))
    zoned, bare = node("a1", "a"), node("bare")
    assert hint(target, None, zoned) == QUEUE
    assert hint(target, None, bare) == SKIP
    assert hint(target, zoned, None) == QUEUE
    assert hint(target, bare, None) == SKIP
    assert hint(target, bare, zoned) == QUEUE  # gained the keys
    assert hint(target, zoned, bare) == QUEUE  # lost them
    moved = node("a1", "b")
    assert hint(target, zoned, moved) == QUEUE
    assert hint(target, zoned, node("a1", "a", extra="x")) == SKIP  # another label
    assert hint(target, zoned, node("a1", "a", taint="t")) == QUEUE
    assert hint(target, bare, node("bare", taint="t")) == SKIP  # taints of a node without the keys
    assert hint(_queued(), bare, node("bare", taint="t")) == QUEUE  # no constraint: every node has "all" keys


def test_hint_key_covers_what_the_hints_read() -> None:
    plugin = pts.new(None, standalone_handle())
    a, b = _queued(tsc()), _queued(tsc())
    b.metadata.name, b.metadata.uid = "other", "uid-other"
    assert plugin.hint_key(a) == plugin.hint_key(b)
    assert plugin.hint_key(a) != plugin.hint_key(_queued(tsc(skew=2)))
    c = _queued(tsc())
    c.metadata.namespace = "prod"
    assert plugin.hint_key(a) != plugin.hint_key(c)
    keyed = [_queued(tsc(matchLabelKeys=["rev"])) for _ in range(3)]
    keyed[1].metadata.labels = {"app": "web", "rev": "1"}
    keyed[2].metadata.labels = {"app": "other"}
    assert plugin.hint_key(keyed[0]) != plugin.hint_key(keyed[1])
    assert plugin.hint_key(keyed[0]) == plugin.hint_key(keyed[2])  # only matchLabelKeys' labels matter
    # With Services to select by labels, system defaulting makes the labels part of the key.
    with_workloads = pts.new(None, Handle(None, Workloads([service("web", {"app": "web"})])))
    assert with_workloads.hint_key(pod("x", app="a")) != with_workloads.hint_key(pod("y", app="b"))
    assert plugin.hint_key(pod("x", app="a")) == plugin.hint_key(pod("y", app="b"))


def test_hint_errors_propagate_as_exceptions() -> None:
    bad = _queued(tsc(selector={"matchExpressions": [{"key": "a", "operator": "Bad"}]}))
    plugin = pts.new(None, standalone_handle())
    for _ in range(2):  # the second time from the cache
        with pytest.raises(ValueError, match="obtaining pod's hard topology spread constraints"):
            hints(plugin)[NODE](bad, None, node("a1", "a"))
