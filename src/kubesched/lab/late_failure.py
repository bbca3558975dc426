"""5.5.5 — failing after the decision costs more than failing before it. The same refusal made by
a plugin at Filter (every node refuses: the attempt ends after the search) and at Reserve (the
search, the scores and the choice are made, the pod assumed, then refused, unreserved and
forgotten). The work is counted, not timed: the Python calls the scheduling cycle makes (the same
code gives the same count on any machine), the cache writes and the Unreserve calls. The pod may
not preempt (`preemptionPolicy: Never`): a Filter refusal of a pod that may is also followed by
PostFilter's dry run over every node, which costs more than the whole Reserve path (the lab shows
that count too)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import ClassVar, ParamSpec, TypeVar

from kubesched.lab.harness import NODE, LabCluster, lab_cluster
from kubesched.lab.result import Check, LabResult
from kubesched.plugin import CycleState, FilterPlugin, NodeInfo, PluginSpec, PodInfo, ReservePlugin, Status
from kubesched.trace import extension_point
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.5.5", "Failing after the decision costs more than failing before it"
NODES = 10
REASON = "refused by policy"
P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class Refuser(FilterPlugin, ReservePlugin):
    """Refuses the pod at `at` (Filter or Reserve) with the same Unschedulable status."""

    name: ClassVar[str] = "Refuser"
    at: str = "Filter"
    unreserved: int = 0

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return Status.unschedulable(REASON) if self.at == "Filter" else None

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return Status.unschedulable(REASON) if self.at == "Reserve" else None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.unreserved += 1


@dataclass
class Cost:
    at: str
    calls: int  # Python calls made by the scheduling cycle
    cache_writes: list[str] = field(default_factory=list)
    unreserved: int = 0
    message: str = ""


def _counting(fn: Callable[P, R], counter: list[int]) -> Callable[P, R]:
    def counted(*args: P.args, **kwargs: P.kwargs) -> R:
        def profile(frame: FrameType, event: str, arg: object) -> None:
            if event == "call":
                counter[0] += 1

        previous = sys.getprofile()
        sys.setprofile(profile)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.setprofile(previous)

    return counted


def _noting(fn: Callable[P, R], name: str, writes: list[str]) -> Callable[P, R]:
    def noted(*args: P.args, **kwargs: P.kwargs) -> R:
        writes.append(name)
        return fn(*args, **kwargs)

    return noted


def _cost(at: str, *, seed: int, preempt: bool = False) -> Cost:
    refuser = Refuser(at)
    points = {"filter": {"enabled": [{"name": Refuser.name}]}, "reserve": {"enabled": [{"name": Refuser.name}]}}
    lab: LabCluster = lab_cluster(
        seed=seed,
        nodes=[NODE.make(f"node-{i:02d}", i) for i in range(NODES)],
        plugins=[PluginSpec(lambda args, handle: refuser, name=Refuser.name)],
        profiles=[{"schedulerName": "default-scheduler", "plugins": points}],
    )
    calls = [0]
    lab.scheduler.schedule_one = _counting(lab.scheduler.schedule_one, calls)  # type: ignore[method-assign]
    writes: list[str] = []
    cache = lab.scheduler.cache
    for method in ("assume_pod", "forget_pod"):
        setattr(cache, method, _noting(getattr(cache, method), method, writes))

    async def body() -> None:
        await lab.clock.sleep(0.2)
        policy = "PreemptLowerPriority" if preempt else "Never"
        await lab.cluster.create(make_pod("refused", {"cpu": "100m"}, preemptionPolicy=policy))
        await lab.clock.sleep(0.5)  # one attempt

    lab.run(body)
    failed = lab.records("cycle.failed", pod="default/refused")
    return Cost(at, calls[0], writes, refuser.unreserved, failed[0].details["message"] if failed else "")


def run(*, seed: int = 1, late: str = "Reserve") -> LabResult:
    """The refusal at Filter, then at `late` (Filter again makes the claim false: the same cost)."""
    early, after = _cost("Filter", seed=seed), _cost(late, seed=seed)
    tried = _cost("Filter", seed=seed, preempt=True)
    factor = round(after.calls / early.calls, 2) if early.calls else 0.0
    steps = [
        Step(
            0.0,
            f"refused at {c.at}: {c.calls} calls in the scheduling cycle; cache writes {c.cache_writes or 'none'}; "
            f"Unreserve {c.unreserved}x; FailedScheduling: {c.message}",
            upstream=(extension_point(c.at),),
        )
        for c in (early, after)
    ]
    steps.append(
        Step(
            0.0,
            f"refused at Filter, the pod allowed to preempt: {tried.calls} calls — PostFilter's dry run over every "
            "node is paid too, which a refusal at Reserve never reaches",
            upstream=(extension_point("postFilter"),),
        )
    )
    holds = {
        "costs more": after.calls > early.calls,
        "assumes and forgets": after.cache_writes == ["assume_pod", "forget_pod"],
        "unreserves once": after.unreserved == 1,
        "the early refusal writes nothing": not early.cache_writes,
    }
    check = Check(
        claim="for a pod that cannot preempt, the refusal at Reserve costs more calls than the same refusal at "
        "Filter (the factor measured), and adds an assume, a forget and an Unreserve the Filter refusal never needs",
        evidence={
            "callsAtFilter": early.calls,
            f"callsAt{after.at}": after.calls,
            "factor": factor,
            "cacheWrites": after.cache_writes,
            "holds": holds,
        },
        passed=all(holds.values()),
    )
    return LabResult(ID, TITLE, steps, check)
