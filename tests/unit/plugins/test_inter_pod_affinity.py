"""InterPodAffinity: Filter (required terms both ways), Score (preferred terms and hard weight),
AddPod/RemovePod, QueueingHints and args (upstream v1.36.2 behaviour)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from lightkube.models import core_v1, meta_v1

from builders import make_node, make_pod, plugin_handle
from kubesched.cache import Cache, PodInfo, Snapshot
from kubesched.config import ConfigError, load_data
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent, QueueingHint
from kubesched.framework.status import Code, Status, StatusError
from kubesched.plugins import inter_pod_affinity as ipa
from kubesched.plugins.registry import in_tree_registry

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP
AFFINITY = Status.unresolvable(ipa.ERR_REASON_AFFINITY)
ANTI = Status.unschedulable(ipa.ERR_REASON_ANTI_AFFINITY)
EXISTING = Status.unschedulable(ipa.ERR_REASON_EXISTING_ANTI_AFFINITY)


# -- builders ---------------------------------------------------------------------------------------


def term(
    key: str = HOST,
    selector: dict[str, str] | None = None,
    *,
    expressions: list[meta_v1.LabelSelectorRequirement] | None = None,
    namespaces: list[str] | None = None,
    namespace_selector: meta_v1.LabelSelector | None = None,
    match_keys: list[str] | None = None,
    mismatch_keys: list[str] | None = None,
) -> core_v1.PodAffinityTerm:
    return core_v1.PodAffinityTerm(
        topologyKey=key,
        labelSelector=meta_v1.LabelSelector(matchLabels=selector, matchExpressions=expressions),
        namespaces=namespaces,
        namespaceSelector=namespace_selector,
        matchLabelKeys=match_keys,
        mismatchLabelKeys=mismatch_keys,
    )


def weighted(weight: int, t: core_v1.PodAffinityTerm) -> core_v1.WeightedPodAffinityTerm:
    return core_v1.WeightedPodAffinityTerm(weight=weight, podAffinityTerm=t)


def pod(
    name: str = "p",
    namespace: str = "default",
    *,
    node: str | None = None,
    labels: dict[str, str] | None = None,
    affinity: list[core_v1.PodAffinityTerm] | None = None,
    anti: list[core_v1.PodAffinityTerm] | None = None,
    preferred: list[core_v1.WeightedPodAffinityTerm] | None = None,
    preferred_anti: list[core_v1.WeightedPodAffinityTerm] | None = None,
) -> Any:
    b = make_pod(name, namespace)
    if node:
        b.node(node)
    if labels:
        b.labels(**labels)
    p = b.obj
    p.metadata.uid = f"uid-{namespace}-{name}"
    positive = core_v1.PodAffinity(requiredDuringSchedulingIgnoredDuringExecution=affinity) if affinity else None
    if preferred:
        positive = positive or core_v1.PodAffinity()
        positive.preferredDuringSchedulingIgnoredDuringExecution = preferred
    negative = core_v1.PodAntiAffinity(requiredDuringSchedulingIgnoredDuringExecution=anti) if anti else None
    if preferred_anti:
        negative = negative or core_v1.PodAntiAffinity()
        negative.preferredDuringSchedulingIgnoredDuringExecution = preferred_anti
    if positive or negative:
        p.spec.affinity = core_v1.Affinity(podAffinity=positive, podAntiAffinity=negative)
    return p


def node(name: str, **labels: str) -> Any:
    n = make_node(name).obj
    n.metadata.labels = {**n.metadata.labels, **{k.replace("_", "."): v for k, v in labels.items()}}
    return n


def zoned(name: str, zone: str | None) -> Any:
    n = make_node(name).obj
    if zone is not None:
        n.metadata.labels = {**n.metadata.labels, ZONE: zone}
    return n


def cluster(nodes: list[Any], pods: list[Any]) -> tuple[Cache, Snapshot]:
    cache, snapshot = Cache(), Snapshot()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    cache.update_snapshot(snapshot)
    return cache, snapshot


def plugin(snapshot: Snapshot, namespaces: dict[str, dict[str, str]] | None = None, **args: Any) -> Any:
    return ipa.new(args or None, plugin_handle(snapshot, namespaces=namespaces))


def verdicts(
    snapshot: Snapshot, incoming: Any, namespaces: dict[str, dict[str, str]] | None = None
) -> tuple[Status | None, dict[str, Status | None]]:
    p = plugin(snapshot, namespaces)
    state, info = CycleState(), PodInfo(incoming)
    _, status = p.pre_filter(state, info, snapshot.node_info_list)
    if status is not None:
        return status, {}
    return None, {n.name: p.filter(state, info, n) for n in snapshot.node_info_list}


ZONES = [zoned("za-1", "za"), zoned("za-2", "za"), zoned("zb-1", "zb"), zoned("none", None)]


# -- Filter -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "pods", "incoming", "want"),
    [
        (
            "affinity to a zone holding a matching pod",
            [pod("cache", node="za-1", labels={"app": "cache"}), pod("x", node="zb-1", labels={"app": "x"})],
            pod(affinity=[term(ZONE, {"app": "cache"})]),
            {"za-1": None, "za-2": None, "zb-1": AFFINITY, "none": AFFINITY},
        ),
        (
            "affinity nobody satisfies and the pod does not match itself",
            [pod("x", node="za-1", labels={"app": "x"})],
            pod(labels={"app": "loner"}, affinity=[term(ZONE, {"app": "seed"})]),
            {"za-1": AFFINITY, "za-2": AFFINITY, "zb-1": AFFINITY, "none": AFFINITY},
        ),
        (
            "first pod of a self-affine group: any node with the topology key",
            [pod("x", node="za-1", labels={"app": "x"})],
            pod(labels={"app": "seed"}, affinity=[term(ZONE, {"app": "seed"})]),
            {"za-1": None, "za-2": None, "zb-1": None, "none": AFFINITY},
        ),
        (
            "a self-affine group already placed: only its domain",
            [pod("seed-0", node="zb-1", labels={"app": "seed"})],
            pod(labels={"app": "seed"}, affinity=[term(ZONE, {"app": "seed"})]),
            {"za-1": AFFINITY, "za-2": AFFINITY, "zb-1": None, "none": AFFINITY},
        ),
        (
            "one pod must match every affinity term",
            [pod("a", node="za-1", labels={"app": "a"}), pod("b", node="za-1", labels={"tier": "b"})],
            pod(affinity=[term(ZONE, {"app": "a"}), term(HOST, {"tier": "b"})]),
            {"za-1": AFFINITY, "za-2": AFFINITY, "zb-1": AFFINITY, "none": AFFINITY},
        ),
        (
            "two terms matched by one pod: its zone and its host",
            [pod("ab", node="za-1", labels={"app": "a", "tier": "b"})],
            pod(affinity=[term(ZONE, {"app": "a"}), term(HOST, {"tier": "b"})]),
            {"za-1": None, "za-2": AFFINITY, "zb-1": AFFINITY, "none": AFFINITY},
        ),
        (
            "anti-affinity on hostname",
            [pod("w1", node="za-2", labels={"app": "web"}), pod("w2", node="none", labels={"app": "web"})],
            pod(labels={"app": "web"}, anti=[term(HOST, {"app": "web"})]),
            {"za-1": None, "za-2": ANTI, "zb-1": None, "none": ANTI},
        ),
        (
            "anti-affinity on a zone: nodes without the zone key pass",
            [pod("w1", node="za-2", labels={"app": "web"})],
            pod(anti=[term(ZONE, {"app": "web"})]),
            {"za-1": ANTI, "za-2": ANTI, "zb-1": None, "none": None},
        ),
        (
            "an existing pod's anti-affinity keeps the pod out of its zone",
            [pod("vault", node="za-1", labels={"app": "vault"}, anti=[term(ZONE, {"security": "untrusted"})])],
            pod(labels={"security": "untrusted"}),
            {"za-1": EXISTING, "za-2": EXISTING, "zb-1": None, "none": None},
        ),
        (
            "affinity is checked before anti-affinity",
            [pod("c", node="za-1", labels={"app": "cache"}), pod("w", node="zb-1", labels={"app": "web"})],
            pod(affinity=[term(ZONE, {"app": "cache"})], anti=[term(HOST, {"app": "cache"})]),
            {"za-1": ANTI, "za-2": None, "zb-1": AFFINITY, "none": AFFINITY},
        ),
    ],
)
def test_filter(name: str, pods: list[Any], incoming: Any, want: dict[str, Status | None]) -> None:
    _, snapshot = cluster(ZONES, pods)
    status, got = verdicts(snapshot, incoming)
    assert status is None
    assert got == want


def test_pre_filter_skips_without_required_terms_or_matching_existing_anti_affinity() -> None:
    _, snapshot = cluster(ZONES, [pod("w", node="za-1", labels={"app": "web"})])
    assert verdicts(snapshot, pod(labels={"app": "web"}))[0] == Status(Code.SKIP)
    guarded = pod("v", node="za-1", anti=[term(ZONE, {"security": "untrusted"})])
    _, snapshot = cluster(ZONES, [guarded])
    assert verdicts(snapshot, pod(labels={"app": "web"}))[0] == Status(Code.SKIP)
    assert verdicts(snapshot, pod(labels={"security": "untrusted"}))[0] is None


def test_pre_filter_rejects_a_pod_whose_terms_do_not_parse() -> None:
    _, snapshot = cluster(ZONES, [])
    bad = meta_v1.LabelSelectorRequirement(key="app", operator="In", values=[])
    status, _ = verdicts(snapshot, pod(affinity=[term(expressions=[bad])]))
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message.startswith("parsing pod: requiredAffinityTerms: labelSelector.matchExpressions[0].values")


NAMESPACES = {
    "team-a": {"team": "a", "env": "prod", "kubernetes.io/metadata.name": "team-a"},
    "team-b": {"team": "b", "env": "prod", "kubernetes.io/metadata.name": "team-b"},
    "sandbox": {"env": "dev", "kubernetes.io/metadata.name": "sandbox"},
    "default": {"kubernetes.io/metadata.name": "default"},
}
DBS = [
    pod("db-a", "team-a", node="n1", labels={"app": "db"}),
    pod("db-b", "team-b", node="n2", labels={"app": "db"}),
    pod("db-dev", "sandbox", node="n3", labels={"app": "db"}),
    pod("db-local", "default", node="n4", labels={"app": "db"}),
]


def _blocked(got: dict[str, Status | None]) -> list[str]:
    return sorted(name for name, status in got.items() if status is not None)


def _env(operator: str, *values: str) -> meta_v1.LabelSelector:
    return meta_v1.LabelSelector(
        matchExpressions=[meta_v1.LabelSelectorRequirement(key="env", operator=operator, values=list(values) or None)]
    )


@pytest.mark.parametrize(
    ("name", "anti", "blocked"),
    [
        ("own namespace by default", term(selector={"app": "db"}), ["n1"]),
        ("namespaces list", term(selector={"app": "db"}, namespaces=["team-a", "team-b"]), ["n1", "n2"]),
        (
            "namespaceSelector env=prod",
            term(selector={"app": "db"}, namespace_selector=meta_v1.LabelSelector(matchLabels={"env": "prod"})),
            ["n1", "n2"],
        ),
        (
            "namespaceSelector and a list: their union",
            term(
                selector={"app": "db"},
                namespaces=["default"],
                namespace_selector=meta_v1.LabelSelector(matchLabels={"env": "dev"}),
            ),
            ["n3", "n4"],
        ),
        (
            "namespaceSelector env exists",
            term(selector={"app": "db"}, namespace_selector=_env("Exists")),
            ["n1", "n2", "n3"],
        ),
        ("empty namespaceSelector {}", term(selector={"app": "db"}, namespace_selector=meta_v1.LabelSelector()), None),
        # v1.36.2 keeps the selector besides the namespaces it resolved to: NotIn matches empty labels,
        # so pods of every namespace count (kubernetes#141526, fixed later).
        (
            "NotIn namespaceSelector (v1.36.2)",
            term(selector={"app": "db"}, namespace_selector=_env("NotIn", "dev")),
            None,
        ),
        ("empty namespaces list, no selector", term(selector={"app": "db"}, namespaces=[]), ["n1"]),
    ],
)
def test_namespaces_of_the_incoming_pods_terms(name: str, anti: Any, blocked: list[str] | None) -> None:
    nodes = [make_node(f"n{i}").obj for i in range(1, 5)]
    _, snapshot = cluster(nodes, DBS)
    _, got = verdicts(snapshot, pod("new", "team-a", labels={"app": "db"}, anti=[anti]), NAMESPACES)
    assert _blocked(got) == (blocked if blocked is not None else ["n1", "n2", "n3", "n4"])


def test_existing_pods_terms_use_the_incoming_pods_namespace_labels() -> None:
    selector = meta_v1.LabelSelector(matchLabels={"env": "prod"})
    guard = pod("guard", "sandbox", node="n1", anti=[term(selector={"app": "db"}, namespace_selector=selector)])
    nodes = [make_node("n1").obj, make_node("n2").obj]
    _, snapshot = cluster(nodes, [guard])
    assert _blocked(verdicts(snapshot, pod("x", "team-b", labels={"app": "db"}), NAMESPACES)[1]) == ["n1"]
    assert verdicts(snapshot, pod("x", "sandbox", labels={"app": "db"}), NAMESPACES)[0] == Status(Code.SKIP)
    # An unknown namespace has no labels.
    assert verdicts(snapshot, pod("x", "elsewhere", labels={"app": "db"}), NAMESPACES)[0] == Status(Code.SKIP)


@pytest.mark.parametrize(
    ("name", "keys", "blocked"),
    [
        ("matchLabelKeys: only the same version", {"match_keys": ["version"]}, ["n1"]),
        ("mismatchLabelKeys: only other versions", {"mismatch_keys": ["version"]}, ["n2"]),
        ("a key the pod lacks adds nothing", {"match_keys": ["missing"]}, ["n1", "n2"]),
    ],
)
def test_match_and_mismatch_label_keys(name: str, keys: dict[str, list[str]], blocked: list[str]) -> None:
    nodes = [make_node("n1").obj, make_node("n2").obj, make_node("n3").obj]
    pods = [
        pod("v1", node="n1", labels={"app": "web", "version": "1"}),
        pod("v2", node="n2", labels={"app": "web", "version": "2"}),
    ]
    _, snapshot = cluster(nodes, pods)
    incoming = pod(labels={"app": "web", "version": "1"}, anti=[term(HOST, {"app": "web"}, **keys)])
    assert _blocked(verdicts(snapshot, incoming)[1]) == blocked


def test_filter_without_pre_filter_is_an_error() -> None:
    _, snapshot = cluster(ZONES, [])
    status = plugin(snapshot).filter(CycleState(), PodInfo(pod()), snapshot.node_info_list[0])
    assert status == Status.error('error reading "PreFilterInterPodAffinity" from cycleState: not found')


# -- AddPod / RemovePod --------------------------------------------------------------------------------


def test_add_and_remove_pod_update_a_cloned_state() -> None:
    seed = pod("seed", node="za-1", labels={"app": "seed"})
    _, snapshot = cluster(ZONES, [seed])
    p = plugin(snapshot)
    incoming = PodInfo(
        pod(labels={"app": "seed"}, affinity=[term(ZONE, {"app": "seed"})], anti=[term(HOST, {"app": "seed"})])
    )
    state = CycleState()
    assert p.pre_filter(state, incoming, snapshot.node_info_list) == (None, None)
    za1, za2, zb1 = (snapshot.get(name) for name in ("za-1", "za-2", "zb-1"))

    def blocked(s: CycleState) -> list[str]:
        return sorted(n.name for n in snapshot.node_info_list if p.filter(s, incoming, n) is not None)

    assert blocked(state) == ["none", "za-1", "zb-1"]
    nominated = CycleState.clone(state)
    other = PodInfo(pod("seed-1", node="zb-1", labels={"app": "seed"}))
    assert p.add_pod(nominated, incoming, other, zb1) is None
    assert blocked(nominated) == ["none", "za-1", "zb-1"]  # zb-1 now holds a seed pod: anti-affinity
    assert blocked(state) == ["none", "za-1", "zb-1"]
    # Removing the only seed pod: no pod matches anywhere, the pod matches itself.
    victims = state.clone()
    assert p.remove_pod(victims, incoming, PodInfo(seed), za1) is None
    assert blocked(victims) == ["none"]
    assert blocked(state) == ["none", "za-1", "zb-1"]
    assert p.filter(state, incoming, za2) is None
    # An existing pod's anti-affinity, added as a nominated pod.
    guard = PodInfo(pod("guard", node="za-2", anti=[term(ZONE, {"app": "seed"})]))
    guarded = state.clone()
    assert p.add_pod(guarded, incoming, guard, za2) is None
    assert p.filter(guarded, incoming, za2) == EXISTING
    assert p.remove_pod(guarded, incoming, guard, za2) is None
    assert p.filter(guarded, incoming, za2) is None


def test_add_pod_without_pre_filter_is_an_error() -> None:
    _, snapshot = cluster(ZONES, [])
    status = plugin(snapshot).add_pod(CycleState(), PodInfo(pod()), PodInfo(pod("o")), snapshot.node_info_list[0])
    assert status is not None and status.code == Code.ERROR


# -- Score ------------------------------------------------------------------------------------------


def scores(snapshot: Snapshot, incoming: Any, **args: Any) -> tuple[Status | None, dict[str, int], dict[str, int]]:
    """PreScore's status, the raw and the normalized scores of every node, by name."""
    p = plugin(snapshot, **args)
    state, info, nodes = CycleState(), PodInfo(incoming), snapshot.node_info_list
    status = p.pre_score(state, info, nodes)
    if status is not None:
        return status, {}, {}
    raw = [p.score(state, info, n) for n in nodes]
    normalized = list(raw)
    assert p.normalize_score(state, info, normalized) is None
    names = [n.name for n in nodes]
    return None, dict(zip(names, raw, strict=True)), dict(zip(names, normalized, strict=True))


