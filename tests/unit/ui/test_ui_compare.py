"""The compare page's report: a `kubesched compare --output json` report read and served, and the
one-line answer to a file that is not one."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from builders import compare_report, fetch_all
from kubesched.cli.main import main
from kubesched.ui import ComparisonError, load_comparison, mount_comparison, serve_pages


def test_a_compare_report_is_served_to_the_compare_page(tmp_path, capsys):
    report = load_comparison(compare_report(tmp_path, capsys))
    assert [c["config"] for c in report["configs"]] == ["default", "packing"]
    app = web.Application()
    serve_pages(app)
    mount_comparison(app, report)
    answers = fetch_all(app, "/ui/api/compare", "/ui/")
    assert answers["/ui/api/compare"][0] == 200 and json.loads(answers["/ui/api/compare"][2]) == report
    assert answers["/ui/"][0] == 200
    bare = web.Application()
    serve_pages(bare)
    assert fetch_all(bare, "/ui/api/compare")["/ui/api/compare"][0] == 404  # nothing compared here


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("{", "not JSON"),
        ('{"configs": []}', "not a compare report (expected `configs`, two or more)"),
        ('{"configs": [{"config": "a", "nodes": []}, {"nodes": []}]}', "configs[1]: expected an object with a"),
        ('{"configs": [{"config": "a", "nodes": [{}]}, {"config": "b", "nodes": []}]}', "configs[0].nodes: expected"),
    ],
)
def test_a_file_that_is_not_a_compare_report_says_what_is_wrong(tmp_path, content, error):
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(ComparisonError) as raised:
        load_comparison(path)
    assert str(raised.value).startswith(f"{path}: {error}")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ui"], "kubesched ui: give a recorded trace, --compare REPORT, --sweep DIR, or several"),
        (["ui", "--compare", "/nonexistent.json"], "/nonexistent.json: No such file or directory"),
        (["ui", "--compare", "{report}", "--bind", "nowhere"], "--bind: expected HOST:PORT, got 'nowhere'"),
        (["drill", "c3", "--ui"], "--ui: drill c3 keeps no trace to replay (c1 and c2 do)"),
        (["drill", "c2", "--ui", "--ui-bind", "x"], "--ui-bind: expected HOST:PORT, got 'x'"),
    ],
)
def test_ui_commands_given_what_they_cannot_serve_say_so_in_one_line(tmp_path, capsys, argv, message):
    report = compare_report(tmp_path, capsys)
    assert main([a.replace("{report}", str(report)) for a in argv]) == 2
    assert capsys.readouterr().err.strip() == message
