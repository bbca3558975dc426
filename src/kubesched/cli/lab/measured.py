"""5.6.5 — the capstone as a lab: `kubesched capstone`'s measurement and story (the out-of-tree
package's second scheduler against the default one on the package's workload, then a preemption
told), ended by a check of what the capstone claims."""

from __future__ import annotations

from pathlib import Path

from kubesched.cli.capstone import build, default_inputs, unresolved
from kubesched.cli.lab.result import Check, LabResult
from kubesched.scheduler.discovery import plugin_registry
from kubesched.trace import cite, extension_point
from kubesched.trace.narrate import Step

ID, TITLE = "5.6.5", "The capstone: a measurement and a story"


def run(*, seed: int = 1, config: str | Path | None = None) -> LabResult:
    """The package's configuration measured (UsageError when the package is not installed), or
    `config`'s: the default profile's makes the claim false (no out-of-tree plugin, the same
    placement)."""
    workload, package_config = default_inputs()
    cap = build(workload_path=workload, config_path=config or package_config, registry=plugin_registry(), seed=seed)
    base, measured = cap.reports[0], cap.reports[-1]
    changed = len(base.bound ^ measured.bound) + sum(
        1
        for g in set(base.groups) | set(measured.groups)
        if base.groups.get(g, {}).get("state") != measured.groups.get(g, {}).get("state")
    )
    steps = [
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
    missing = unresolved(cap.citations)
    check = Check(
        claim="the measured profile holds out-of-tree plugins and places the workload otherwise than the default; "
        "the story shows every moment it names, and every citation resolves to a site of the table",
        evidence={
            "outOfTree": [p.name for p in cap.plugins],
            "placementsChanged": changed,
            "moments": len(cap.moments),
            "unresolvedCitations": [c.site for c in missing],
        },
        passed=bool(cap.plugins) and changed > 0 and bool(cap.moments) and not missing,
    )
    return LabResult(ID, TITLE, steps, check)
