import json
from typing import Any

import msgspec
import pytest
import yaml
from lightkube.models import core_v1, meta_v1
from lightkube.resources import core_v1 as res

from builders import make_node, make_pod
from golden_corpus import CORPUS as GOLDEN
from kubesched.api.tolerations import tolerates
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, ActionType, ClusterEvent
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.status import Code, Status
from kubesched.plugins import node_affinity, node_name, node_ports, node_unschedulable, taint_toleration
from kubesched.plugins.node_affinity import NodeAffinity, NodeAffinityArgs

POD_REASON = "node(s) didn't match Pod's node affinity/selector"
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"


def expr(key: str, op: str, *values: str) -> core_v1.NodeSelectorRequirement:
    return core_v1.NodeSelectorRequirement(key=key, operator=op, values=list(values) or None)


def term(*exprs: core_v1.NodeSelectorRequirement, fields=()) -> core_v1.NodeSelectorTerm:
    return core_v1.NodeSelectorTerm(matchExpressions=list(exprs) or None, matchFields=list(fields) or None)


def name_in(*names: str) -> core_v1.NodeSelectorRequirement:
    return expr("metadata.name", "In", *names)


def pod(*, required=None, preferred=None, node_selector=None) -> PodInfo:
    p = make_pod("p").obj
    if required is not None or preferred is not None:
        p.spec.affinity = core_v1.Affinity(
            nodeAffinity=core_v1.NodeAffinity(
                requiredDuringSchedulingIgnoredDuringExecution=(
                    core_v1.NodeSelector(nodeSelectorTerms=list(required)) if required is not None else None
                ),
                preferredDuringSchedulingIgnoredDuringExecution=preferred,
            )
        )
    p.spec.nodeSelector = node_selector
    return PodInfo(p)


def node(name: str, **labels: str) -> NodeInfo:
    n = make_node(name).obj
    n.metadata.labels = {**n.metadata.labels, **labels}
    return NodeInfo(n)


def pref(weight: int, *exprs: core_v1.NodeSelectorRequirement) -> core_v1.PreferredSchedulingTerm:
    return core_v1.PreferredSchedulingTerm(weight=weight, preference=term(*exprs))


# -- PreFilter -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "expected_names", "expected_status"),
    [
        (pod(), None, Status(Code.SKIP)),
        (pod(node_selector={"a": "b"}), None, None),
        (pod(required=[term(expr("zone", "In", "z1"))]), None, None),
        (pod(required=[term(fields=[name_in("n1")])]), {"n1"}, None),
        (pod(required=[term(fields=[name_in("n1")]), term(fields=[name_in("n2")])]), {"n1", "n2"}, None),
        # a term without a metadata.name In field lets every node through (terms are ORed)
        (pod(required=[term(fields=[name_in("n1")]), term(expr("zone", "Exists"))]), None, None),
        # requirements within one term are ANDed: the name sets intersect
        (pod(required=[term(fields=[name_in("n1"), name_in("n1")])]), {"n1"}, None),
        (
            pod(required=[term(fields=[name_in("n1"), name_in("n2")])]),
            None,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod affinity terms conflict"),
        ),
        (
            pod(required=[term(fields=[name_in("a"), name_in("b")]), term(fields=[name_in("c"), name_in("d")])]),
            None,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod affinity terms conflict"),
        ),
        (pod(required=[term(fields=[expr("metadata.name", "NotIn", "n1")])]), None, None),
        (pod(required=[]), None, None),
    ],
)
def test_pre_filter(p, expected_names, expected_status):
    result, status = NodeAffinity().pre_filter(CycleState(), p, [])
    assert status == expected_status
    if expected_names is None:
        assert result is None
    else:
        assert result == PreFilterResult(expected_names)


def test_pre_filter_runs_for_added_affinity_only():
    added = core_v1.NodeAffinity(
        requiredDuringSchedulingIgnoredDuringExecution=core_v1.NodeSelector(
            nodeSelectorTerms=[term(expr("pool", "In", "a"))]
        )
    )
    plugin = NodeAffinity(NodeAffinityArgs(addedAffinity=added))
    assert plugin.pre_filter(CycleState(), pod(), []) == (None, None)


