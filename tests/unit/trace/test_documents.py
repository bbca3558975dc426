"""The design documents' table checked against kubernetes/enhancements and the design proposals:
every row holds against the shipped digests, a title, section or path that is not the document's
is caught, and no KEP is named anywhere in kubesched that the table lacks."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from kubesched.cli.main import main
from kubesched.trace.documents import (
    DOCUMENTS,
    REPOSITORIES,
    anchor,
    check,
    load_digests,
    record,
    render_markdown,
    unknown_keps,
)

ROOT = Path(__file__).resolve().parents[3]
ROWS = list(DOCUMENTS.values())
FRAMEWORK = DOCUMENTS["KEP-624 § Extension points"]


def test_every_row_holds_against_the_shipped_digests(capsys):
    assert len(ROWS) >= 25 and {"KEP-624", "KEP-4247", "KEP-4832", "KEP-895"} <= {d.id for d in ROWS}
    assert check(ROWS, load_digests()) == []
    assert main(["citations"]) == 0
    assert f"{len(ROWS)} of {len(ROWS)} design document references hold" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ({"title": "Scheduler Framework"}, "'Scheduler Framework' is not the document's title"),
        ({"section": "Extension Points"}, "'Extension Points' is not a heading of the document"),
        (
            {"path": "keps/sig-scheduling/624-framework/README.md"},
            "the document is keps/sig-scheduling/624-scheduling-framework/README.md",
        ),
        ({"id": "KEP-625"}, "the digests hold no such document"),
    ],
)
def test_a_row_that_is_not_its_document_fails(change, what):
    problems = check([dataclasses.replace(FRAMEWORK, **change)], load_digests())
    assert len(problems) == 1 and what in problems[0].what


def test_digests_of_another_commit_fail():
    digests = {**load_digests(), "commits": {**load_digests()["commits"], "enhancements": "0" * 40}}
    assert any("not of enhancements at" in p.what for p in check(ROWS, digests))


def _kep(root: Path, title: str, body: list[str]) -> Path:
    where = root / "keps" / "sig-scheduling" / "624-scheduling-framework"
    where.mkdir(parents=True, exist_ok=True)
    (where / "kep.yaml").write_text(f"title: {title}\nkep-number: 624\n")
    (where / "README.md").write_text("\n".join(body) + "\n")
    return root


def test_digests_read_from_a_checkout_hold_and_a_changed_checkout_refutes_them(tmp_path):
    root = _kep(tmp_path, "Scheduling Framework", ["# KEP-624", "", "### Extension points", "text"])
    digests, problems = record([FRAMEWORK], {"enhancements": root})
    assert problems == [] and check([FRAMEWORK], digests) == []
    assert digests["documents"]["KEP-624"]["sections"] == {
        "3": load_digests()["documents"]["KEP-624"]["sections"]["149"]
    }
    _kep(tmp_path, "Scheduling Framework v2", ["# KEP-624", "### Extension point list"])
    refuted = [p.what for p in record([FRAMEWORK], {"enhancements": root})[1]]
    assert refuted == [
        "the document's title is 'Scheduling Framework v2'",
        "'Extension points' is not a heading of the document",
    ]
    assert [p.what for p in record([FRAMEWORK], {})[1]] == [f"{FRAMEWORK.path} is not in None"]


@pytest.mark.skipif(
    not (os.environ.get("KUBESCHED_ENHANCEMENTS") and os.environ.get("KUBESCHED_DESIGN_PROPOSALS")),
    reason="KUBESCHED_ENHANCEMENTS and KUBESCHED_DESIGN_PROPOSALS name no checkouts of the two repositories",
)
def test_every_row_holds_against_the_real_documents():
    roots = {"enhancements": Path(os.environ["KUBESCHED_ENHANCEMENTS"])}
    roots["design-proposals"] = Path(os.environ["KUBESCHED_DESIGN_PROPOSALS"])
    digests, problems = record(ROWS, roots)
    assert problems == [] and digests == load_digests()


@pytest.mark.parametrize(
    ("heading", "fragment"),
    [
        ("Scheduling Cycle & Binding Cycle", "scheduling-cycle--binding-cycle"),
        ("When to skip/not skip backoff", "when-to-skipnot-skip-backoff"),
        ("Custom Scheduler Plugins (out of tree)", "custom-scheduler-plugins-out-of-tree"),
    ],
)
def test_a_sections_link_is_githubs_anchor_for_its_heading(heading, fragment):
    assert anchor(heading) == fragment


def test_a_link_points_at_the_commit_the_row_was_checked_at():
    repo, commit = REPOSITORIES["enhancements"]
    assert FRAMEWORK.url == (
        f"https://github.com/{repo}/blob/{commit}/keps/sig-scheduling/624-scheduling-framework/README.md#extension-points"
    )


def _written() -> list[Path]:
    return [*(ROOT / "src" / "kubesched").rglob("*.py"), *sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]


def test_no_kep_is_named_outside_the_table(tmp_path):
    assert unknown_keps(_written()) == []
    note = tmp_path / "note.md"
    note.write_text("KEP-624 and KEP-9999 say so")
    assert unknown_keps([note]) == [(note, "KEP-9999")]


def test_the_upstream_map_shows_the_documents_as_rendered():
    assert render_markdown() in (ROOT / "docs" / "upstream-map.md").read_text()


def test_a_checkout_option_naming_no_directory_is_a_one_line_error(capsys, tmp_path):
    assert main(["citations", "--enhancements", str(tmp_path / "absent")]) == 2
    assert capsys.readouterr().err.strip() == f"--enhancements: {tmp_path / 'absent'} is not a directory"
    assert main(["citations", "--enhancements", str(tmp_path), "--write-documents", "x.json"]) == 2
    assert "needs --enhancements DIR and --design-proposals DIR" in capsys.readouterr().err
