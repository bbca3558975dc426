"""The upstream citation table: every trace kind kubesched emits is cited or declared its own, the
queue transitions are cited by the event that caused them, and no citation names a stale path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kubesched.lab.drill.c1 import FOLLOWED as C1_FOLLOWED
from kubesched.lab.drill.c2 import NARRATED as C2_NARRATED
from kubesched.trace import SITES, Tracer, citations, cite
from kubesched.trace.upstream import OURS_ONLY, STALE, TRACE_KINDS, is_ours_only, queue_move_sites

ROOT = Path(__file__).resolve().parents[3]
EMIT = re.compile(r"""\.emit\(\s*f?["']([a-z_.]+)""")
CITE = re.compile(r"^(S|KS|CG)/[a-z0-9_/]+\.go:(\d+)(?:-(\d+))?$")


def emitted_kinds() -> set[str]:
    kinds = set()
    for path in (ROOT / "src" / "kubesched").rglob("*.py"):
        kinds.update(EMIT.findall(path.read_text()))
    return kinds


def test_every_emitted_trace_kind_is_cited_or_declared_kubescheds_own():
    kinds = emitted_kinds()
    assert {"queue.move", "cycle.failed", "preemption.chosen", "leader.lost"} <= kinds  # the scan sees multi-line calls
    uncited = sorted(k for k in kinds if k != "queue.move" and k not in TRACE_KINDS and not is_ours_only(k))
    assert uncited == []


def test_the_table_names_no_kind_that_nothing_emits():
    assert set(TRACE_KINDS) - emitted_kinds() == set()
    assert set(OURS_ONLY) - emitted_kinds() == set()


@pytest.mark.parametrize("kind", sorted(C1_FOLLOWED | C2_NARRATED))
def test_every_narrated_scheduler_step_has_an_upstream_site(kind):
    details = {"event": "ScheduleAttemptFailure", "to": "unschedulablePods"} if kind == "queue.move" else {}
    if kind.startswith("kubelet."):
        assert kind in OURS_ONLY  # the fake kubelet's steps: not kube-scheduler's
        return
    assert citations(kind, details)


def test_every_citation_is_a_go_file_with_lines_in_order_and_none_is_stale():
    for site in SITES.values():
        match = CITE.match(site.cite)
        assert match, site
        first, last = int(match[2]), int(match[3] or match[2])
        assert first <= last, site
        assert not any(stale in site.path for stale in STALE), site
        assert site.path.startswith(("pkg/scheduler/", "staging/src/k8s.io/")), site


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        ({"event": "PodAdd", "from": "", "to": "activeQ"}, ("moveToActiveQ",)),
        ({"event": "PodAdd", "from": "", "to": "gated"}, ("moveToActiveQ", "runPreEnqueuePlugins")),
        (
            {"event": "ScheduleAttemptFailure", "from": "inFlight", "to": "unschedulablePods"},
            ("AddUnschedulableIfNotPresent", "unschedulablePods"),
        ),
        (
            {"event": "ScheduleAttemptFailure", "from": "inFlight", "to": "backoffQ"},
            ("AddUnschedulableIfNotPresent", "backoff"),
        ),
        ({"event": "BackoffComplete", "from": "backoffQ", "to": "activeQ"}, ("flushBackoffQCompleted",)),
        (
            {"event": "UnschedulableTimeout", "from": "unschedulablePods", "to": "backoffQ"},
            ("flushUnschedulablePodsLeftover", "backoff"),
        ),
        ({"event": "ForceActivate", "from": "unschedulablePods", "to": "activeQ"}, ("Activate",)),
        (
            {"event": "NodeAdd", "from": "unschedulablePods", "to": "activeQ", "plugin": "NodeAffinity"},
            ("MoveAllToActiveOrBackoffQueue", "isPodWorthRequeuing"),
        ),
        (
            {"event": "UnschedulablePodUpdatePodSchedulingGatesEliminated", "from": "gated", "to": "activeQ"},
            ("Update",),
        ),
    ],
)
def test_a_queue_transition_is_cited_by_the_event_that_caused_it(details, expected):
    assert queue_move_sites(details) == expected


def test_the_tracer_stamps_both_sites_on_a_record():
    tracer = Tracer(lambda: 1.0, keep=True)
    tracer.emit(
        "queue.move", pod="default/p", **{"from": "inFlight", "to": "unschedulablePods"}, event="ScheduleAttemptFailure"
    )
    tracer.emit("kubelet.running", pod="default/p", node="n")
    moved, ran = tracer.records
    assert moved.site.startswith(f"{__name__}:")
    assert moved.upstream == (cite("AddUnschedulableIfNotPresent"), cite("unschedulablePods"))
    assert moved.upstream[0] == "S/backend/queue/scheduling_queue.go:905-965"
    assert ran.upstream == ()


def test_the_upstream_map_document_lists_every_site():
    text = (ROOT / "docs" / "upstream-map.md").read_text()
    missing = [s.cite for s in SITES.values() if s.cite not in text]
    assert missing == []
    assert not any(f"{prefix}{stale}" in text for prefix in ("S/", "pkg/scheduler/") for stale in STALE)