# -- Filter --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "n", "passes"),
    [
        (pod(), node("n"), True),
        (pod(node_selector={"disk": "ssd"}), node("n", disk="ssd"), True),
        (pod(node_selector={"disk": "ssd"}), node("n", disk="hdd"), False),
        (pod(required=[term(expr("zone", "In", "z1", "z2"))]), node("n", zone="z2"), True),
        (pod(required=[term(expr("zone", "In", "z1"))]), node("n", zone="z2"), False),
        (pod(required=[term(expr("zone", "In", "z1")), term(expr("gpu", "Exists"))]), node("n", gpu="1"), True),
        (pod(required=[term(expr("gen", "Gt", "3"))]), node("n", gen="4"), True),
        (pod(required=[term(expr("gen", "Gt", "3"))]), node("n", gen="3"), False),
        (pod(required=[term(fields=[name_in("n")])]), node("n"), True),
        (pod(required=[term(fields=[name_in("other")])]), node("n"), False),
        # nodeSelector and affinity must both hold
        (pod(required=[term(expr("zone", "Exists"))], node_selector={"disk": "ssd"}), node("n", zone="z"), False),
        # a malformed term never matches (no error)
        (pod(required=[term(expr("zone", "Bogus", "z"))]), node("n", zone="z"), False),
    ],
)
def test_filter(p, n, passes):
    status = NodeAffinity().filter(CycleState(), p, n)
    if passes:
        assert status is None
    else:
        assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, POD_REASON)


def test_filter_checks_added_affinity_first():
    added = core_v1.NodeAffinity(
        requiredDuringSchedulingIgnoredDuringExecution=core_v1.NodeSelector(
            nodeSelectorTerms=[term(expr("pool", "In", "batch"))]
        )
    )
    plugin = node_affinity.new({"addedAffinity": msgspec.to_builtins(added)}, None)
    p = pod(node_selector={"disk": "ssd"})
    assert plugin.filter(CycleState(), p, node("a", pool="web")) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ENFORCED_REASON
    )
    assert plugin.filter(CycleState(), p, node("b", pool="batch")) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, POD_REASON
    )
    assert plugin.filter(CycleState(), p, node("c", pool="batch", disk="ssd")) is None


# -- Score ---------------------------------------------------------------------------------------


def scores(plugin: NodeAffinity, p: PodInfo, nodes: list[NodeInfo]) -> tuple[Status | None, list[int], list[int]]:
    state = CycleState()
    status = plugin.pre_score(state, p, nodes)
    if status is not None:
        return status, [], []
    raw = [plugin.score(state, p, n) for n in nodes]
    normalized = list(raw)
    assert plugin.normalize_score(state, p, normalized) is None
    return None, raw, normalized


def test_pre_score_skips_without_preferred_terms():
    status, _, _ = scores(NodeAffinity(), pod(required=[term(expr("zone", "Exists"))]), [node("n")])
    assert status is not None and status.code == Code.SKIP


def test_score_sums_matching_preferred_weights():
    p = pod(
        preferred=[
            pref(10, expr("zone", "In", "z1")),
            pref(5, expr("disk", "In", "ssd")),
            pref(0, expr("zone", "Exists")),  # weight 0: ignored
            core_v1.PreferredSchedulingTerm(weight=50, preference=term()),  # empty: ignored
        ]
    )
    nodes = [node("a", zone="z1", disk="ssd"), node("b", zone="z1"), node("c", disk="ssd"), node("d")]
    status, raw, normalized = scores(NodeAffinity(), p, nodes)
    assert status is None
    assert raw == [15, 10, 5, 0]
    assert normalized == [100, 66, 33, 0]  # 100*10//15, 100*5//15


def test_score_adds_added_preferred_terms():
    added = core_v1.NodeAffinity(preferredDuringSchedulingIgnoredDuringExecution=[pref(3, expr("pool", "In", "x"))])
    plugin = NodeAffinity(NodeAffinityArgs(addedAffinity=added))
    nodes = [node("a", pool="x", zone="z1"), node("b", pool="x"), node("c")]
    status, raw, normalized = scores(plugin, pod(), nodes)  # the pod has no preferences: no Skip
    assert status is None
    assert raw == [3, 3, 0]
    assert normalized == [100, 100, 0]
    status, raw, normalized = scores(plugin, pod(preferred=[pref(1, expr("zone", "In", "z1"))]), nodes)
    assert raw == [4, 3, 0]
    assert normalized == [100, 75, 0]


