"""5.1.2 — the extension points, and what a failure at each one costs. A plugin fails at one point
with Error, then with Unschedulable; each row says what the attempt became, where the queue put the
pod, and whether Unreserve ran (and the assumed pod was forgotten). The expected rows are read off
v1.36.2's lines — the one that hands each failure on, whether it names the plugin as a rejector,
the queue's line sending a pod without one to backoffQ, the lines that unreserve — each checked
against the digests of that source, so a misreading of upstream makes the check fail."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from kubesched.api.objects import meta_of, present
from kubesched.lab.harness import NODE, lab_cluster
from kubesched.lab.result import Check, LabResult
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
from kubesched.trace import cite, extension_point
from kubesched.trace.digests import Digests, line_hash, load_digests
from kubesched.trace.narrate import Step
from kubesched.trace.upstream import SITES
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.1.2", "The extension points, and what an error at each one costs"
CODES = (Code.ERROR, Code.UNSCHEDULABLE)
BACKOFF, WAITING = "backoffQ", "unschedulablePods"
POINTS = ("PreFilter", "Filter", "PreScore", "Score", "Reserve", "Permit", "PreBind", "Bind")


@dataclass(frozen=True)
class Line:
    """One line of v1.36.2's source, as it is written (whitespace aside), within the span of the
    citation row `site`: what a row of the table rests on."""

    site: str
    text: str

    def held(self, digests: Digests) -> bool:
        """Whether the line is in its site's span, by the digests of that source."""
        row = SITES[self.site]
        return line_hash(self.text) in digests["files"][row.file]["spans"][row.lines]


@dataclass(frozen=True)
class Failure:
    """How v1.36.2 hands on a failure at `point` with `code`: the line that does it, and whether
    what it hands on names the plugin as a rejector (a FitError with the plugin among the
    diagnosis' UnschedulablePlugins) or is a plain status, which names none."""

    point: str
    code: str
    line: Line
    names_rejector: bool


# Where each failure leaves v1.36.2's scheduler, read off its lines. Only Unschedulable at the
# points that build a FitError names the plugin; PreScore and Score wrap every non-success in an
# error, and past Permit the status is passed on as it came.
FAILURES: tuple[Failure, ...] = (
    Failure("PreFilter", "Error", Line("findNodesThatFitPod", 'return nil, diagnosis, "", s.AsError()'), False),
    Failure("PreFilter", "Unschedulable", Line("findNodesThatFitPod", "diagnosis.AddPluginStatus(s)"), True),
    Failure(
        "Filter",
        "Error",
        Line(
            "RunFilterPlugins",
            'status = fwk.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), status.AsError()))',
        ),
        False,
    ),
    Failure(
        "Filter", "Unschedulable", Line("findNodesThatPassFilters", "diagnosis.AddPluginStatus(item.status)"), True
    ),
    *(
        Failure(
            "PreScore",
            code,
            Line(
                "RunPreScorePlugins",
                'return fwk.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), status.AsError()))',
            ),
            False,
        )
        for code in ("Error", "Unschedulable")
    ),
    *(
        Failure(
            "Score",
            code,
            Line("RunScorePlugins", 'return nil, fwk.AsStatus(fmt.Errorf("running Score plugins: %w", err))'),
            False,
        )
        for code in ("Error", "Unschedulable")
    ),
    Failure("Reserve", "Error", Line("assumeAndReserve", "return assumedPodInfo, sts"), False),
    Failure("Reserve", "Unschedulable", Line("assumeAndReserve", "fitErr.Diagnosis.AddPluginStatus(sts)"), True),
    Failure("Permit", "Error", Line("prepareForBindingCycle", "return assumedPodInfo, runPermitStatus"), False),
    Failure(
        "Permit",
        "Unschedulable",
        Line("prepareForBindingCycle", "fitErr.Diagnosis.AddPluginStatus(runPermitStatus)"),
        True,
    ),
    *(
        Failure(
            "PreBind",
            code,
            Line(
                "bindingCycle",
                "if status := schedFramework.RunPreBindPlugins(ctx, state, assumedPod, scheduleResult.SuggestedHost); "
                "!status.IsSuccess() {",
            ),
            False,
        )
        for code in ("Error", "Unschedulable")
    ),
    *(
        Failure(
            "Bind",
            code,
            Line(
                "bindingCycle",
                "if status := sched.bind(ctx, schedFramework, assumedPod, scheduleResult.SuggestedHost, state); "
                "!status.IsSuccess() {",
            ),
            False,
        )
        for code in ("Error", "Unschedulable")
    ),
)
# Only a FitError's plugins become the pod's rejectors; a pod returned with none backs off, one
# with a rejector waits for an event (in unschedulablePods when none came while it was in flight).
REJECTORS = Line("handleSchedulingFailure", "podInfo.UnschedulablePlugins = fitError.Diagnosis.UnschedulablePlugins")
NO_REJECTOR_BACKS_OFF = Line(
    "determineSchedulingHintForInFlightPod",
    "if len(pInfo.UnschedulablePlugins) == 0 && len(pInfo.PendingPlugins) == 0 {",
)
# The points whose failure unreserves and forgets the assumed pod, and the line that does it.
UNRESERVES: dict[str, Line] = {
    "Reserve": Line(
        "assumeAndReserve",
        "err := sched.unreserveAndForget(ctx, state, schedFramework, assumedPodInfo, scheduleResult.SuggestedHost)",
    ),
    "Permit": Line(
        "prepareForBindingCycle",
        "err := sched.unreserveAndForget(ctx, state, schedFramework, assumedPodInfo, scheduleResult.SuggestedHost)",
    ),
    **dict.fromkeys(
        ("PreBind", "Bind"),
        Line(
            "handleBindingCycleError",
            "if forgetErr := sched.unreserveAndForget(ctx, state, fwk, podInfo, scheduleResult.SuggestedHost); "
            "forgetErr != nil {",
        ),
    ),
}


