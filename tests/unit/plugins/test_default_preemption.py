"""DefaultPreemption: args, victim selection, the choice of node, the PostFilter messages and the gate."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import msgspec
import pytest
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.models import policy_v1 as pm
from lightkube.resources import policy_v1

from builders import make_node, make_pod
from kubesched.config import ConfigError, load_data
from kubesched.plugin import (
    ASSIGNED_POD,
    ActionType,
    Code,
    CycleState,
    FilterPlugin,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    PostFilterResult,
    PreFilterExtensions,
    QueueingHint,
    Status,
)
from kubesched.plugin import preemption as pe
from kubesched.plugin.cluster import ApiError
from kubesched.plugin.testing import FrozenClock, framework, snapshot_of, standalone_handle
from kubesched.plugins import default_preemption as dp
from kubesched.plugins.registry import in_tree_registry
from kubesched.queue import Nominator

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
NOW = (EPOCH + timedelta(hours=1)).timestamp()


def running(name: str, node: str, cpu: str, priority: int, *, start: int = 0, labels: Any = None, ns: str = "default"):
    """A bound, running pod that started `start` seconds after EPOCH (None: not started)."""
    obj = make_pod(name, ns).req(cpu=cpu).node(node).obj
    obj.metadata.uid = f"uid-{name}"
    obj.metadata.labels = labels
    obj.spec.priority = priority
    obj.status = m.PodStatus(phase="Running", startTime=None if start is None else EPOCH + timedelta(seconds=start))
    return obj


def pending(name: str, cpu: str, priority: int, **spec: Any) -> PodInfo:
    obj = make_pod(name).req(cpu=cpu).obj
    obj.metadata.uid = f"uid-{name}"
    obj.spec.priority = priority
    for key, value in spec.items():
        setattr(obj.spec, key, value)
    obj.status = m.PodStatus(phase="Pending")
    return PodInfo(obj)


def pdb(name: str, allowed: int, *, ns: str = "default", disrupted: Sequence[str] = (), **match: str):
    return policy_v1.PodDisruptionBudget(
        metadata=meta_v1.ObjectMeta(name=name, namespace=ns),
        spec=pm.PodDisruptionBudgetSpec(selector=meta_v1.LabelSelector(matchLabels=match or None)),
        status=pm.PodDisruptionBudgetStatus(
            disruptionsAllowed=allowed,
            currentHealthy=0,
            desiredHealthy=0,
            expectedPods=0,
            disruptedPods={p: EPOCH for p in disrupted} or None,
        ),
    )


class AtMostOneBlue(PreFilterExtensions, FilterPlugin):
    """A toy Filter with PreFilter extensions: at most one `color=blue` pod per node, counted in
    the cycle state by PreFilter and kept current by AddPod/RemovePod."""

    name: ClassVar[str] = "AtMostOneBlue"

    @dataclass
    class Count:
        blue: dict[str, int]

        def clone(self) -> AtMostOneBlue.Count:
            return AtMostOneBlue.Count(dict(self.blue))

    @staticmethod
    def _blue(p: PodInfo) -> int:
        return int((p.pod.metadata.labels or {}).get("color") == "blue")

    def pre_filter(self, state, pod, nodes):
        state.write(self.name, self.Count({n.name: sum(map(self._blue, n.pods)) for n in nodes}))
        return None, None

    def add_pod(self, state, pod, other, node):
        state.read(self.name).blue[node.name] += self._blue(other)

    def remove_pod(self, state, pod, other, node):
        state.read(self.name).blue[node.name] -= self._blue(other)

    def filter(self, state, pod, node):
        if self._blue(pod) and state.read(self.name).blue[node.name] >= 1:
            return Status.unschedulable("too blue")
        return None


class Cluster:
    """Nodes and running pods, one profile with DefaultPreemption, and the real cycle's first half."""

    def __init__(
        self,
        nodes: dict[str, str],
        pods: Sequence[Any] = (),
        *,
        pdbs: Sequence[Any] = (),
        args: Any = None,
        names: Sequence[str] = ("PrioritySort", "NodeResourcesFit", AtMostOneBlue.name, "DefaultBinder", dp.NAME),
    ):
        nodes_ = [make_node(name).capacity(cpu=cpu, memory="32Gi", pods="110").obj for name, cpu in nodes.items()]
        self.snapshot = snapshot_of(nodes_, pods)
        registry = in_tree_registry()
        registry.register(AtMostOneBlue.name, lambda args, handle: AtMostOneBlue())
        self.nominator = Nominator()
        self.fwk = framework(
            registry,
            enabled=list(names),
            args={dp.NAME: args},
            profile_name="default-scheduler",
            snapshot=self.snapshot,
            pdbs=pdbs,
            clock=FrozenClock(NOW),
            nominator=self.nominator,
        )
        self.handle = self.fwk.handle
        self.plugin: dp.DefaultPreemption = self.fwk.plugin(dp.NAME)

    def node(self, name: str) -> NodeInfo:
        node = self.snapshot.get(name)
        assert node is not None
        return node

    def statuses(self, state: CycleState, pod: PodInfo) -> NodeToStatus:
        _, status, _ = self.fwk.run_pre_filter(state, pod, self.snapshot.node_info_list)
        assert status is None
        out = NodeToStatus()
        for node in self.snapshot.node_info_list:
            if (verdict := self.fwk.run_filter(state, pod, node)) is not None:
                out.set(node.name, verdict)
        return out

    def post_filter(self, pod: PodInfo) -> tuple[PostFilterResult | None, Status | None, CycleState]:
        state = CycleState()
        statuses = self.statuses(state, pod)
        return (*self.plugin.post_filter(state, pod, statuses), state)

    def victims_on(self, name: str, pod: PodInfo) -> tuple[list[str], int, Status | None]:
        state = CycleState()
        self.statuses(state, pod)
        budgets = pe.budgets(self.handle.listers.pdbs)
        victims, violations, status = self.plugin.select_victims_on_node(state, pod, self.node(name).clone(), budgets)
        return [v.name for v in victims], violations, status


