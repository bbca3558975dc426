"""5.4.1 — the archaeology case: the path that no longer exists. Articles and older books cite the
queue at `pkg/scheduler/internal/queue/`, as v1.31 and earlier had it; it now lives under
`pkg/scheduler/backend/queue/`. Every queue citation kubesched prints (the trace's, from the site
table) resolves under the current path, none under the stale one, and names a file that directory
holds at v1.36.2 (its file list read from upstream's source, in the shipped digests)."""

from __future__ import annotations

from collections.abc import Callable

from kubesched.lab import queue_moves
from kubesched.lab.result import Check, LabResult
from kubesched.trace.digests import upstream_files
from kubesched.trace.narrate import Step
from kubesched.trace.upstream import SITES, STALE, full_path, symbol_of

ID, TITLE = "5.4.1", "The archaeology case: the path that no longer exists"
CURRENT = "pkg/scheduler/backend/queue/"
QUEUE_TREE = "S/backend/queue/"


def as_articles_cite(citation: str) -> str:
    """A citation moved to the layout of v1.31 and earlier (the queue under internal/)."""
    return citation.replace("S/backend/queue/", "S/internal/queue/")


def renamed_file(citation: str) -> str:
    """A citation naming a queue file v1.36.2 does not have (`unschedulable_entities.go`)."""
    return citation.replace("unschedulable_pods.go", "unschedulable_entities.go")


def run(*, seed: int = 1, layout: Callable[[str], str] = lambda c: c) -> LabResult:
    """The queue labs' traces (5.4.3 and 5.4.6), every queue citation in them checked. `layout`
    rewrites each citation first: `as_articles_cite` gives the stale layout and makes the claim
    false."""
    traced = [queue_moves.run_path(seed=seed), queue_moves.run_retries(seed=seed)]
    citations = sorted(
        {layout(c) for result in traced for s in result.steps if s.kind.startswith("queue.") for c in s.upstream}
    )
    known = {s.cite for s in SITES.values()}
    queue_files = [c for c in citations if "/queue/" in c]
    stale = [c for c in citations if any(x in full_path(c) for x in STALE)]
    unresolved = [c for c in citations if c not in known]
    files = upstream_files(QUEUE_TREE)
    absent = [c for c in queue_files if c.startswith(QUEUE_TREE) and c[len(QUEUE_TREE) :].split(":")[0] not in files]
    steps = [Step(0.0, f"{symbol_of(c) if c in known else '?'}: {full_path(c)}", upstream=(c,)) for c in citations]
    check = Check(
        claim=f"every queue citation kubesched prints resolves to a site of the table and lies under {CURRENT}, "
        "in a file that directory holds at v1.36.2; none under internal/",
        evidence={
            "citations": citations,
            "stale": stale,
            "unresolved": unresolved,
            "upstream files": files,
            "not upstream's": absent,
        },
        passed=bool(queue_files)
        and not stale
        and not unresolved
        and not absent
        and all(full_path(c).startswith(CURRENT) for c in queue_files),
    )
    return LabResult(ID, TITLE, steps, check)
