"""The framework runtime applies upstream's rules to every status code at every extension point,
turns a plugin that raises into an Error, and refuses profiles it cannot build."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from builders import make_node, make_pod
from kubesched.clock import VirtualClock
from kubesched.framework import Framework, FrameworkError, ProfilePlugins
from kubesched.plugin import (
    SKIP,
    BindPlugin,
    Code,
    CycleState,
    FilterPlugin,
    NodeInfo,
    NodeToStatus,
    PermitPlugin,
    PodInfo,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
    StatusError,
)
from kubesched.plugin.testing import framework, services, snapshot_of
from kubesched.plugins.registry import in_tree_registry

CODES = list(Code)


def status(code: Code) -> Status | None:
    return None if code == Code.SUCCESS else Status(code, f"said {code}")


class Scripted(
    PreEnqueuePlugin,
    PreFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ReservePlugin,
    PermitPlugin,
    PreBindPlugin,
    BindPlugin,
    PostBindPlugin,
):
    """One plugin at every point: each returns (or raises) what the test scripted for it, and logs the call."""

    name: ClassVar[str] = "Scripted"

    def __init__(self, script: dict[str, Any], log: list[str], name: str = "Scripted") -> None:
        self.script = script
        self.log = log
        self.label = name

    def _say(self, point: str) -> Any:
        self.log.append(f"{self.label}.{point}")
        said = self.script.get(point)
        if isinstance(said, Exception):
            raise said
        return said

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        return self._say("pre_enqueue")

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Any:
        return self.script.get("pre_filter_result"), self._say("pre_filter")

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return self._say("filter")

    def post_filter(self, state: CycleState, pod: PodInfo, statuses: NodeToStatus) -> Any:
        return self.script.get("post_filter_result"), self._say("post_filter")

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        return self._say("pre_score")

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        said = self._say("score")
        return 50 if said is None else int(said)

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self._say("reserve")

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self._say("unreserve")

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return self._say("permit"), 30.0

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self._say("pre_bind")

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self._say("bind")

    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self._say("post_bind")


class Second(Scripted):
    name: ClassVar[str] = "Second"


def setup(
    first: dict[str, Any] | None = None, second: dict[str, Any] | None = None, *, clock: Any = None
) -> tuple[Framework, list[str]]:
    log: list[str] = []
    registry = in_tree_registry()
    registry.register("Scripted", lambda args, handle: Scripted(first or {}, log))
    registry.register("Second", lambda args, handle: Second(second or {}, log, "Second"))
    snapshot = snapshot_of([make_node("n1").obj, make_node("n2").obj])
    return framework(registry, enabled=["PrioritySort", "Scripted", "Second"], snapshot=snapshot, clock=clock), log


POD = PodInfo(make_pod("p").obj)


@pytest.fixture
def clock():
    c = VirtualClock()
    yield c
    c.close()


def nodes(fwk: Framework) -> list[NodeInfo]:
    return fwk.services.snapshot.node_info_list


# -- PreEnqueue: any non-success gates the pod --------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_pre_enqueue(code: Code) -> None:
    fwk, log = setup({"pre_enqueue": status(code)})
    got = fwk.run_pre_enqueue(POD)
    if code == Code.SUCCESS:
        assert got is None and log == ["Scripted.pre_enqueue", "Second.pre_enqueue"]
    else:
        assert got is not None and (got.code, got.plugin) == (code, "Scripted")
        assert log == ["Scripted.pre_enqueue"]


# -- PreFilter ----------------------------------------------------------------------------------------------

PRE_FILTER = {
    Code.SUCCESS: (None, ["Scripted.pre_filter", "Second.pre_filter"]),
    Code.UNSCHEDULABLE: (Code.UNSCHEDULABLE, ["Scripted.pre_filter", "Second.pre_filter"]),  # the others still run
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["Scripted.pre_filter"]),
    Code.ERROR: (Code.ERROR, ["Scripted.pre_filter"]),
    Code.WAIT: (Code.ERROR, ["Scripted.pre_filter"]),
    Code.PENDING: (Code.ERROR, ["Scripted.pre_filter"]),
    Code.SKIP: (None, ["Scripted.pre_filter", "Second.pre_filter"]),
}


@pytest.mark.parametrize("code", CODES)
def test_pre_filter(code: Code) -> None:
    fwk, log = setup({"pre_filter": status(code)})
    state = CycleState()
    _, got, _ = fwk.run_pre_filter(state, POD, nodes(fwk))
    want, calls = PRE_FILTER[code]
    assert (got.code if got is not None else None) == want
    assert log == calls
    if want == Code.ERROR:
        assert got is not None and got.message == f'running PreFilter plugin "Scripted": said {code}'
    assert ("Scripted" in state.skip_filter_plugins) == (code == Code.SKIP)


def test_pre_filter_results_intersect_and_an_empty_one_names_the_plugins() -> None:
    fwk, _ = setup({"pre_filter_result": PreFilterResult({"n1"})}, {"pre_filter_result": PreFilterResult({"n2"})})
    _, got, narrowing = fwk.run_pre_filter(CycleState(), POD, nodes(fwk))
    assert narrowing == ["Scripted", "Second"]
    assert got == Status.unresolvable("node(s) didn't satisfy plugin(s) [Scripted Second] simultaneously")


# -- Filter -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_filter(code: Code) -> None:
    fwk, log = setup({"filter": status(code)})
    got = fwk.run_filter(CycleState(), POD, nodes(fwk)[0])
    if code == Code.SUCCESS:
        assert got is None and log == ["Scripted.filter", "Second.filter"]
        return
    assert log == ["Scripted.filter"]  # the first plugin that does not pass decides
    assert got is not None and got.plugin == "Scripted"
    if code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING):
        assert got.code == code
    else:
        assert (got.code, got.message) == (Code.ERROR, f'running "Scripted" filter plugin: said {code}')


def test_a_filter_skipped_at_pre_filter_does_not_run() -> None:
    fwk, log = setup({"pre_filter": SKIP, "filter": Status.unschedulable("no")})
    state = CycleState()
    fwk.run_pre_filter(state, POD, nodes(fwk))
    assert fwk.run_filter(state, POD, nodes(fwk)[0]) is None
    assert "Scripted.filter" not in log


# -- PostFilter ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_post_filter(code: Code) -> None:
    fwk, log = setup(
        {"post_filter": status(code), "post_filter_result": PostFilterResult("n1")},
        {"post_filter": Status.unschedulable("second says no")},
    )
    result, got = fwk.run_post_filter(CycleState(), POD, NodeToStatus())
    if code == Code.SUCCESS:
        assert (result, got, log) == (PostFilterResult("n1"), None, ["Scripted.post_filter"])
    elif code == Code.UNSCHEDULABLE:  # reasons collected, the next plugin tried, the first rejector named
        assert log == ["Scripted.post_filter", "Second.post_filter"]
        assert got == Status(Code.UNSCHEDULABLE, f"said {code}", "second says no", plugin="Scripted")
        assert result == PostFilterResult("n1")
    elif code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert log == ["Scripted.post_filter"] and got is not None and got.code == code
    elif code == Code.PENDING:
        assert got is not None and got.code == Code.UNSCHEDULABLE
    else:
        assert log == ["Scripted.post_filter"] and got == Status(Code.ERROR, f"said {code}", plugin="Scripted")


# -- PreScore, Score ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_pre_score(code: Code) -> None:
    fwk, _ = setup({"pre_score": status(code)})
    state = CycleState()
    got = fwk.run_pre_score(state, POD, nodes(fwk))
    if code in (Code.SUCCESS, Code.SKIP):
        assert got is None
        assert ("Scripted" in state.skip_score_plugins) == (code == Code.SKIP)
    else:
        assert got is not None and got.message == f'running PreScore plugin "Scripted": said {code}'


def test_score_failures_and_out_of_range_scores_are_errors() -> None:
    fwk, _ = setup({"score": StatusError(Status.error("no data"))})
    _, _, got = fwk.run_score(CycleState(), POD, nodes(fwk))
    assert got == Status(Code.ERROR, 'running Score plugins: plugin "Scripted" failed with: no data', plugin="Scripted")
    fwk, _ = setup({"score": 101})
    _, _, got = fwk.run_score(CycleState(), POD, nodes(fwk))
    assert got is not None and got.message == (
        'plugin "Scripted" returns an invalid score 101, it should in the range of [0, 100] after normalizing'
    )


def test_scores_are_weighted_and_summed() -> None:
    fwk, _ = setup({"score": 10}, {"score": 30})
    totals, parts, got = fwk.run_score(CycleState(), POD, nodes(fwk))
    assert got is None and totals.tolist() == [40, 40]
    assert [(p.plugin, p.raw.tolist(), p.weight) for p in parts] == [("Scripted", [10, 10], 1), ("Second", [30, 30], 1)]


# -- Reserve, Permit ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_reserve(code: Code) -> None:
    fwk, log = setup({"reserve": status(code)})
    got = fwk.run_reserve(CycleState(), POD, "n1")
    if code in (Code.SUCCESS,):
        assert got is None and log == ["Scripted.reserve", "Second.reserve"]
    elif code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING):
        assert got is not None and (got.code, got.plugin) == (code, "Scripted")
    else:
        assert got is not None and got.message == f'running Reserve plugin "Scripted": said {code}'
    log.clear()
    fwk.run_unreserve(CycleState(), POD, "n1")
    assert log == ["Second.unreserve", "Scripted.unreserve"]  # every one, in reverse


@pytest.mark.parametrize("code", CODES)
def test_permit(code: Code, clock: VirtualClock) -> None:
    async def run() -> Status | None:
        fwk, _ = setup({"permit": status(code)}, clock=clock)
        got = fwk.run_permit(CycleState(), POD, "n1")
        if got is not None and got.code == Code.WAIT:
            waiting = fwk.handle.get_waiting_pod(POD.uid)
            assert waiting is not None and waiting.pending_plugins == ["Scripted"]
            waiting.reject("Scripted", "rejected")
        return got

    got = clock.run(run())
    if code == Code.SUCCESS:
        assert got is None
    elif code == Code.WAIT:
        assert got is not None and got.message == 'one or more plugins asked to wait and no plugin rejected pod "p"'
    elif code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING):
        assert got is not None and (got.code, got.plugin) == (code, "Scripted")
    else:
        assert got is not None and got.message == f'running Permit plugin "Scripted": said {code}'


# -- PreBind, Bind, PostBind --------------------------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_pre_bind(code: Code) -> None:
    fwk, _ = setup({"pre_bind": status(code)})
    got = asyncio.run(fwk.run_pre_bind(CycleState(), POD, "n1"))
    if code in (Code.SUCCESS, Code.SKIP):
        assert got is None
    elif code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING):
        assert got is not None and (got.code, got.plugin) == (code, "Scripted")
    else:
        assert got is not None and got.message == f'running PreBind plugin "Scripted": said {code}'


@pytest.mark.parametrize("code", CODES)
def test_bind(code: Code) -> None:
    fwk, log = setup({"bind": status(code)}, {"bind": SKIP})
    got = asyncio.run(fwk.run_bind(CycleState(), POD, "n1"))
    if code == Code.SUCCESS:
        assert got is None and log == ["Scripted.bind"]
    elif code == Code.SKIP:  # the next binder tries; when every one skips, that is the result
        assert got is not None and got.code == Code.SKIP and log == ["Scripted.bind", "Second.bind"]
    elif code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING):
        assert got is not None and (got.code, got.plugin) == (code, "Scripted")
    else:
        assert got is not None and got.message == f'running Bind plugin "Scripted": said {code}'


# -- a plugin that raises -------------------------------------------------------------------------------------

RAISING = [
    ("pre_enqueue", lambda f: f.run_pre_enqueue(POD), "ZeroDivisionError: division by zero", "preEnqueue"),
    ("pre_filter", lambda f: f.run_pre_filter(CycleState(), POD, nodes(f))[1], "running PreFilter plugin", "preFilter"),
    ("filter", lambda f: f.run_filter(CycleState(), POD, nodes(f)[0]), 'running "Scripted" filter plugin', "filter"),
    (
        "post_filter",
        lambda f: f.run_post_filter(CycleState(), POD, NodeToStatus())[1],
        "ZeroDivisionError",
        "postFilter",
    ),
    ("pre_score", lambda f: f.run_pre_score(CycleState(), POD, nodes(f)), "running PreScore plugin", "preScore"),
    ("score", lambda f: f.run_score(CycleState(), POD, nodes(f))[2], "running Score plugins", "score"),
    ("reserve", lambda f: f.run_reserve(CycleState(), POD, "n1"), "running Reserve plugin", "reserve"),
    ("permit", lambda f: f.run_permit(CycleState(), POD, "n1"), "running Permit plugin", "permit"),
    ("pre_bind", lambda f: asyncio.run(f.run_pre_bind(CycleState(), POD, "n1")), "running PreBind plugin", "preBind"),
    ("bind", lambda f: asyncio.run(f.run_bind(CycleState(), POD, "n1")), "running Bind plugin", "bind"),
]


@pytest.mark.parametrize(("method", "run", "prefix", "point"), RAISING)
def test_a_plugin_that_raises_fails_the_attempt_with_an_error_and_is_counted(
    method: str, run: Any, prefix: str, point: str
) -> None:
    fwk, _ = setup({method: ZeroDivisionError("division by zero")})
    got = run(fwk)
    assert got is not None and got.code == Code.ERROR and got.plugin == "Scripted"
    assert prefix in got.message and "ZeroDivisionError: division by zero" in got.message
    assert fwk.services.metrics.exceptions == [("Scripted", point)]


def test_unreserve_and_post_bind_that_raise_are_counted_and_the_others_still_run() -> None:
    fwk, log = setup({"unreserve": RuntimeError("x"), "post_bind": RuntimeError("y")})
    fwk.run_unreserve(CycleState(), POD, "n1")
    fwk.run_post_bind(CycleState(), POD, "n1")
    assert log == ["Second.unreserve", "Scripted.unreserve", "Scripted.post_bind", "Second.post_bind"]
    assert fwk.services.metrics.exceptions == [("Scripted", "reserve"), ("Scripted", "postBind")]


# -- profiles that cannot be built ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("enabled", "message"),
    [
        ({"multiPoint": [("Nope", None)]}, 'plugin "Nope" does not exist'),
        (
            {"multiPoint": [("DefaultBinder", None)]},
            'only one queue sort plugin required for profile with scheduler name "p", but got 0',
        ),
        (
            {"multiPoint": [("PrioritySort", None)], "queueSort": [("PrioritySort", None), ("PrioritySort", None)]},
            'plugin "PrioritySort" already registered as "queueSort"',
        ),
        (
            {"multiPoint": [("PrioritySort", None)]},
            'at least one bind plugin is needed for profile with scheduler name "p"',
        ),
    ],
)
def test_framework_errors(enabled: dict[str, Any], message: str) -> None:
    with pytest.raises(FrameworkError) as err:
        Framework("p", ProfilePlugins(enabled=enabled), in_tree_registry(), services())
    assert str(err.value) == message