def keys(result: tuple[Any, ...]) -> list[str]:
    return [v.name for v in result]


# -- args -------------------------------------------------------------------------------------------


def test_args_default_to_ten_percent_and_one_hundred_nodes():
    args = dp.Args()
    assert (args.percentage, args.absolute) == (10, 100)
    explicit = msgspec.convert({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5}, dp.Args)
    assert (explicit.percentage, explicit.absolute) == (0, 5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"minCandidateNodesPercentage": -1},
            "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
        ),
        (
            {"minCandidateNodesPercentage": 101},
            "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            {"minCandidateNodesAbsolute": -1},
            "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
        ),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
            "minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same "
            "time as minCandidateNodesPercentage]",
        ),
    ],
)
def test_invalid_args_name_the_field(args, message):
    with pytest.raises(ValueError) as err:
        dp.new(args, standalone_handle())
    assert str(err.value) == message


def test_args_in_a_configuration_are_strict_and_validated():
    def config(args: dict[str, Any]) -> Any:
        raw = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": args}]}],
        }
        return load_data(raw, in_tree_registry())

    loaded = config({"minCandidateNodesPercentage": 20})
    assert loaded.profiles[0].args["DefaultPreemption"].percentage == 20
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.pluginConfig\[0\]\.args\.minCandidateNodesAbsolute"):
        config({"minCandidateNodesAbsolute": -3})
    with pytest.raises(ConfigError):
        config({"min_candidate_nodes_absolute": 3})


