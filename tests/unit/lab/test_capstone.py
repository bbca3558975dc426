"""`kubesched capstone`: the out-of-tree plugin measured against the default profile, one
preemption narrated, every citation resolved through the mapping table, the report as Markdown."""

from __future__ import annotations

import json

import pytest

from kubesched.cli.main import main
from kubesched.console import options
from kubesched.lab import capstone
from kubesched.trace import cite

REQUIRED = {
    "Coscheduling's Permit interface": "KS/framework/interface.go:678-687",
    "assume": cite("assume"),
    "the asynchronous binding goroutine": "S/schedule_one.go:147",
    "SelectVictimsOnNode": "S/framework/plugins/defaultpreemption/default_preemption.go:251-353",
    "the transition out of unschedulablePods": "S/backend/queue/scheduling_queue.go:1253-1350",
}


@pytest.fixture(scope="module")
def report():
    registry = options.registry(None)
    workload, config = capstone.default_inputs()
    return capstone.build(workload_path=workload, config_path=config, registry=registry)


def test_the_measurement_shows_the_out_of_tree_plugin_changing_placement(report):
    default, measured = report.reports
    assert (default.scheduler_name, measured.scheduler_name) == ("default-scheduler", "scheduler-plugins-scheduler")
    assert default.group_counts() == {"placed": 0, "partly placed": 5, "not placed": 0}
    assert measured.group_counts() == {"placed": 2, "partly placed": 0, "not placed": 3}
    assert {p.name for p in report.plugins} == {"Coscheduling", "CapacityScheduling", "NodeResourcesAllocatable"}
    assert all(p.source.startswith("kubesched-scheduler-plugins") for p in report.plugins)


def test_the_story_follows_the_preemptor_from_unschedulable_pods_to_its_binding(report):
    moments = {m.what: m for m in report.moments}
    assert list(moments) == [
        "entered unschedulablePods",
        "was nominated",
        "was moved to activeQ by a QueueingHint",
        "was bound",
    ]
    assert "NodeResourcesFit hint: Queue" in moments["was moved to activeQ by a QueueingHint"].text
    assert moments["was bound"].time >= moments["was moved to activeQ by a QueueingHint"].time
    assert any("default/batch-a stayed, default/batch-b did not" in s for s in report.why)


def test_every_citation_resolves_through_the_mapping_table_and_the_required_ones_are_there(report):
    sites = [c.site for c in report.citations]
    assert capstone.unresolved(report.citations) == []
    assert not any("internal/" in s for s in sites)
    missing = {what: site for what, site in REQUIRED.items() if site not in sites}
    assert missing == {}


def test_output_md_writes_the_report_and_its_picture(tmp_path, capsys):
    target = tmp_path / "capstone.md"
    assert main(["capstone", "--output", "md", str(target)]) == 0
    text = target.read_text()
    assert "![CPU requested per node, each configuration side by side](capstone.svg)" in text
    assert (tmp_path / "capstone.svg").read_text().startswith("<svg")
    for site in REQUIRED.values():
        assert f"`{site}`" in text
    assert "| PodGroups placed | 0 | 2 |" in text


def test_json_output_is_the_report(capsys):
    assert main(["capstone", "--output", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [c["groupCounts"]["placed"] for c in body["configs"]] == [0, 2]
    assert body["preemption"]["placements"]["urgent"] == "node-0"


@pytest.mark.parametrize("output", [["md"], ["pdf"], ["json", "x.json"]])
def test_a_bad_output_is_one_line(capsys, output):
    assert main(["capstone", "--output", *output]) == 2
    assert capsys.readouterr().err.strip() == "--output: table, json, or md FILE"


def test_without_an_out_of_tree_package_it_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(capstone.importlib.util, "find_spec", lambda name: None)
    assert main(["capstone"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install contrib/scheduler-plugins" in err