def test_all_zero_scores_stay_zero():
    status, raw, normalized = scores(NodeAffinity(), pod(preferred=[pref(7, expr("gpu", "Exists"))]), [node("a")])
    assert (status, raw, normalized) == (None, [0], [0])


def test_pre_score_reports_unparsable_preferred_terms():
    status, _, _ = scores(NodeAffinity(), pod(preferred=[pref(1, expr("zone", "Bogus"))]), [node("a")])
    assert status is not None
    assert status.code == Code.ERROR
    assert status.message.startswith("[0].matchExpressions[0].operator: Unsupported value")


# -- args ----------------------------------------------------------------------------------------


def test_args_default_and_validation_error_names_the_field():
    assert isinstance(node_affinity.new(None, None), NodeAffinity)
    bad = {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                    {"matchExpressions": [{"key": "zone", "operator": "In"}]},
                ]
            }
        }
    }
    with pytest.raises(ValueError) as err:
        node_affinity.new(bad, None)
    assert str(err.value) == (
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[0]"
        ".values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"
    )


def test_args_validation_aggregates_required_and_preferred_errors():
    bad = NodeAffinityArgs(
        addedAffinity=core_v1.NodeAffinity(
            requiredDuringSchedulingIgnoredDuringExecution=core_v1.NodeSelector(
                nodeSelectorTerms=[term(fields=[expr("metadata.name", "In", "a", "b")])]
            ),
            preferredDuringSchedulingIgnoredDuringExecution=[pref(1, expr("zone", "Gt", "x"))],
        )
    )
    with pytest.raises(ValueError) as err:
        NodeAffinity(bad)
    message = str(err.value)
    assert message.startswith("[addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]")
    assert ".matchFields[0].values: Invalid value" in message
    assert ", addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values[0]" in message
    assert message.endswith("]")


def test_args_of_the_wrong_shape():
    with pytest.raises(ValueError, match="NodeAffinityArgs"):
        node_affinity.new({"addedAffinity": 3}, None)


def test_events():
    assert [e.event for e in NodeAffinity().events_to_register()] == [
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
    ]


# -- golden cases: filter verdicts of the node filters ---------------------------------------------

KUBELET_LABELS = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
DEFAULT_TOLERATIONS = [
    core_v1.Toleration(key=key, operator="Exists", effect="NoExecute", tolerationSeconds=300)
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
]


def golden_node(c: dict[str, Any]) -> res.Node:
    """A compact golden node (only what the node filters read)."""
    labels = {"kubernetes.io/hostname": c["name"], **KUBELET_LABELS, **c.get("labels", {})}
    allocatable = {"pods": "110", **c.get("allocatable", {})}
    return res.Node(
        metadata=meta_v1.ObjectMeta(name=c["name"], labels=labels),
        spec=core_v1.NodeSpec(
            taints=msgspec.convert(c.get("taints", []), list[core_v1.Taint]) or None,
            unschedulable=c.get("unschedulable"),
        ),
        status=core_v1.NodeStatus(allocatable=allocatable, capacity=allocatable),
    )


def golden_pod(c: dict[str, Any]) -> res.Pod:
    """A compact golden pod: base spec, then the compact fields, then the default tolerations."""
    spec = msgspec.convert({"containers": [], **c.get("spec", {})}, core_v1.PodSpec)
    if not spec.containers:
        spec.containers = [core_v1.Container(name="c", image="registry.k8s.io/pause:3.10")]
    first = spec.containers[0]
    for p in c.get("hostPorts", []):
        first.ports = [*(first.ports or []), core_v1.ContainerPort(containerPort=p, hostPort=p, protocol="TCP")]
    for container in spec.containers:
        for port in container.ports or ():
            port.protocol = port.protocol or "TCP"
    spec.nodeName = c.get("nodeName")
    spec.nodeSelector = c.get("nodeSelector")
    if "affinity" in c:
        spec.affinity = msgspec.convert(c["affinity"], core_v1.Affinity)
    tolerations = msgspec.convert(c.get("tolerations", []), list[core_v1.Toleration])
    for default in DEFAULT_TOLERATIONS:
        taint = core_v1.Taint(key=default.key, effect=default.effect)
        if not any(tolerates(t, taint) for t in tolerations):
            tolerations.append(default)
    spec.tolerations = tolerations
    namespace = c.get("namespace", "default")
    meta = meta_v1.ObjectMeta(name=c["name"], namespace=namespace, uid=f"pod-uid-{namespace}-{c['name']}")
    return res.Pod(metadata=meta, spec=spec)


