"""The citation table checked against kube-scheduler v1.36.2: every row holds against the shipped
digests of the source, each way a row can go wrong is caught, and no upstream `file:line` is
written anywhere in kubesched outside the table."""

from __future__ import annotations

import copy
import dataclasses
import os
from pathlib import Path

import pytest

from kubesched.cli.main import main
from kubesched.trace.digests import (
    check,
    check_source,
    citations_in,
    line_hash,
    load_digests,
    record,
    render_markdown,
    uncited,
)
from kubesched.trace.upstream import SITES, TAG, UpstreamSite

ROOT = Path(__file__).resolve().parents[3]
ROWS = list(SITES.values())


def _shifted(site: UpstreamSite, by: int) -> UpstreamSite:
    first, last = site.span
    lines = f"{first + by}-{last + by}" if last != first else str(first + by)
    return dataclasses.replace(site, lines=lines)


def test_every_row_holds_against_the_v1_36_2_digests(capsys):
    assert len(ROWS) >= 75
    assert check(ROWS, load_digests()) == []
    assert main(["citations"]) == 0
    out = capsys.readouterr().out
    assert f"{len(ROWS)} of {len(ROWS)} upstream citations hold at kube-scheduler {TAG}" in out


@pytest.mark.parametrize("symbol", ["bindingCycle", "Done before PreBind", "FitError.Error", "MaxScore"])
@pytest.mark.parametrize("by", [-1, 1])
def test_a_shifted_span_fails(symbol, by):
    problems = check([_shifted(SITES[symbol], by)], load_digests())
    assert [p.symbol for p in problems] == [symbol]
    assert "the span moved" in problems[0].what


def test_a_line_removed_from_a_cited_span_fails():
    digests = copy.deepcopy(load_digests())
    site = SITES["handleBindingCycleError"]
    del digests["files"][site.file]["spans"][site.lines][3]
    problems = check([site], digests)
    assert [p.symbol for p in problems] == ["handleBindingCycleError"]
    assert "holds 31 lines for a span of 32" in problems[0].what


def test_an_excerpt_that_is_not_on_its_line_fails():
    site = dataclasses.replace(SITES["sortedNodeScores"], expect="selectHost(")  # v1.36.2 has no selectHost
    problems = check([site], load_digests())
    assert len(problems) == 1 and "'selectHost(' is not on line" in problems[0].what


def test_an_anchor_whose_line_is_not_the_spans_fails():
    digests = copy.deepcopy(load_digests())
    anchor = digests["anchors"]["bindingCycle"]
    anchor["text"] += " // edited"
    problems = check([SITES["bindingCycle"]], digests)
    assert len(problems) == 1 and f"line {anchor['line']} of the span is not" in problems[0].what


def test_digests_of_another_version_fail():
    digests = {**load_digests(), "tag": "v1.35.0"}
    assert any("digests are of v1.35.0" in p.what for p in check(ROWS, digests))


def _tree(tmp_path: Path, body: list[str]) -> Path:
    path = tmp_path / "pkg" / "scheduler" / "schedule_one.go"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(body) + "\n")
    return tmp_path


def test_digests_read_from_a_tree_hold_and_a_changed_tree_refutes_them(tmp_path):
    body = ["package scheduler", "", "func (sched *Scheduler) bindingCycle(", "\treturn nil", "}"]
    site = UpstreamSite("bindingCycle", "S/schedule_one.go", "3-5", "func (sched *Scheduler) bindingCycle(")
    digests, problems = record([site], _tree(tmp_path, body))
    assert problems == [] and check([site], digests) == []
    assert digests["files"]["S/schedule_one.go"]["spans"]["3-5"][0] == line_hash(body[2])
    assert check_source([site], digests, tmp_path) == []
    _tree(tmp_path, ["// a line added above", *body])  # upstream moved on: the function is a line lower
    refuted = [p.what for p in check_source([site], digests, tmp_path)]
    assert "the tree's pkg/scheduler/schedule_one.go is not the one the digests were read from" in refuted
    assert "these lines differ from those the digests were read from" in refuted
    _tree(tmp_path, ["//", "//", "//", *body])  # three lines lower: the excerpt has left the span
    assert any("is on no line of the span" in p.what for p in check_source([site], digests, tmp_path))


def test_a_row_naming_a_file_the_tree_lacks_is_refuted(tmp_path):
    site = UpstreamSite("Pop", "S/backend/queue/unschedulable_entities.go", "1-2", "func")
    _, problems = record([site], _tree(tmp_path, ["package scheduler"]))
    assert [p.what for p in problems] == [f"pkg/scheduler/backend/queue/unschedulable_entities.go is not in {tmp_path}"]


@pytest.mark.skipif(
    not os.environ.get("KUBESCHED_UPSTREAM_SOURCE"),
    reason="KUBESCHED_UPSTREAM_SOURCE names no v1.36.2 tree (a kubernetes checkout or a vendor/ directory)",
)
def test_every_row_and_digest_holds_against_the_real_source():
    assert check_source(ROWS, load_digests(), Path(os.environ["KUBESCHED_UPSTREAM_SOURCE"])) == []


def _written() -> list[Path]:
    table = ROOT / "src" / "kubesched" / "trace" / "upstream.py"
    sources = [p for p in (ROOT / "src" / "kubesched").rglob("*.py") if p != table]
    return sources + sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def test_no_upstream_file_line_is_written_outside_the_table():
    assert uncited(_written()) == []


def test_the_scan_finds_a_citation_the_table_lacks(tmp_path):
    doc = tmp_path / "note.md"
    doc.write_text("as `S/schedule_one.go:1056` shows, and fit.go:755 too; `S/schedule_one.go:147` is a row")
    assert citations_in(doc.read_text()) == ["S/schedule_one.go:1056", "fit.go:755", "S/schedule_one.go:147"]
    assert uncited([doc]) == [(doc, "S/schedule_one.go:1056"), (doc, "fit.go:755")]


def test_the_upstream_map_shows_the_table_as_rendered():
    assert render_markdown() in (ROOT / "docs" / "upstream-map.md").read_text()


def test_a_missing_source_directory_is_a_one_line_error(capsys, tmp_path):
    assert main(["citations", "--source", str(tmp_path / "absent")]) == 2
    assert capsys.readouterr().err.strip() == f"--source: {tmp_path / 'absent'} is not a directory"