SIX = [zoned(f"z{z}-{i}", f"z{z}") for z in "abc" for i in (1, 2)]


def test_preferred_terms_weights_and_min_max_normalization() -> None:
    pods = [
        pod("db-1", node="za-2", labels={"app": "db"}),
        pod("cache-3", node="zb-2", labels={"app": "cache"}),
        pod("db-3", node="zb-2", labels={"app": "db"}),
        pod("cache-4", node="zc-1", labels={"app": "cache"}),
        pod("db-5", node="zc-2", labels={"app": "db"}),
        pod("batch", node="za-1", labels={"app": "batch"}),
    ]
    _, snapshot = cluster(SIX, pods)
    incoming = pod(
        preferred=[weighted(45, term(HOST, {"app": "cache"})), weighted(41, term(ZONE, {"app": "db"}))],
        preferred_anti=[weighted(56, term(HOST, {"app": "batch"}))],
    )
    status, raw, normalized = scores(snapshot, incoming)
    assert status is None
    assert raw == {"za-1": 41 - 56, "za-2": 41, "zb-1": 41, "zb-2": 41 + 45, "zc-1": 41 + 45, "zc-2": 41}
    # 100 * (41 + 15) / 101 = 55.4
    assert normalized == {"za-1": 0, "za-2": 55, "zb-1": 55, "zb-2": 100, "zc-1": 100, "zc-2": 55}


