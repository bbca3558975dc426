"""5.2.3 — Build artifact 1: a scheduler with no framework in it. `kubesched.minimal` watches pods
and nodes, picks the fitting node with the most free CPU and POSTs a Binding; it imports nothing of
the framework, the queue, the cache or the plugins, and it is under about two hundred lines."""

from __future__ import annotations

import ast
import importlib
import inspect

from kubesched.lab.result import Check, LabResult
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.workloads.burst import run_minimal

ID, TITLE = "5.2.3", "Build artifact 1: a scheduler with no framework in it"
MODULE = "kubesched.minimal.scheduler"
LIMIT = 200  # lines, as the curriculum sizes it
FRAMEWORK = (
    "kubesched.framework",
    "kubesched.scheduler",
    "kubesched.plugins",
    "kubesched.queue",
    "kubesched.cache",
    "kubesched.plugin",
)


def imports_of(source: str) -> list[str]:
    """Every module `source` imports, by its full name."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
    return out


def run(*, seed: int = 1, module: str = MODULE) -> LabResult:
    """Measure `module` (the from-scratch scheduler; `kubesched.scheduler.scheduler`, the framework
    scheduler, makes the claim false) and let the from-scratch scheduler place six pods on three
    nodes, one every second."""
    source = inspect.getsource(importlib.import_module(module))
    lines = len(source.splitlines())
    imported = sorted(set(imports_of(source)))
    framework = [m for m in imported if m.startswith(FRAMEWORK)]
    result = run_minimal(nodes=3, pods=6, seed=seed, interval=1.0)
    bindings = [r for r in result.trace if r.kind == "minimal.picked"]
    steps = [
        Step(
            0.0,
            f"{module}: {lines} lines; imports {', '.join(m for m in imported if m.startswith('kubesched'))}; "
            "it stands in for ScheduleOne and all it calls",
            module,
            (cite("ScheduleOne"),),
        ),
        *(
            Step(
                round(r.time - bindings[0].time, 3),
                f"picked {r.node} for {r.pod}, then POSTed the Binding",
                r.site,
                (cite("bind"),),
                r.pod or "",
                r.kind,
            )
            for r in bindings
        ),
    ]
    running = [p.pod for p in result.placements if p.phase == "Running"]
    check = Check(
        claim=f"the from-scratch scheduler is under {LIMIT} lines, imports nothing of the framework, "
        "and binds pods that run",
        evidence={
            "lines": lines,
            "frameworkImports": framework,
            "running": len(running),
            "pods": len(result.placements),
        },
        passed=lines < LIMIT and not framework and len(running) == len(result.placements),
    )
    return LabResult(ID, TITLE, steps, check)
