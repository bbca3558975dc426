"""`kubesched compare` on the package's workloads: the difference each plugin makes, reproducibly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kubesched_scheduler_plugins
from kubesched.cli.main import main

ROOT = Path(kubesched_scheduler_plugins.__file__).parent
CONFIG = str(ROOT / "manifests" / "scheduler-config.yaml")


def run(capsys, workload: str, *extra: str) -> dict:
    argv = ["compare", str(ROOT / "workloads" / f"{workload}.yaml"), "--config", "default", "--config", CONFIG]
    assert main([*argv, "--output", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_gang_contention_places_whole_groups_or_none(capsys, tmp_path):
    plot = tmp_path / "gang.svg"
    first = run(capsys, "gang-contention", "--plot", str(plot))
    default, plugins = first["configs"]
    assert default["groupCounts"] == {"placed": 0, "partly placed": 5, "not placed": 0}
    assert plugins["groupCounts"]["partly placed"] == 0 and plugins["groupCounts"]["placed"] >= 1
    assert plot.read_text().startswith("<svg") and "scheduler-config" in plot.read_text()
    assert run(capsys, "gang-contention") == first  # the same seed, the same report, byte for byte


def test_heterogeneous_nodes_least_allocatable_prefers_the_small_nodes(capsys):
    default, plugins = run(capsys, "heterogeneous-nodes")["configs"]

    def pods(report: dict, prefix: str) -> int:
        return sum(len(n["pods"]) for n in report["nodes"] if n["name"].startswith(prefix))

    assert pods(default, "large-") > pods(default, "small-")
    assert pods(plugins, "large-") == 0 and pods(plugins, "small-") == 4  # small nodes full first


def test_quota_borrowing_gives_quota2_its_min_back(capsys):
    default, plugins = run(capsys, "quota-borrowing")["configs"]
    assert default["quotas"]["quota1"]["cpuUsed"] == 8000 and default["quotas"]["quota2"]["cpuUsed"] == 0
    assert plugins["quotas"]["quota1"]["cpuUsed"] == 4000 and plugins["quotas"]["quota2"]["cpuUsed"] == 4000


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--config", "default"], "--config: give at least two configurations"),
        (["--config", "default", "--config", "nowhere.yaml"], "nowhere.yaml"),
    ],
)
def test_bad_input_is_a_one_line_error(capsys, argv, message):
    assert main(["compare", str(ROOT / "workloads" / "gang-contention.yaml"), *argv]) == 2
    out = capsys.readouterr().err
    assert message in out and "Traceback" not in out


def test_a_workload_with_a_kind_not_served_names_it(capsys, tmp_path):
    workload = tmp_path / "w.yaml"
    workload.write_text(
        "name: w\nnodes: [{count: 1}]\nobjects:\n- {apiVersion: example.com/v1, kind: Widget, metadata: {name: x}}\n"
    )
    assert main(["compare", str(workload), "--config", "default", "--config", "default"]) == 2
    assert "objects[0]: kind Widget (example.com/v1) is not served (a CRD missing?)" in capsys.readouterr().err