@pytest.mark.parametrize(
    ("nodes", "percentage", "absolute", "expected"),
    [
        (1000, 10, 100, 100),  # 10% = 100
        (5000, 10, 100, 500),  # the share wins
        (500, 10, 100, 100),  # the absolute minimum wins
        (50, 10, 100, 50),  # never more than the nodes
        (1000, 0, 7, 7),
        (1000, 55, 0, 550),
        (9, 10, 0, 0),  # integer division
    ],
)
def test_number_of_candidates(nodes, percentage, absolute, expected):
    args = {"minCandidateNodesPercentage": percentage, "minCandidateNodesAbsolute": absolute}
    assert dp.new(args, standalone_handle()).num_candidates(nodes) == expected


# -- victims on one node ----------------------------------------------------------------------------


def test_lowest_priority_pods_go_first_and_the_most_important_are_reprieved_first():
    pods = [running(f"p{prio}", "n", "1", prio) for prio in (3, 1, 4, 2)]
    c = Cluster({"n": "4"}, pods)
    # Without all four the pod fits; adding back p4 then p3 still fits, p2 and p1 do not.
    assert c.victims_on("n", pending("big", "2", 10)) == (["p2", "p1"], 0, None)


def test_equal_and_higher_priority_pods_are_never_victims():
    pods = [running("equal", "n", "1", 10), running("higher", "n", "1", 20), running("lower", "n", "1", 5)]
    c = Cluster({"n": "3"}, pods)
    assert c.victims_on("n", pending("p", "1", 10)) == (["lower"], 0, None)
    c = Cluster({"n": "2"}, pods[:2])
    victims, _, status = c.victims_on("n", pending("p", "1", 10))
    assert victims == [] and status == Status.unresolvable(dp.NO_VICTIMS)


def test_a_node_where_even_all_victims_are_not_enough_returns_the_filter_status():
    c = Cluster({"n": "4"}, [running("low", "n", "1", 0), running("high", "n", "2", 100)])
    assert c.victims_on("n", pending("p", "3", 50)) == (
        [],
        0,
        Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="NodeResourcesFit"),
    )


def test_equal_priority_victims_reprieve_the_earlier_started_first():
    pods = [running("late", "n", "2", 0, start=30), running("early", "n", "2", 0, start=10)]
    c = Cluster({"n": "4"}, pods)
    assert c.victims_on("n", pending("p", "2", 10)) == (["late"], 0, None)
    # A pod that has not started yet counts as starting now: the latest of all.
    pods = [running("unstarted", "n", "2", 0, start=None), running("old", "n", "2", 0, start=10)]
    assert Cluster({"n": "4"}, pods).victims_on("n", pending("p", "2", 10))[0] == ["unstarted"]


def test_pdb_violating_victims_are_reprieved_first():
    # `guarded` is less important than `free`, but evicting it would break its budget: it is
    # tried first, fits back, and `free` goes instead.
    pods = [running("guarded", "n", "2", 1, labels={"app": "g"}), running("free", "n", "2", 5)]
    c = Cluster({"n": "4"}, pods, pdbs=[pdb("g", 0, app="g")])
    assert c.victims_on("n", pending("p", "2", 10)) == (["free"], 0, None)
    # Without the budget the more important `free` is reprieved instead.
    assert Cluster({"n": "4"}, pods).victims_on("n", pending("p", "2", 10)) == (["guarded"], 0, None)


def test_victims_that_break_a_budget_are_counted_and_all_victims_come_back_in_importance_order():
    pods = [
        running("guarded", "n", "2", 1, labels={"app": "g"}),
        running("free-hi", "n", "1", 7),
        running("free-lo", "n", "1", 3),
    ]
    c = Cluster({"n": "4"}, pods, pdbs=[pdb("g", 0, app="g")])
    assert c.victims_on("n", pending("p", "4", 10)) == (["free-hi", "free-lo", "guarded"], 1, None)


