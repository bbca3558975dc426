"""5.1.2 — the extension points, and what a failure at each one costs. A plugin fails at one point
with Error, then with Unschedulable; each row says what the attempt became, where the queue put the
pod, and whether Unreserve ran (and the assumed pod was forgotten). The expected rows are upstream's
semantics (framework.go's Run*Plugins, schedule_one.go's failure handling)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kubesched.cli.lab.harness import NODE, lab_cluster
from kubesched.cli.lab.result import Check, LabResult
from kubesched.plugin import (
    BindPlugin,
    Code,
    CycleState,
    FilterPlugin,
    NodeInfo,
    PermitPlugin,
    PluginSpec,
    PodInfo,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
    StatusError,
)
from kubesched.sim import make_nodes
from kubesched.trace import extension_point
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.1.2", "The extension points, and what an error at each one costs"
CODES = (Code.ERROR, Code.UNSCHEDULABLE)
BACKOFF, WAITING = "backoffQ", "unschedulablePods"
# (point, code) -> (where the pod goes, whether Unreserve runs): upstream v1.36.2.
# An error anywhere backs off with no rejecting plugin; a rejection waits for an event, except at
# PreScore and Score, where every non-success is an error, and at PreBind and Bind, past Permit,
# where the queue is already done with the pod and the plain status names no rejecting plugin, so
# it backs off too (schedule_one.go's bindingCycle and handleBindingCycleError). Past Reserve, a
# failure unreserves and forgets the assumed pod.
UPSTREAM: dict[tuple[str, str], tuple[str, bool]] = {
    ("PreFilter", "Error"): (BACKOFF, False),
    ("PreFilter", "Unschedulable"): (WAITING, False),
    ("Filter", "Error"): (BACKOFF, False),
    ("Filter", "Unschedulable"): (WAITING, False),
    ("PreScore", "Error"): (BACKOFF, False),
    ("PreScore", "Unschedulable"): (BACKOFF, False),
    ("Score", "Error"): (BACKOFF, False),
    ("Score", "Unschedulable"): (BACKOFF, False),
    ("Reserve", "Error"): (BACKOFF, True),
    ("Reserve", "Unschedulable"): (WAITING, True),
    ("Permit", "Error"): (BACKOFF, True),
    ("Permit", "Unschedulable"): (WAITING, True),
    ("PreBind", "Error"): (BACKOFF, True),
    ("PreBind", "Unschedulable"): (BACKOFF, True),
    ("Bind", "Error"): (BACKOFF, True),
    ("Bind", "Unschedulable"): (BACKOFF, True),
}

# Where a rejection still reads as a FitError over the one chosen node (`0/1 nodes are available:
# ...`); at PreBind and Bind the FailedScheduling message is the plugin's own.
ON_ONE_NODE = ("Reserve", "Permit")


LATE = ("Reserve", "Permit", "PreBind", "Bind")  # the points past the search, whose messages are checked


def expected_message(point: str, code: str) -> str:
    """The FailedScheduling message upstream gives the failing plugin's status at a point of LATE:
    an error wrapped with the plugin's name, a rejection over the one chosen node at Reserve and
    Permit, the plugin's own words at PreBind and Bind."""
    plain = f"failing on purpose at {point}"
    if code != str(Code.UNSCHEDULABLE):
        return f'running {point} plugin "Failing{point}": {plain}'
    if point in ON_ONE_NODE:
        return f"0/1 nodes are available: 1 {plain}."
    return plain


@dataclass
class Failing:
    """What every failing plugin shares: the code it fails with, and the message."""

    name: ClassVar[str]
    code: Code

    def status(self) -> Status:
        return Status(self.code, f"failing on purpose at {type(self).__name__.removeprefix('Failing')}")


class FailingPreFilter(Failing, PreFilterPlugin):
    name: ClassVar[str] = "FailingPreFilter"

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        return None, self.status()


class FailingFilter(Failing, FilterPlugin):
    name: ClassVar[str] = "FailingFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return self.status()


class FailingPreScore(Failing, PreScorePlugin):
    name: ClassVar[str] = "FailingPreScore"

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Any) -> Status | None:
        return self.status()


class FailingScore(Failing, ScorePlugin):
    name: ClassVar[str] = "FailingScore"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        raise StatusError(self.status())


class FailingReserve(Failing, ReservePlugin):
    name: ClassVar[str] = "FailingReserve"

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self.status()

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        pass


class FailingPermit(Failing, PermitPlugin):
    name: ClassVar[str] = "FailingPermit"

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return self.status(), 0.0


