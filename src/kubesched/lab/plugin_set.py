"""5.1.4 — The default plugin set, mapped onto the points it fills. The default profile built as
`kubesched run` builds it, each extension point's plugins in the order they run and each score
plugin's weight, against v1.36.2's defaults (apis/config/v1/default_plugins.go) restated here —
and the restatement checked line by line against the digests of that source."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubesched.cache import Snapshot
from kubesched.clock import RealClock
from kubesched.config import default_config
from kubesched.framework.handle import Services
from kubesched.framework.interface import ExtensionPoint
from kubesched.lab.result import Check, LabResult, site_of
from kubesched.scheduler.discovery import plugin_registry
from kubesched.scheduler.profiles import build_frameworks
from kubesched.trace import cite
from kubesched.trace.digests import Digests, line_hash, load_digests
from kubesched.trace.narrate import Step
from kubesched.trace.upstream import SITES

ID, TITLE = "5.1.4", "The default plugin set, mapped onto the points it fills"
E = ExtensionPoint
DEFAULTS, GATES, DRA = "getDefaultPlugins", "applyFeatureGates", "applyDynamicResources"


@dataclass(frozen=True)
class Default:
    """One plugin of v1.36.2's default profile as its source declares it: the points it fills,
    the weight written beside it (None: none written, so 1), and the function that adds it."""

    name: str
    points: tuple[ExtensionPoint, ...]
    weight: int | None = None
    added_by: str = DEFAULTS

    def source_line(self) -> str:
        """The line of `added_by` that adds it, as v1.36.2 writes it."""
        weight = f", Weight: ptr.To[int32]({self.weight})" if self.weight is not None else ""
        plugin = f"{{Name: names.{self.name}{weight}}}"
        if self.added_by == GATES:
            return f"config.MultiPoint.Enabled = append(config.MultiPoint.Enabled, v1.Plugin{plugin})"
        if self.added_by == DRA:
            return f"extended = append(extended, v1.Plugin{plugin})"
        return plugin + ","


# v1.36.2's default profile, in its multiPoint order (the feature gates on by default applied).
UPSTREAM: tuple[Default, ...] = (
    Default("SchedulingGates", (E.PRE_ENQUEUE,)),
    Default("PrioritySort", (E.QUEUE_SORT,)),
    Default("NodeUnschedulable", (E.FILTER,)),
    Default("NodeName", (E.FILTER,)),
    Default("TaintToleration", (E.FILTER, E.PRE_SCORE, E.SCORE), 3),
    Default("NodeAffinity", (E.PRE_FILTER, E.FILTER, E.PRE_SCORE, E.SCORE), 2),
    Default("NodePorts", (E.PRE_FILTER, E.FILTER)),
    Default("NodeResourcesFit", (E.PRE_FILTER, E.FILTER, E.PRE_SCORE, E.SCORE), 1),
    Default("VolumeRestrictions", (E.PRE_FILTER, E.FILTER)),
    Default("NodeVolumeLimits", (E.PRE_FILTER, E.FILTER)),
    Default("VolumeBinding", (E.PRE_FILTER, E.FILTER, E.RESERVE, E.PRE_BIND, E.PRE_SCORE, E.SCORE)),
    Default("VolumeZone", (E.PRE_FILTER, E.FILTER)),
    Default("PodTopologySpread", (E.PRE_FILTER, E.FILTER, E.PRE_SCORE, E.SCORE), 2),
    Default("InterPodAffinity", (E.PRE_FILTER, E.FILTER, E.PRE_SCORE, E.SCORE), 2),
    Default(
        "DynamicResources",
        (E.PRE_ENQUEUE, E.PRE_FILTER, E.FILTER, E.POST_FILTER, E.RESERVE, E.PRE_BIND, E.SCORE),
        2,
        DRA,
    ),
    Default("DefaultPreemption", (E.PRE_ENQUEUE, E.POST_FILTER)),
    Default("NodeResourcesBalancedAllocation", (E.PRE_SCORE, E.SCORE), 1),
    Default("ImageLocality", (E.SCORE,), 1),
    Default("DefaultBinder", (E.BIND,)),
    Default("NodeDeclaredFeatures", (E.PRE_FILTER, E.FILTER), added_by=GATES),
)


def upstream_points(restated: Sequence[Default] = UPSTREAM) -> dict[str, list[str]]:
    return {str(p): [d.name for d in restated if p in d.points] for p in ExtensionPoint}


def upstream_weights(restated: Sequence[Default] = UPSTREAM) -> dict[str, int]:
    """Each score plugin's weight: the one written, or 1 (getValidScoreWeights)."""
    return {d.name: d.weight if d.weight is not None else 1 for d in restated if E.SCORE in d.points}