def test_existing_pods_terms_and_hard_pod_affinity_weight() -> None:
    nodes = [make_node(f"n{i}").obj for i in range(1, 5)]
    pods = [
        pod("agent", node="n1", preferred=[weighted(40, term(HOST, {"role": "worker"}))]),
        pod("shipper", node="n2", preferred_anti=[weighted(32, term(HOST, {"role": "worker"}))]),
        pod("coord", node="n3", affinity=[term(HOST, {"role": "worker"})]),
    ]
    _, snapshot = cluster(nodes, pods)
    worker = pod(labels={"role": "worker"})
    assert scores(snapshot, worker)[1:] == (
        {"n1": 40, "n2": -32, "n3": 1, "n4": 0},
        {"n1": 100, "n2": 0, "n3": 45, "n4": 44},
    )
    assert scores(snapshot, worker, hardPodAffinityWeight=5)[1] == {"n1": 40, "n2": -32, "n3": 5, "n4": 0}
    assert scores(snapshot, worker, hardPodAffinityWeight=0)[1] == {"n1": 40, "n2": -32, "n3": 0, "n4": 0}
    # Without preferred terms of its own the pod is not scored at all with this option.
    assert scores(snapshot, worker, ignorePreferredTermsOfExistingPods=True)[0] == Status(Code.SKIP)
    # With them, existing pods' preferred terms still count.
    own = pod(labels={"role": "worker"}, preferred=[weighted(3, term(HOST, {"app": "none"}))])
    assert scores(snapshot, own, ignorePreferredTermsOfExistingPods=True)[1] == {"n1": 40, "n2": -32, "n3": 1, "n4": 0}