def test_the_dry_run_keeps_the_prefilter_state_current_through_remove_and_add_pod():
    blue = {"color": "blue"}
    pods = [running("blue-low", "n", "1", 0, labels=blue), running("grey", "n", "1", 0)]
    c = Cluster({"n": "8"}, pods)
    pod = pending("blue", "1", 10)
    pod.pod.metadata.labels = blue
    result, status, state = c.post_filter(pod)
    assert (result, status) == (PostFilterResult("n"), None)
    assert keys(pe.decision(state).candidate.victims) == ["blue-low"]  # grey came back, blue-low could not
    assert state.read(AtMostOneBlue.name).blue == {"n": 1}  # the cycle's own state is untouched
    assert len(c.node("n").pods) == 2  # and so is the snapshot


def test_pods_nominated_with_at_least_the_preemptor_priority_keep_their_room():
    c = Cluster({"n": "4"}, [running("low", "n", "2", 0)])
    c.nominator.add(pending("waiting", "2", 10), "n")
    _, status, _ = c.post_filter(pending("p", "3", 10))
    assert status == Status(Code.UNSCHEDULABLE, "preemption: 0/1 nodes are available: 1 Insufficient cpu.")
    c.nominator.add(pending("waiting", "2", 5), "n")  # lower priority: ignored
    assert c.post_filter(pending("p", "3", 10))[0] == PostFilterResult("n")


# -- budgets ------------------------------------------------------------------------------------------


def test_split_by_pdb_counts_each_budget_down_in_order():
    pods = [
        PodInfo(running("a", "n", "1", 0, labels={"app": "x"})),
        PodInfo(running("b", "n", "1", 0, labels={"app": "x"})),
        PodInfo(running("c", "n", "1", 0, labels={"app": "x"}, ns="other")),
        PodInfo(running("d", "n", "1", 0)),
        PodInfo(running("e", "n", "1", 0, labels={"app": "x"})),
    ]
    budgets = pe.budgets([pdb("x", 1, app="x", disrupted=["e"])])
    violating, others = pe.split_by_pdb(pods, budgets)
    assert (keys(violating), keys(others)) == (["b"], ["a", "c", "d", "e"])


def test_budgets_with_an_empty_or_missing_selector_match_nothing():
    empty = pdb("all", 0)
    missing = pdb("none", 0)
    missing.spec.selector = None
    assert pe.budgets([empty, missing]) == []


# -- choosing the node ------------------------------------------------------------------------------


def victim(name: str, priority: int, start: int = 0) -> PodInfo:
    return PodInfo(running(name, "n", "1", priority, start=start))


@pytest.mark.parametrize(
    ("a", "b", "winner"),
    [
        # 1. fewest PDB violations, even with a higher-priority victim
        (pe.Candidate("a", (victim("a1", 10),), 1), pe.Candidate("b", (victim("b1", 500),), 0), "b"),
        # 2. the lowest most important victim
        (pe.Candidate("a", (victim("a1", 300),)), pe.Candidate("b", (victim("b1", 600),)), "a"),
        # 3. the smallest sum of priorities
        (
            pe.Candidate("a", (victim("a1", 100), victim("a2", 20))),
            pe.Candidate("b", (victim("b1", 100), victim("b2", 50))),
            "a",
        ),
        # 4. the fewest victims (sums tie only with the lowest int32 priority)
        (
            pe.Candidate("a", (victim("a1", 0), victim("a2", -(2**31)))),
            pe.Candidate("b", (victim("b1", 0),)),
            "b",
        ),
        # 5. the latest start among the most important victims
        (pe.Candidate("a", (victim("a1", 0, start=1800),)), pe.Candidate("b", (victim("b1", 0, start=600),)), "a"),
        # 6. the first one left
        (pe.Candidate("a", (victim("a1", 0),)), pe.Candidate("b", (victim("b1", 0),)), "a"),
    ],
)
def test_pick_one_node_criteria(a, b, winner):
    assert pe.pick_one_node([a, b], NOW).node == winner