def read_from_source(
    failures: Sequence[Failure],
    unreserves: Mapping[str, Line] = UNRESERVES,
    digests: Digests | None = None,
) -> tuple[dict[tuple[str, str], tuple[str, bool]], list[str]]:
    """The table as the lines say it — (point, code) -> (where the pod goes, whether Unreserve
    runs) — and the lines it rests on that are not in v1.36.2's source where said (checked against
    the digests of that source)."""
    read = digests if digests is not None else load_digests()
    rests_on = [REJECTORS, NO_REJECTOR_BACKS_OFF, *(f.line for f in failures), *unreserves.values()]
    missing = sorted({f"{line.site}: {line.text}" for line in rests_on if not line.held(read)})
    table = {(f.point, f.code): (WAITING if f.names_rejector else BACKOFF, f.point in unreserves) for f in failures}
    return table, missing


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

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: object
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, self.status()


class FailingFilter(Failing, FilterPlugin):
    name: ClassVar[str] = "FailingFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return self.status()


class FailingPreScore(Failing, PreScorePlugin):
    name: ClassVar[str] = "FailingPreScore"

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: object) -> Status | None:
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
    enabled: dict[str, dict[str, list[dict[str, str]]]] = {key: {"enabled": [{"name": failing.name}]}}
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
    uid = present(meta_of(lab.pod("probe")).uid, "its uid")
    return Row(
        point,
        str(code),
        moved[0].details["to"] if moved else "none",
        bool(watcher.unreserved),
        lab.scheduler.cache.pod(uid) is None,
        failed[0].details["message"] if failed else "",
    )


def run(
    *,
    seed: int = 1,
    answers: Mapping[tuple[str, str], tuple[str, bool]] | None = None,
    failures: Sequence[Failure] | None = None,
) -> LabResult:
    """Sixteen attempts, one per point and code, each on two fresh nodes, against the table read
    off v1.36.2's lines (`failures`: what each failure rests on there; a line the source does not
    have makes the check fail). `answers` replaces rows where given: a wrong answer makes the
    check fail too."""
    failures = FAILURES if failures is None else failures
    table, missing = read_from_source(failures)
    rests_on = {(f.point, f.code): f.line.site for f in failures}
    expected = {**table, **(answers or {})}
    rows = [_row(failing, code, seed) for failing in FAILING for code in CODES]
    steps = [
        Step(
            0.0,
            f"{r.point} {r.code}: pod to {r.queue}; Unreserve {'ran' if r.unreserved else 'did not run'}; "
            f"cache {'holds nothing of it' if r.forgotten else 'still holds it'}"
            + (f"; FailedScheduling: {r.message}" if r.message else ""),
            upstream=(
                extension_point(r.point),
                *((cite(rests_on[(r.point, r.code)]),) if (r.point, r.code) in rests_on else ()),
                *((cite(UNRESERVES[r.point].site),) if r.point in UNRESERVES else ()),
            ),
        )
        for r in rows
    ]
    steps.append(
        Step(
            0.0,
            "v1.36.2 makes a failure's plugins the pod's rejectors only from a FitError, and sends a pod back "
            f"with none to backoffQ; {len(failures)} lines of its source say how each failure is handed on, "
            + (f"{len(missing)} of them not found there" if missing else "each found where said"),
            upstream=(cite(REJECTORS.site), cite(NO_REJECTOR_BACKS_OFF.site)),
        )
    )
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
        claim="each row matches what v1.36.2's lines say: errors back off, rejections wait in unschedulablePods (but "
        "PreScore and Score turn every failure into an error, and a rejection at PreBind or Bind, past Permit, "
        "backs off with the plugin's own message), and any failure after Reserve runs Unreserve and forgets the "
        "assumed pod",
        evidence={"rows": len(rows), "differ": wrong, "notInSource": missing},
        passed=len(rows) == len(expected) and not wrong and not missing,
    )
    return LabResult(ID, TITLE, steps, check)
