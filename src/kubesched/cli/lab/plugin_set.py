"""5.1.4 — The default plugin set, mapped onto the points it fills. The default profile built as
`kubesched run` builds it, each extension point's plugins in the order they run and each score
plugin's weight, against v1.36.2's defaults (apis/config/v1/default_plugins.go) restated here."""

from __future__ import annotations

from typing import Any

from kubesched.cache import Snapshot
from kubesched.cli.lab.result import Check, LabResult, site_of
from kubesched.clock import RealClock
from kubesched.config import default_config
from kubesched.framework.handle import Services
from kubesched.framework.interface import ExtensionPoint
from kubesched.scheduler.discovery import plugin_registry
from kubesched.scheduler.profiles import build_frameworks
from kubesched.trace import cite
from kubesched.trace.narrate import Step

ID, TITLE = "5.1.4", "The default plugin set, mapped onto the points it fills"
E = ExtensionPoint
# v1.36.2's default profile, in its multiPoint order: each plugin's points and its score weight.
UPSTREAM: tuple[tuple[str, tuple[ExtensionPoint, ...], int | None], ...] = (
    ("SchedulingGates", (E.PRE_ENQUEUE,), None),
    ("PrioritySort", (E.QUEUE_SORT,), None),
    ("NodeUnschedulable", (E.FILTER,), None),
    ("NodeName", (E.FILTER,), None),
    ("TaintToleration", (E.FILTER, E.PRE_SCORE, E.SCORE), 3),
    ("NodeAffinity", (E.PRE_FILTER, E.FILTER, E.PRE_SCORE, E.SCORE), 2),
    ("NodePorts", (E.PRE_FILTER, E.FILTER), None),
    ("NodeResourcesFit", (E.PRE_FILTER, E.FILTER, E.PRE_SCORE, E.SCORE), 1),
    ("VolumeRestrictions", (E.PRE_FILTER, E.FILTER), None),
    ("NodeVolumeLimits", (E.PRE_FILTER, E.FILTER), None),
    ("VolumeBinding", (E.PRE_FILTER, E.FILTER, E.RESERVE, E.PRE_BIND, E.PRE_SCORE, E.SCORE), 1),
    ("VolumeZone", (E.PRE_FILTER, E.FILTER), None),
    ("PodTopologySpread", (E.PRE_FILTER, E.FILTER, E.PRE_SCORE, E.SCORE), 2),
    ("InterPodAffinity", (E.PRE_FILTER, E.FILTER, E.PRE_SCORE, E.SCORE), 2),
    (
        "DynamicResources",
        (E.PRE_ENQUEUE, E.PRE_FILTER, E.FILTER, E.POST_FILTER, E.RESERVE, E.PRE_BIND, E.SCORE),
        2,
    ),
    ("DefaultPreemption", (E.PRE_ENQUEUE, E.POST_FILTER), None),
    ("NodeResourcesBalancedAllocation", (E.PRE_SCORE, E.SCORE), 1),
    ("ImageLocality", (E.SCORE,), 1),
    ("DefaultBinder", (E.BIND,), None),
    ("NodeDeclaredFeatures", (E.PRE_FILTER, E.FILTER), None),
)


def upstream_points() -> dict[str, list[str]]:
    return {str(p): [name for name, points, _ in UPSTREAM if p in points] for p in ExtensionPoint}


def upstream_weights() -> dict[str, int]:
    return {name: weight for name, points, weight in UPSTREAM if E.SCORE in points and weight is not None}


def run(*, seed: int = 1, profiles: list[dict[str, Any]] | None = None) -> LabResult:
    """The default profile (or `profiles`, a way to make the claim false) built and read back."""
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
    check = Check(
        claim="the default profile fills every extension point with v1.36.2's plugins, in its order, with its weights",
        evidence={"points": points, "weights": weights},
        passed=points == upstream_points() and weights == upstream_weights(),
    )
    return LabResult(ID, TITLE, steps, check)
