"""5.6.5 — the capstone as a lab: `kubesched capstone`'s measurement and story (the out-of-tree
package's second scheduler against the default one on the package's workload, then a preemption
told), ended by a check of what the capstone claims."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kubesched.lab.capstone import Capstone, Moment, build, default_inputs, unresolved
from kubesched.lab.result import Check, LabResult
from kubesched.scheduler.discovery import plugin_registry
from kubesched.trace import cite, extension_point
from kubesched.trace.narrate import Step
from kubesched.workloads.compare import Report

ID, TITLE = "5.6.5", "The capstone: a measurement and a story"
# The moments the story names, in the order they must happen to the preemptor.
MOMENTS = (
    "entered unschedulablePods",
    "was nominated",
    "was moved to activeQ by a QueueingHint",
    "was bound",
)


def _whole(groups: dict[str, dict[str, object]]) -> int:
    return sum(1 for g in groups.values() if g.get("state") == "placed")


def run(
    *,
    seed: int = 1,
    config: str | Path | None = None,
    retell: Callable[[list[Moment]], list[Moment]] = list,
) -> LabResult:
    """The package's configuration measured (UsageError when the package is not installed), or
    `config`'s: the default profile's makes the claim false (no out-of-tree plugin, the same
    placement). `retell` rewrites the story's moments before they are checked: told out of
    order, or with one left out, the claim is false."""
    workload, package_config = default_inputs()
    cap = build(workload_path=workload, config_path=config or package_config, registry=plugin_registry(), seed=seed)
    base, measured = cap.reports[0], cap.reports[-1]
    changed = _changed(base, measured)
    steps = _steps(cap)
    missing = unresolved(cap.citations)
    moments = retell(cap.moments)
    shown = [m.what for m in moments]
    times = [m.time for m in moments]
    nominated = (cap.story.preemption or {}).get("nominatedNode")
    bound_on = next((m.text for m in moments if m.what == "was bound"), "")
    whole = {"default": _whole(base.groups), "measured": _whole(measured.groups)}
    check = Check(
        claim="the measured profile holds out-of-tree plugins and places the workload otherwise than the default, "
        "more pod groups whole; the story shows the preemptor enter unschedulablePods, be nominated, be moved by "
        "a QueueingHint and be bound, in that order, on the node it was nominated to; every citation resolves to "
        "a site of the table",
        evidence={
            "outOfTree": [p.name for p in cap.plugins],
            "placementsChanged": changed,
            "groupsPlacedWhole": whole,
            "moments": shown,
            "momentTimes": times,
            "nominatedNode": nominated,
            "bound": bound_on,
            "unresolvedCitations": [c.site for c in missing],
        },
        passed=bool(cap.plugins)
        and changed > 0
        and whole["measured"] > whole["default"]
        and tuple(shown) == MOMENTS
        and times == sorted(times)
        and bool(nominated)
        and bound_on.endswith(f" {nominated}")
        and not missing,
    )
    return LabResult(ID, TITLE, steps, check)


def _changed(base: Report, measured: Report) -> int:
    """The pods bound in one run and not the other, and the pod groups whose state differs."""
    return len(base.bound ^ measured.bound) + sum(
        1
        for g in set(base.groups) | set(measured.groups)
        if base.groups.get(g, {}).get("state") != measured.groups.get(g, {}).get("state")
    )


def _steps(cap: Capstone) -> list[Step]:
    """The out-of-tree plugins, the measurement's findings, and the story's moments."""
    return [
        *(
            Step(
                0.0,
                f"out-of-tree {p.name} ({p.source}) at {', '.join(p.points)}",
                upstream=tuple(extension_point(x) for x in p.points),
            )
            for p in cap.plugins
        ),
        *(Step(0.0, finding, upstream=(cite("schedulePod"),)) for finding in cap.findings),
        *(Step(m.time, f"{m.what}: {m.text}", upstream=m.upstream) for m in cap.moments),
    ]