NODE_FILTERS = [  # default profile order
    node_unschedulable.NodeUnschedulable(),
    node_name.NodeName(),
    taint_toleration.TaintToleration(),
    NodeAffinity(),
    node_ports.NodePorts(),
]
NODE_FILTER_NAMES = {p.name for p in NODE_FILTERS}


def run_node_filters(state: CycleState, p: PodInfo, n: NodeInfo) -> Status | None:
    for plugin in NODE_FILTERS:
        if plugin.name in state.skip_filter_plugins:
            continue
        status = plugin.filter(state, p, n)
        if status is not None:
            return status.with_plugin(plugin.name)
    return None


CASES = sorted(
    p.name.removesuffix(".input.yaml") for p in GOLDEN.glob("*.input.yaml") if p.name.startswith(("taint-", "node-"))
)


@pytest.mark.skipif(not CASES, reason="golden cases not available")
@pytest.mark.parametrize("case", CASES)
def test_golden_node_filter_reasons(case):
    scenario = yaml.safe_load((GOLDEN / f"{case}.input.yaml").read_text())
    expected = json.loads((GOLDEN / f"{case}.expected.json").read_text())
    infos = {c["name"]: NodeInfo(golden_node(c)) for c in scenario["nodes"]}
    for c in scenario.get("pods") or []:
        infos[c["nodeName"]].add_pod(PodInfo(golden_pod(c)))
    incoming = PodInfo(golden_pod(scenario["pod"]))

    state = CycleState()
    narrowed: PreFilterResult | None = None
    for plugin in NODE_FILTERS:
        pre_filter = getattr(plugin, "pre_filter", None)
        if pre_filter is None:
            continue
        result, status = pre_filter(state, incoming, list(infos.values()))
        if status is not None and status.code == Code.SKIP:
            state.skip_filter_plugins.add(plugin.name)
            continue
        assert status is None
        if result is not None:
            narrowed = result if narrowed is None else narrowed.merge(result)
    if "preFilterResultNodes" in expected:
        assert narrowed is not None and sorted(narrowed.node_names or ()) == expected["preFilterResultNodes"]

    for entry in expected["nodes"]:
        want = entry["filter"]
        if want["stage"] == "PreFilterResult":
            assert narrowed is not None and entry["name"] not in (narrowed.node_names or ())
            continue
        got = run_node_filters(state, incoming, infos[entry["name"]])
        if want.get("plugin") in NODE_FILTER_NAMES:
            assert got is not None, entry["name"]
            assert (str(got.code), got.reasons, got.plugin) == (want["code"], want["reasons"], want["plugin"])
        else:  # passed every filter, or was rejected by a plugin after these
            assert got is None, (entry["name"], got)


def test_the_batch_verdicts_follow_a_node_whose_labels_change():
    """The batch path keeps each constraint's verdicts across cycles; a node relabelled since is
    judged again."""
    import numpy as np

    from builders import plugin_handle
    from kubesched.cache import Cache, Snapshot

    cache, snapshot = Cache(), Snapshot()
    for name, zone in (("a", "z1"), ("b", "z2")):
        cache.add_node(make_node(name).labels(zone=zone).obj)
    cache.update_snapshot(snapshot)
    plugin = node_affinity.new(None, plugin_handle(snapshot))
    pod = PodInfo(make_pod("p").node_affinity_in("zone", ["z1"]).obj)
    rows = np.arange(2)
    assert plugin.filter_batch(CycleState(), pod, snapshot.table, rows).tolist() == [False, True]
    old = cache.nodes["b"].node
    cache.update_node(old, make_node("b").labels(zone="z1").obj)
    cache.update_snapshot(snapshot)
    assert plugin.filter_batch(CycleState(), pod, snapshot.table, rows) is None