def test_the_sum_shift_makes_negative_priorities_count():
    # Without the shift, two victims at -100 (sum -200) would beat one victim at -100.
    a = pe.Candidate("a", (victim("a1", -100), victim("a2", -100)))
    b = pe.Candidate("b", (victim("b1", -100),))
    assert pe.pick_one_node([a, b], NOW).node == "b"


def test_start_time_criterion_looks_only_at_the_most_important_victims():
    a = pe.Candidate("a", (victim("a1", 5, start=100), victim("a2", 1, start=0)))
    b = pe.Candidate("b", (victim("b1", 5, start=50), victim("b2", 1, start=900)))
    assert pe.pick_one_node([a, b], NOW).node == "a"


# -- PostFilter ---------------------------------------------------------------------------------------


def test_preemption_policy_never():
    c = Cluster({"n": "2"}, [running("low", "n", "2", 0)])
    result, status, _ = c.post_filter(pending("p", "1", 100, preemptionPolicy="Never"))
    assert result is None
    assert status == Status(Code.UNSCHEDULABLE, "preemption: not eligible due to preemptionPolicy=Never.")


def test_a_pod_waits_while_a_victim_on_its_nominated_node_terminates():
    victim_pod = running("going", "n", "2", 0)
    victim_pod.metadata.deletionTimestamp = EPOCH
    victim_pod.status.conditions = [
        m.PodCondition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")
    ]
    c = Cluster({"n": "2", "m": "2"}, [victim_pod, running("other", "m", "2", 0)])
    pod = pending("p", "1", 100)
    pod.pod.status.nominatedNodeName = "n"
    result, status, _ = c.post_filter(pod)
    assert (result, status) == (None, Status.unschedulable(f"preemption: {dp.NOT_ELIGIBLE_TERMINATING}"))
    # Being deleted for another reason does not count.
    victim_pod.status.conditions = None
    assert c.post_filter(pod)[0] == PostFilterResult("m")


def test_a_nominated_node_that_became_unresolvable_lets_the_pod_preempt_again():
    victim_pod = running("going", "n", "2", 0)
    victim_pod.metadata.deletionTimestamp = EPOCH
    victim_pod.status.conditions = [
        m.PodCondition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")
    ]
    c = Cluster({"n": "2", "m": "2"}, [victim_pod, running("other", "m", "2", 0)])
    pod = pending("p", "1", 100)
    pod.pod.status.nominatedNodeName = "n"
    state = CycleState()
    statuses = c.statuses(state, pod)
    statuses.set("n", Status.unresolvable("gone"))
    result, status = c.plugin.post_filter(state, pod, statuses)
    assert (result, status) == (PostFilterResult("m"), None)


def test_success_nominates_the_node_and_records_the_victims_without_touching_the_snapshot():
    pods = [running(n, "big", c, p) for n, c, p in (("l1", "1500m", 50), ("l2", "2", 500), ("l3", "1500m", 200))]
    pods += [running("l4", "big", "1", 100), running("sys", "other", "3500m", 2000)]
    c = Cluster({"big": "8", "other": "4"}, pods)
    pod = pending("urgent", "4500m", 1000)
    result, status, state = c.post_filter(pod)
    assert (result, status) == (PostFilterResult("big"), None)
    decision = pe.decision(state)
    assert decision is not None and decision.preemptor is pod
    assert (decision.candidate.node, keys(decision.candidate.victims)) == ("big", ["l4", "l1"])
    assert len(c.node("big").pods) == 4
    assert c.fwk.services.metrics.preemption_attempts == 1


def test_only_unschedulable_nodes_are_candidates():
    pods = [running("a", "a", "2", 0), running("b", "b", "2", 0), running("c", "c", "2", 0)]
    c = Cluster({"a": "2", "b": "2", "c": "2"}, pods)
    pod = pending("p", "1", 10)
    state = CycleState()
    statuses = c.statuses(state, pod)
    statuses.set("a", Status.unresolvable("no"))
    del statuses.statuses["b"]  # absent: unresolvable
    result, status = c.plugin.post_filter(state, pod, statuses)
    assert (result, status) == (PostFilterResult("c"), None)


