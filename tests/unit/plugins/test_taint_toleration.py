import pytest
from lightkube.models import core_v1

from builders import make_node, make_pod
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent
from kubesched.framework.status import Code, StatusError
from kubesched.plugins import taint_toleration
from kubesched.plugins.taint_toleration import TaintToleration

REASON = "node(s) had untolerated taint(s)"


def taint(key: str, value: str | None = None, effect: str = "NoSchedule") -> core_v1.Taint:
    return core_v1.Taint(key=key, value=value, effect=effect)


def tol(key: str | None = None, value: str | None = None, effect: str | None = None, op: str | None = None):
    return core_v1.Toleration(key=key, value=value, effect=effect, operator=op)


def node(name: str, *taints: core_v1.Taint) -> NodeInfo:
    n = make_node(name).obj
    n.spec.taints = list(taints) or None
    return NodeInfo(n)


def pod(*tolerations: core_v1.Toleration) -> PodInfo:
    p = make_pod("p").obj
    p.spec.tolerations = list(tolerations) or None
    return PodInfo(p)


@pytest.mark.parametrize(
    ("taints", "tolerations", "passes"),
    [
        ((), (), True),
        ((taint("k", "v"),), (), False),
        ((taint("k", "v", "NoExecute"),), (), False),
        ((taint("k", "v", "PreferNoSchedule"),), (), True),  # never filters
        ((taint("k", "v"),), (tol("k", "v", "NoSchedule", "Equal"),), True),
        ((taint("k", "v"),), (tol("k", "other", "NoSchedule", "Equal"),), False),
        ((taint("k", "v"),), (tol("k", op="Exists"),), True),
        ((taint("k", "v", "NoExecute"),), (tol("k", "v", "NoSchedule"),), False),  # effect must match
        ((taint("a", "1"), taint("b", "2")), (tol("a", "1"),), False),  # every taint must be tolerated
        ((taint("a", "1"), taint("b", "2")), (tol(op="Exists"),), True),
    ],
)
def test_filter(taints, tolerations, passes):
    status = TaintToleration().filter(CycleState(), pod(*tolerations), node("n", *taints))
    if passes:
        assert status is None
    else:
        assert status is not None
        assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == [REASON]


def run_scores(p: PodInfo, nodes: list[NodeInfo]) -> tuple[list[int], list[int]]:
    plugin = TaintToleration()
    state = CycleState()
    assert plugin.pre_score(state, p, nodes) is None
    raw = [plugin.score(state, p, n) for n in nodes]
    normalized = list(raw)
    assert plugin.normalize_score(state, p, normalized) is None
    return raw, normalized


def soft(key: str) -> core_v1.Taint:
    return taint(key, "x", "PreferNoSchedule")


def test_scores_count_intolerable_prefer_no_schedule_taints():
    nodes = [
        node("n0"),
        node("n1", soft("s0")),
        node("n2", soft("s0"), soft("s1")),
        node("n3", soft("s0"), soft("s1"), soft("s2"), taint("hard", "x")),  # NoSchedule not counted
    ]
    raw, normalized = run_scores(pod(), nodes)
    assert raw == [0, 1, 2, 3]
    # reversed: 100 - 100*s//3
    assert normalized == [100, 67, 34, 0]


def test_score_uses_only_prefer_no_schedule_or_effectless_tolerations():
    nodes = [node("a", soft("s0"), soft("s1")), node("b", soft("s1"))]
    tolerations = (
        tol("s0", "x", "PreferNoSchedule", "Equal"),  # kept
        tol("s1", op="Exists", effect="NoSchedule"),  # dropped: wrong effect
    )
    raw, normalized = run_scores(pod(*tolerations), nodes)
    assert raw == [1, 1]
    assert normalized == [0, 0]
    raw, normalized = run_scores(pod(tol("s1", op="Exists")), nodes)  # effect "" tolerates all effects
    assert raw == [1, 0]
    assert normalized == [0, 100]


def test_all_zero_scores_normalize_to_100():
    raw, normalized = run_scores(pod(), [node("a"), node("b", taint("hard"))])
    assert raw == [0, 0]
    assert normalized == [100, 100]


def test_score_without_pre_score_is_an_error():
    with pytest.raises(StatusError) as err:
        TaintToleration().score(CycleState(), pod(), node("n"))
    assert err.value.status.code == Code.ERROR


def test_events_and_factory():
    plugin = taint_toleration.new(None, None)
    assert plugin.name == "TaintToleration"
    assert [e.event for e in plugin.events_to_register()] == [
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATION),
    ]


def test_the_batch_verdicts_follow_a_node_whose_taints_change():
    """The batch path keeps each set of tolerations' verdicts across cycles; a node tainted or
    untainted since is judged again."""
    import numpy as np

    from builders import plugin_handle
    from kubesched.cache import Cache, Snapshot

    cache, snapshot = Cache(), Snapshot()
    cache.add_node(make_node("a").taint("gpu").obj)
    cache.add_node(make_node("b").obj)
    cache.update_snapshot(snapshot)
    plugin = taint_toleration.new(None, plugin_handle(snapshot))
    pod = PodInfo(make_pod("p").obj)
    rows = np.arange(2)
    assert plugin.filter_batch(CycleState(), pod, snapshot.table, rows).tolist() == [True, False]
    cache.update_node(cache.nodes["b"].node, make_node("b").taint("gpu").obj)
    cache.update_snapshot(snapshot)
    assert plugin.filter_batch(CycleState(), pod, snapshot.table, rows).tolist() == [True, True]
    cache.update_node(cache.nodes["a"].node, make_node("a").obj)
    cache.update_node(cache.nodes["b"].node, make_node("b").obj)
    cache.update_snapshot(snapshot)
    assert plugin.filter_batch(CycleState(), pod, snapshot.table, rows) is None
    tolerant = PodInfo(make_pod("q").toleration(key="gpu", operator="Exists").obj)
    cache.update_node(cache.nodes["a"].node, make_node("a").taint("gpu").obj)
    cache.update_snapshot(snapshot)
    assert plugin.filter_batch(CycleState(), tolerant, snapshot.table, rows) is None
    assert plugin.filter_batch(CycleState(), pod, snapshot.table, rows).tolist() == [True, False]