class FailingPreBind(Failing, PreBindPlugin):
    name: ClassVar[str] = "FailingPreBind"

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self.status()


class FailingBind(Failing, BindPlugin):
    name: ClassVar[str] = "FailingBind"

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self.status()


FAILING = (
    FailingPreFilter,
    FailingFilter,
    FailingPreScore,
    FailingScore,
    FailingReserve,
    FailingPermit,
    FailingPreBind,
    FailingBind,
)


@dataclass
class Watcher(ReservePlugin):
    """A Reserve plugin that notes each Unreserve: the cleanup a failure after Reserve costs."""

    name: ClassVar[str] = "Watcher"
    unreserved: list[str] = field(default_factory=list)

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.unreserved.append(node_name)


@dataclass(frozen=True)
class Row:
    point: str
    code: str
    queue: str  # where the pod went after the attempt
    unreserved: bool
    forgotten: bool  # not in the cache after the attempt (assumed and forgotten, or never assumed)
    message: str

    def outcome(self) -> tuple[str, bool]:
        return self.queue, self.unreserved


def _row(failing: type[Failing], code: Code, seed: int) -> Row:
    point = failing.name.removeprefix("Failing")
    watcher = Watcher()
    key = point[:1].lower() + point[1:]
    enabled: dict[str, Any] = {key: {"enabled": [{"name": failing.name}]}}
    enabled.setdefault("reserve", {"enabled": []})["enabled"].append({"name": Watcher.name})
    if point == "Bind":
        enabled["bind"]["disabled"] = [{"name": "DefaultBinder"}]
    specs = [
        PluginSpec(lambda args, handle: failing(code), name=failing.name),
        PluginSpec(lambda args, handle: watcher, name=Watcher.name),
    ]
    lab = lab_cluster(
        seed=seed,
        nodes=make_nodes(2, NODE),
        plugins=specs,
        profiles=[{"schedulerName": "default-scheduler", "plugins": enabled}],
    )

    async def body() -> None:
        await lab.clock.sleep(0.2)
        await lab.cluster.create(make_pod("probe", {"cpu": "100m"}))
        await lab.clock.sleep(0.5)  # less than the first backoff: one attempt

    lab.run(body)
    moved = [r for r in lab.records("queue.move", pod="default/probe") if r.details.get("from") == "inFlight"]
    failed = lab.records("cycle.failed", pod="default/probe")
    uid = lab.pod("probe").metadata.uid
    return Row(
        point,
        str(code),
        moved[0].details["to"] if moved else "none",
        bool(watcher.unreserved),
        lab.scheduler.cache.pod(uid) is None,
        failed[0].details["message"] if failed else "",
    )


def run(*, seed: int = 1, answers: Mapping[tuple[str, str], tuple[str, bool]] | None = None) -> LabResult:
    """Sixteen attempts, one per point and code, each on two fresh nodes. `answers` replaces the
    expected rows (upstream's) where given: a wrong answer makes the check fail."""
    expected = {**UPSTREAM, **(answers or {})}
    rows = [_row(failing, code, seed) for failing in FAILING for code in CODES]
    steps = [
        Step(
            0.0,
            f"{r.point} {r.code}: pod to {r.queue}; Unreserve {'ran' if r.unreserved else 'did not run'}; "
            f"cache {'holds nothing of it' if r.forgotten else 'still holds it'}"
            + (f"; FailedScheduling: {r.message}" if r.message else ""),
            upstream=(extension_point(r.point),),
        )
        for r in rows
    ]
    wrong: dict[str, dict[str, object]] = {
        f"{r.point} {r.code}": {"seen": r.outcome(), "expected": expected[(r.point, r.code)]}
        for r in rows
        if r.outcome() != expected[(r.point, r.code)] or not r.forgotten
    }
    wrong.update(
        {
            f"{r.point} {r.code} message": {"seen": r.message, "expected": expected_message(r.point, r.code)}
            for r in rows
            if r.point in LATE and r.message != expected_message(r.point, r.code)
        }
    )
    check = Check(
        claim="each row matches upstream's semantics: errors back off, rejections wait in unschedulablePods (but "
        "PreScore and Score turn every failure into an error, and a rejection at PreBind or Bind, past Permit, "
        "backs off with the plugin's own message), and any failure after Reserve runs Unreserve and forgets the "
        "assumed pod",
        evidence={"rows": len(rows), "differ": wrong},
        passed=len(rows) == len(expected) and not wrong,
    )
    return LabResult(ID, TITLE, steps, check)