def test_pre_score_skips_when_nothing_matches() -> None:
    _, snapshot = cluster(ZONES, [pod("a", node="za-1", labels={"app": "a"})])
    assert scores(snapshot, pod(labels={"app": "x"}))[0] == Status(Code.SKIP)
    unmatched = pod(preferred=[weighted(10, term(HOST, {"app": "zzz"}))])
    assert scores(snapshot, unmatched)[0] == Status(Code.SKIP)
    # A match on a node without the topology key counts for nothing either.
    keyless = pod(preferred=[weighted(10, term("rack", {"app": "a"}))])
    assert scores(snapshot, keyless)[0] == Status(Code.SKIP)


def test_matches_cancelling_out_still_score_and_normalize_to_zero() -> None:
    _, snapshot = cluster(ZONES, [pod("a", node="za-1", labels={"app": "a"})])
    incoming = pod(
        preferred=[weighted(7, term(HOST, {"app": "a"}))], preferred_anti=[weighted(7, term(HOST, {"app": "a"}))]
    )
    zero = {"za-1": 0, "za-2": 0, "zb-1": 0, "none": 0}
    assert scores(snapshot, incoming) == (None, zero, zero)


def test_score_without_pre_score_is_an_error() -> None:
    _, snapshot = cluster(ZONES, [])
    with pytest.raises(StatusError, match="failed to read"):
        plugin(snapshot).score(CycleState(), PodInfo(pod()), snapshot.node_info_list[0])