def test_no_candidate_gives_the_nested_histogram_and_clears_the_nomination():
    pods = [running("same", "a", "2", 10), running("low", "b", "1", 0), running("hi", "b", "1", 99)]
    c = Cluster({"a": "2", "b": "2", "huge": "1"}, pods)
    pod = pending("p", "2", 10)
    state = CycleState()
    statuses = c.statuses(state, pod)
    assert statuses.get("huge").code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE  # more than the node has
    result, status = c.plugin.post_filter(state, pod, statuses)
    assert result == PostFilterResult("")
    assert status == Status(
        Code.UNSCHEDULABLE,
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling.",
    )
    assert pe.decision(state) is None


def test_the_dry_run_stops_at_enough_candidates_once_one_breaks_no_budget():
    nodes = {f"n{i}": "2" for i in range(6)}
    pods = [running(f"v{i}", f"n{i}", "2", 0, labels={"app": "g"} if i < 2 else None) for i in range(6)]
    c = Cluster(nodes, pods, pdbs=[pdb("g", 0, app="g")], args={"minCandidateNodesAbsolute": 2})
    pod = pending("p", "1", 10)
    state = CycleState()
    c.statuses(state, pod)
    budgets = pe.budgets(c.handle.listers.pdbs)
    candidates, failed, errors = c.plugin.evaluator.dry_run(state, pod, c.snapshot.node_info_list, budgets, 0, 2)
    # n0 and n1 break the budget: the run goes on to n2, and candidates without violations come first.
    assert [(x.node, x.num_pdb_violations) for x in candidates] == [("n2", 0), ("n0", 1), ("n1", 1)]
    assert (failed, errors) == ({}, [])
    candidates, _, _ = c.plugin.evaluator.dry_run(state, pod, c.snapshot.node_info_list, budgets, 4, 2)
    assert [x.node for x in candidates] == ["n4", "n5"]  # from the offset, wrapping


def test_the_framework_joins_the_text_after_dynamic_resources():
    names = ["PrioritySort", "NodeResourcesFit", "DynamicResources", "DefaultPreemption", "DefaultBinder"]
    c = Cluster({"n": "2"}, [running("same", "n", "2", 10)], names=names)
    fwk = c.fwk
    pod = pending("p", "1", 10)
    state = CycleState()
    statuses = c.statuses(state, pod)
    _, status = fwk.run_post_filter(state, pod, statuses)
    assert status is not None and status.message == (
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for "
        "incoming pod."
    )


# -- acting, and the PreEnqueue gate ------------------------------------------------------------------


class Victims:
    """The API side of a preemption, recorded: a fake cluster whose patches and deletes are logged
    (and fail for the pod named `fail`), with the pods the scheduler still knows."""

    def __init__(self, victims: Sequence[Any], *, nominated: Sequence[PodInfo] = (), fail: str = "") -> None:
        self.victims = tuple(PodInfo(v) for v in victims)
        self.pods = {v.key: v.pod for v in self.victims}
        self.fail = fail
        self.log: list[str] = []
        self.activated: list[str] = []
        self.fwk = framework(
            in_tree_registry(),
            enabled=["PrioritySort", "DefaultBinder", dp.NAME],
            profile_name="default-scheduler",
            cluster=self,
            clock=FrozenClock(NOW),
            nominated={"n": list(nominated)},
            pod=lambda namespace, name: self.pods.get(f"{namespace}/{name}"),
            activate=lambda pods: self.activated.extend(p.name for p in pods),
        )
        self.plugin: dp.DefaultPreemption = self.fwk.plugin(dp.NAME)
        self.boss = pending("boss", "1", 100)

    async def patch(self, kind: Any, name: str, patch: Any, **kw: Any) -> Any:
        if "nominatedNodeName" in patch["status"]:
            self.log.append(f"clear {name}")
        return None

    async def delete(self, kind: Any, name: str, **kw: Any) -> None:
        await asyncio.sleep(0)
        gated = self.plugin.evaluator.is_preempting(self.boss.uid)  # what the gate would say (without asking it)
        self.log.append(f"preempt {name} gated={gated}")
        if name == self.fail:
            raise ApiError(f"cannot delete {name}")
        self.pods.pop(f"default/{name}", None)

    async def create(self, obj: Any, **kw: Any) -> Any:  # the Preempted events
        return obj

    def start(self) -> bool:
        """Act on a decision to evict every victim from node n; whether that started work."""
        self.plugin.evaluator.prepare_candidate(pe.Decision(self.boss, pe.Candidate("n", self.victims)))
        return bool(self.fwk.services.spawn.coroutines)

    def run(self) -> None:
        asyncio.run(self.fwk.services.spawn.run())