def read_from_source(restated: Sequence[Default], digests: Digests | None = None) -> tuple[list[str], list[str]]:
    """The multiPoint order v1.36.2's source gives the restated plugins, and those whose line is not
    in the function the restatement says adds them (checked against the digests of the source):
    getDefaultPlugins' list in its line order, then applyFeatureGates' NodeDeclaredFeatures appended,
    then applyDynamicResources' plugin inserted before DefaultPreemption."""
    read = digests if digests is not None else load_digests()
    where: dict[str, list[str]] = {}
    for fn in (DEFAULTS, GATES, DRA):
        site = SITES[fn]
        where[fn] = read["files"][site.file]["spans"][site.lines]
    missing = [d.name for d in restated if line_hash(d.source_line()) not in where[d.added_by]]
    found = [d for d in restated if d.name not in missing]
    order = [d.name for d in sorted((d for d in found if d.added_by == DEFAULTS), key=_at(where[DEFAULTS]))]
    order += [d.name for d in found if d.added_by == GATES]
    for d in (d for d in found if d.added_by == DRA):
        at = order.index("DefaultPreemption") if "DefaultPreemption" in order else len(order)
        order.insert(at, d.name)
    return order, missing


def _at(hashes: list[str]) -> Callable[[Default], int]:
    return lambda d: hashes.index(line_hash(d.source_line()))


def run(
    *, seed: int = 1, profiles: list[dict[str, object]] | None = None, restated: Sequence[Default] = UPSTREAM
) -> LabResult:
    """The default profile (or `profiles`, a way to make the claim false) built and read back, and
    compared with v1.36.2's as `restated`, which must be what the source's lines say (a restatement
    with a wrong weight or order makes the claim false too)."""
    registry = plugin_registry()
    config = default_config(registry, **({"profiles": profiles} if profiles else {}))
    framework = next(
        iter(build_frameworks(config, registry, Services(snapshot=Snapshot(), clock=RealClock())).values())
    )
    points = {str(p): list(framework.names(p)) for p in ExtensionPoint}
    weights = {name: framework.weights[name] for name in points[str(E.SCORE)]}
    steps = [
        Step(
            0.0,
            f"{point}: {', '.join(names) or '—'}",
            site_of(build_frameworks),
            (cite("getDefaultPlugins"),),
        )
        for point, names in points.items()
    ]
    steps.append(Step(0.0, f"score weights: {weights}", "", (cite("getValidScoreWeights"),)))
    order, missing = read_from_source(restated)
    steps.append(
        Step(
            0.0,
            f"v1.36.2's source adds them in this order: {', '.join(order)}",
            "",
            (cite(DEFAULTS), cite(GATES), cite(DRA)),
        )
    )
    check = Check(
        claim="the default profile fills every extension point with v1.36.2's plugins, in its order, with its "
        "weights, as the lines of getDefaultPlugins and its feature gates declare them",
        evidence={"points": points, "weights": weights, "notInSource": missing, "sourceOrder": order},
        passed=not missing
        and order == [d.name for d in restated]
        and points == upstream_points(restated)
        and weights == upstream_weights(restated),
    )
    return LabResult(ID, TITLE, steps, check)