# -- QueueingHints ----------------------------------------------------------------------------------


def hints(p: Any) -> dict[ClusterEvent, Any]:
    return {r.event: r.hint for r in p.events_to_register()}


def test_registers_pod_and_node_events() -> None:
    _, snapshot = cluster([], [])
    assert set(hints(plugin(snapshot))) == {
        ClusterEvent(POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    }


def _pod_hint(queued: Any, old: Any, new: Any) -> QueueingHint:
    _, snapshot = cluster([], [])
    hint = hints(plugin(snapshot))[ClusterEvent(POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE)]
    result: QueueingHint = hint(queued, old, new)
    return result


def relabelled(p: Any, **labels: str) -> Any:
    out = copy.deepcopy(p)
    out.metadata.labels = labels
    return out


def nominated(p: Any) -> Any:
    out = copy.deepcopy(p)
    out.spec.nodeName = None
    out.status = core_v1.PodStatus(nominatedNodeName="n1")
    return out


WANTS_CACHE = pod("q", labels={"app": "q"}, affinity=[term(ZONE, {"app": "cache"})], anti=[term(HOST, {"app": "web"})])
CACHE = pod("c", node="n1", labels={"app": "cache"})
WEB = pod("w", node="n1", labels={"app": "web"})
GUARD = pod("g", node="n1", anti=[term(HOST, {"app": "q"})])


@pytest.mark.parametrize(
    ("name", "queued", "old", "new", "want"),
    [
        ("a matching pod added", WANTS_CACHE, None, CACHE, QUEUE),
        ("an unrelated pod added", WANTS_CACHE, None, WEB, SKIP),
        ("a matching pod added, unscheduled", WANTS_CACHE, None, make_pod("u").labels(app="cache").obj, SKIP),
        ("a matching pod nominated", WANTS_CACHE, None, nominated(CACHE), QUEUE),
        ("a pod relabelled to match", WANTS_CACHE, WEB, relabelled(WEB, app="cache"), QUEUE),
        ("a pod relabelled away from the anti-affinity", WANTS_CACHE, WEB, relabelled(WEB, app="x"), QUEUE),
        ("a pod relabelled into the anti-affinity", WANTS_CACHE, CACHE, relabelled(CACHE, app="web"), SKIP),
        ("an anti-affine pod deleted", WANTS_CACHE, WEB, None, QUEUE),
        ("an unrelated pod deleted", WANTS_CACHE, CACHE, None, SKIP),
        ("a pod whose anti-affinity hates the queued pod deleted", WANTS_CACHE, GUARD, None, QUEUE),
        ("the same, for a pod without terms", pod("plain", labels={"app": "q"}), GUARD, None, QUEUE),
        ("a pod added to a pod without terms", pod("plain", labels={"app": "q"}), None, CACHE, SKIP),
        ("the queued pod relabelled", WANTS_CACHE, WANTS_CACHE, relabelled(WANTS_CACHE, app="other"), QUEUE),
        ("the queued pod updated, labels unchanged", WANTS_CACHE, WANTS_CACHE, copy.deepcopy(WANTS_CACHE), SKIP),
    ],
)
def test_pod_change_hint(name: str, queued: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert _pod_hint(queued, old, new) == want


def test_every_anti_affinity_term_must_match_in_v1_36() -> None:
    two = pod("q", anti=[term(HOST, {"app": "web"}), term(HOST, {"tier": "db"})])
    assert _pod_hint(two, WEB, None) == SKIP
    assert _pod_hint(two, relabelled(WEB, app="web", tier="db"), None) == QUEUE


def test_pod_hint_with_terms_that_do_not_parse_queues() -> None:
    bad = meta_v1.LabelSelectorRequirement(key="app", operator="Bogus")
    with pytest.raises(ValueError):
        _pod_hint(pod("q", affinity=[term(expressions=[bad])]), None, CACHE)


def labelled_node(name: str, **labels: str) -> Any:
    n = make_node(name).obj
    n.metadata.labels = dict(labels)
    return n


@pytest.mark.parametrize(
    ("name", "queued", "old", "new", "want"),
    [
        ("node added with the affinity key", "affinity", None, labelled_node("n", zone="a"), QUEUE),
        ("node added without it", "affinity", None, labelled_node("n"), SKIP),
        ("affinity key appears", "affinity", labelled_node("n"), labelled_node("n", zone="a"), QUEUE),
        ("affinity key changes value", "affinity", labelled_node("n", zone="a"), labelled_node("n", zone="b"), QUEUE),
        ("affinity key removed", "affinity", labelled_node("n", zone="a"), labelled_node("n"), SKIP),
        ("unrelated label", "affinity", labelled_node("n", zone="a"), labelled_node("n", zone="a", x="1"), SKIP),
        ("any node added", "anti", None, labelled_node("n"), QUEUE),
        ("anti-affinity key removed", "anti", labelled_node("n", zone="a"), labelled_node("n"), QUEUE),
        ("anti-affinity key appears", "anti", labelled_node("n"), labelled_node("n", zone="a"), SKIP),
        ("anti-affinity key changes", "anti", labelled_node("n", zone="a"), labelled_node("n", zone="b"), QUEUE),
        ("no terms: a node added", "none", None, labelled_node("n", zone="a"), SKIP),
    ],
)
def test_node_change_hint(name: str, queued: str, old: Any, new: Any, want: QueueingHint) -> None:
    terms = {"affinity": {"affinity": [term("zone", {"app": "a"})]}, "anti": {"anti": [term("zone", {"app": "a"})]}}
    _, snapshot = cluster([], [])
    hint = hints(plugin(snapshot))[ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)]
    assert hint(pod("q", **terms.get(queued, {})), old, new) == want


def test_hint_key_covers_namespace_labels_and_required_terms() -> None:
    _, snapshot = cluster([], [])
    p = plugin(snapshot)
    a = pod("a", labels={"app": "q"}, affinity=[term(ZONE, {"app": "c"})])
    assert p.hint_key(a) == p.hint_key(pod("b", labels={"app": "q"}, affinity=[term(ZONE, {"app": "c"})]))
    assert p.hint_key(a) != p.hint_key(pod("b", labels={"app": "r"}, affinity=[term(ZONE, {"app": "c"})]))
    assert p.hint_key(a) != p.hint_key(pod("b", "other", labels={"app": "q"}, affinity=[term(ZONE, {"app": "c"})]))
    assert p.hint_key(a) != p.hint_key(pod("b", labels={"app": "q"}, anti=[term(ZONE, {"app": "c"})]))
    # Preferred terms are not read by the hints.
    assert p.hint_key(a) == p.hint_key(
        pod("b", labels={"app": "q"}, affinity=[term(ZONE, {"app": "c"})], preferred=[weighted(1, term())])
    )


# -- args ---------------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    args = ipa.new(None, plugin_handle(Snapshot())).args
    assert (args.hard_pod_affinity_weight, args.ignore_preferred_terms_of_existing_pods) == (1, False)


def _load(args: dict[str, Any]) -> Any:
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "s", "pluginConfig": [{"name": "InterPodAffinity", "args": args}]}],
    }
    return load_data(raw, in_tree_registry()).profiles[0].args["InterPodAffinity"]


def test_args_from_the_configuration() -> None:
    args = _load({"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True})
    assert (args.hard_pod_affinity_weight, args.ignore_preferred_terms_of_existing_pods) == (0, True)
    assert _load({"hardPodAffinityWeight": 100}).hard_pod_affinity_weight == 100


@pytest.mark.parametrize("weight", [-1, 101])
def test_args_weight_out_of_range(weight: int) -> None:
    want = f"hardPodAffinityWeight: Invalid value: {weight}: not in valid range [0, 100]"
    with pytest.raises(ConfigError, match="^" + re.escape(f"profiles[0].pluginConfig[0].args.{want}") + "$"):
        _load({"hardPodAffinityWeight": weight})
    with pytest.raises(ValueError, match="^" + re.escape(want) + "$"):
        ipa.new({"hardPodAffinityWeight": weight}, plugin_handle(Snapshot()))


def test_args_unknown_field() -> None:
    with pytest.raises(ConfigError, match="hardPodAffinityWieght"):
        _load({"hardPodAffinityWieght": 3})
