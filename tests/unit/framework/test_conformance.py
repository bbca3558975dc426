"""A plugin is enrolled at the points it declares, and refused at start-up when it does not
implement them as their protocols say."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from kubesched.framework import FrameworkError
from kubesched.plugin import (
    BindPlugin,
    CycleState,
    FilterPlugin,
    NodeInfo,
    PodInfo,
    PreFilterPlugin,
    ScorePlugin,
    Status,
)
from kubesched.plugin.testing import framework
from kubesched.plugins.registry import in_tree_registry


class GoodFilter(FilterPlugin):
    name: ClassVar[str] = "Probe"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None


class Misspelt(FilterPlugin):
    name: ClassVar[str] = "Probe"

    def filer(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None


class WrongParameters(FilterPlugin):
    name: ClassVar[str] = "Probe"

    def filter(self, pod: PodInfo) -> Status | None:  # type: ignore[override]
        return None


class AsyncFilter(FilterPlugin):
    name: ClassVar[str] = "Probe"

    async def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:  # type: ignore[override]
        return None


class SyncBind(BindPlugin):
    name: ClassVar[str] = "Probe"

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:  # type: ignore[override]
        return None


class NearMiss(FilterPlugin):
    name: ClassVar[str] = "Probe"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

    def pre_filer(self, state: CycleState, pod: PodInfo, nodes: Any) -> Any:
        return None, None


class Nameless(FilterPlugin):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None


class ExtraOptionalParameter(FilterPlugin):
    name: ClassVar[str] = "Probe"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo, verbose: bool = False) -> Status | None:
        return None


class FilterWithScoreHelper(FilterPlugin):
    """A Filter plugin with a helper that happens to be called `score`."""

    name: ClassVar[str] = "Probe"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None if self.score(node) else Status.unschedulable("no")

    def score(self, node: NodeInfo) -> int:
        return 1


def build(cls: type[Any], *, enabled: dict[str, Any] | None = None) -> Any:
    registry = in_tree_registry()
    registry.register("Probe", lambda args, handle: cls())
    if enabled is None:
        return framework(registry, enabled=["PrioritySort", "DefaultBinder", "Probe"])
    profile_plugins = {"multiPoint": [("PrioritySort", None), ("DefaultBinder", None)], **enabled}
    from kubesched.framework import Framework, ProfilePlugins
    from kubesched.plugin.testing import services

    return Framework("test", ProfilePlugins(enabled=profile_plugins), registry, services())


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (
            Misspelt,
            'plugin "Probe" declares FilterPlugin but does not implement filter (it has "filer": a misspelling?)',
        ),
        (WrongParameters, 'plugin "Probe" filter(pod: '),
        (AsyncFilter, 'plugin "Probe" filter must be a plain function (not async): def filter(self, state, pod, node)'),
        (SyncBind, 'plugin "Probe" bind must be a coroutine function (async def): async def bind(self, state, pod'),
        (NearMiss, 'plugin "Probe" has a method "pre_filer": did you mean "pre_filter"?'),
        (Nameless, 'plugin "Probe" has no `name`'),
    ],
)
def test_a_plugin_that_does_not_conform_is_refused_naming_it_and_the_problem(cls: type[Any], message: str) -> None:
    with pytest.raises(FrameworkError) as err:
        build(cls)
    assert str(err.value).startswith(message), str(err.value)


def test_a_wrong_signature_says_what_the_protocol_wants() -> None:
    with pytest.raises(FrameworkError, match=r"does not take def filter\(self, state, pod, node\)"):
        build(WrongParameters)


@pytest.mark.parametrize("cls", [GoodFilter, ExtraOptionalParameter])
def test_the_corrected_plugin_is_enrolled(cls: type[Any]) -> None:
    fwk = build(cls)
    assert "Probe" in fwk.names("filter")


def test_a_plugin_enabled_at_a_point_it_does_not_declare_is_refused() -> None:
    with pytest.raises(FrameworkError) as err:
        build(GoodFilter, enabled={"score": [("Probe", 1)]})
    assert str(err.value) == (
        'plugin "Probe" does not extend score plugin (its class does not declare ScorePlugin; it declares: filter)'
    )


def test_multipoint_enrols_a_plugin_only_where_it_declares() -> None:
    fwk = build(FilterWithScoreHelper)
    assert "Probe" in fwk.names("filter")
    assert "Probe" not in fwk.names("score")  # its `score` helper is not a Score implementation


def test_a_factory_that_raises_is_a_start_up_error_naming_the_plugin() -> None:
    def broken(args: Any, handle: Any) -> Any:
        raise KeyError("gpu")

    registry = in_tree_registry()
    registry.register("Broken", broken)
    with pytest.raises(FrameworkError, match=r'^plugin "Broken": its factory failed: KeyError: \'gpu\'$'):
        framework(registry, enabled=["PrioritySort", "DefaultBinder", "Broken"])


def test_a_factory_that_builds_a_plugin_of_another_name_is_refused() -> None:
    registry = in_tree_registry()
    registry.register("Other", lambda args, handle: GoodFilter())
    with pytest.raises(FrameworkError, match='plugin "Other": its factory built a plugin named "Probe"'):
        framework(registry, enabled=["PrioritySort", "DefaultBinder", "Other"])


def test_every_in_tree_plugin_conforms() -> None:
    """Every in-tree plugin passes the conformance check, and declares at least one point."""
    from kubesched.framework.conformance import declared_points, problems
    from kubesched.plugin.testing import standalone_handle

    registry = in_tree_registry()
    for name in registry:
        entry = registry.get(name)
        assert entry is not None
        plugin = entry.factory(None, standalone_handle())
        assert problems(plugin) == [], name
        assert declared_points(plugin), name
        assert plugin.name == name


class _Score(ScorePlugin, PreFilterPlugin):
    name: ClassVar[str] = "Probe"

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> Any:
        return None, None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return 0


def test_declared_points_are_listed_in_the_error_for_another_point() -> None:
    with pytest.raises(FrameworkError, match="it declares: preFilter, score"):
        build(_Score, enabled={"filter": [("Probe", None)]})


def _in_tree_filter_and_score_plugins() -> list[str]:
    from kubesched.framework.conformance import declares
    from kubesched.plugin.testing import standalone_handle

    registry = in_tree_registry()
    names = []
    for name in registry:
        entry = registry.get(name)
        assert entry is not None
        if declares(entry.factory(None, standalone_handle()), FilterPlugin) or declares(
            entry.factory(None, standalone_handle()), ScorePlugin
        ):
            names.append(name)
    return names


@pytest.mark.parametrize("name", _in_tree_filter_and_score_plugins())
def test_every_in_tree_plugin_passes_the_conformance_helper(name: str) -> None:
    """`check_plugin` on builder-made nodes and pods: the batch methods agree with the per-node ones."""
    from builders import make_node, make_pod
    from kubesched.plugin.testing import check_plugin

    registry = in_tree_registry()
    entry = registry.get(name)
    assert entry is not None
    nodes = [make_node("small").capacity(cpu="1", memory="2Gi", pods="110").labels(zone="a").obj]
    nodes += [make_node("big").capacity(cpu="8", memory="32Gi", pods="110").labels(zone="b").obj]
    running = [make_pod("r").req(cpu="500m").node("small").labels(app="web").obj]
    pending = [make_pod("p").req(cpu="600m").labels(app="web").obj, make_pod("q").req(cpu="2").obj]
    verdicts = check_plugin(entry.factory, name=name, nodes=nodes, pods=running, pending=pending)
    assert len(verdicts) == 2