def test_the_preemptor_is_gated_until_its_victims_are_removed():
    lower, higher = pending("lower", "1", 50), pending("higher", "1", 500)
    victims = [running("v1", "n", "1", 0), running("v2", "n", "1", 0), running("v3", "n", "1", 0)]
    v = Victims(victims, nominated=[lower, higher])
    assert v.start()
    assert v.plugin.pre_enqueue(v.boss) == Status.unresolvable(dp.WAITING)
    assert v.plugin.pre_enqueue(lower) is None
    v.run()
    # The last victim is preempted alone, after the others; once it is gone the pod is free to go.
    assert v.log == ["clear lower", "preempt v1 gated=True", "preempt v2 gated=True", "preempt v3 gated=True"]
    assert v.plugin.pre_enqueue(v.boss) is None
    # The gate held it meanwhile: it is activated now, lest it wait for a deletion event that
    # arrived while it was held (the victims' events can all come before the work ends).
    assert v.activated == ["boss"]


def test_a_preemptor_the_gate_never_held_is_not_activated():
    v = Victims([running("v1", "n", "1", 0), running("v2", "n", "1", 0)])
    assert v.start()
    v.run()
    assert v.activated == []


def test_the_gate_opens_when_the_last_victim_is_gone_even_before_the_work_ends():
    v = Victims([running("only", "n", "1", 0)])
    v.pods.clear()  # the informer already says the victim is gone
    assert v.start()
    v.run()
    assert v.log == ["preempt only gated=False"]


def test_victims_already_being_deleted_are_skipped():
    going = running("going", "n", "1", 0)
    going.metadata.deletionTimestamp = EPOCH
    v = Victims([going])
    assert not v.start()
    assert not v.plugin.evaluator.is_preempting(v.boss.uid)


def test_a_failed_preemption_skips_the_last_victim_and_activates_the_preemptor():
    v = Victims([running("v1", "n", "1", 0), running("v2", "n", "1", 0)], fail="v1")
    assert v.start()
    v.run()
    assert v.log == ["preempt v1 gated=True"]
    assert v.activated == ["boss"]
    assert not v.plugin.evaluator.is_preempting(v.boss.uid)


def test_a_gated_preemptor_is_requeued_by_a_deletion_once_its_preemption_is_over():
    plugin = dp.new(None, standalone_handle())
    (registration,) = plugin.events_to_register()
    assert (registration.event.resource, registration.event.action) == (ASSIGNED_POD, ActionType.DELETE)
    preemptor = pending("p", "1", 100)
    plugin.evaluator._preempting[preemptor.uid] = None  # victims still being removed
    assert registration.hint(preemptor.pod, None, None) == QueueingHint.QUEUE_SKIP
    del plugin.evaluator._preempting[preemptor.uid]
    assert registration.hint(preemptor.pod, None, None) == QueueingHint.QUEUE


def test_preempted_event_note():
    assert pe.preempted_message(pending("p", "1", 1), "n1") == "Preempted by pod uid-p on node n1"
