"""The sweep page over a results directory: every point listed with its metrics, and a point
opened — run again, traced — replayed by the cluster page as that point placed its pods; the
points and files that cannot be opened, and `kubesched ui --sweep` given what is not a results
directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from builders import FIT_STRATEGY, call_all, fetch_all, sweep_document, sweep_file, swept
from kubesched.cli.main import main
from kubesched.trace import Record
from kubesched.ui import Recording, mount_replay, mount_sweep
from kubesched.whatif.sweep.results import POINTS


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return swept(tmp_path_factory.mktemp("sweep"), sweep_document())


def served_sweep(directory: Path) -> web.Application:
    app = web.Application()
    mount_sweep(app, directory)
    return app


def post(path: str) -> tuple[str, str, Any, dict[str, str]]:
    return ("POST", path, None, {"Content-Type": "application/json"})


def get(path: str) -> tuple[str, str, Any, dict[str, str]]:
    return ("GET", path, None, {})


def nodes_used(cluster: dict[str, Any]) -> int:
    return len({p["node"] for p in cluster["pods"] if p["node"]})


def test_the_sweep_page_lists_every_point_with_its_metrics(results_dir):
    answers = fetch_all(served_sweep(results_dir), "/ui/api/sweep", "/ui/api/cluster", "/ui/api/replay", "/ui/")
    status, _, body = answers["/ui/api/sweep"]
    sweep = json.loads(body)
    assert status == 200 and sweep["name"] == "tiny" and sweep["points"] == 2 and sweep["opened"] is None
    assert [a["name"] for a in sweep["axes"]] == ["strategy"]
    assert {"placed", "nodesUsed", "waitP99", "cpuUtilisation", "zoneSkew"} <= {m["name"] for m in sweep["metrics"]}
    rows = sweep["rows"]
    assert [(r["index"], r["point"], r["status"], r["error"]) for r in rows] == [
        (0, {"strategy": "LeastAllocated"}, "ok", ""),
        (1, {"strategy": "MostAllocated"}, "ok", ""),
    ]
    assert [r["metrics"]["placed"] for r in rows] == [4, 4]
    assert rows[1]["metrics"]["nodesUsed"] < rows[0]["metrics"]["nodesUsed"]  # MostAllocated packs
    for nothing_yet in ("/ui/api/cluster", "/ui/api/replay"):
        status, _, body = answers[nothing_yet]
        assert status == 404 and json.loads(body)["message"].startswith("nothing is replayed yet")
    assert answers["/ui/"][0] == 200


def test_an_opened_point_is_replayed_as_it_placed_its_pods(results_dir):
    app = served_sweep(results_dir)
    answers = call_all(
        app,
        get("/ui/api/sweep"),
        post("/ui/api/sweep/points/1/open"),
        get("/ui/api/cluster"),
        get("/ui/api/replay"),
        post("/ui/api/sweep/points/0/open"),
        get("/ui/api/cluster"),
        get("/ui/api/sweep"),
    )
    assert [status for status, _, _ in answers] == [200] * 7
    table, opened, most, replay, _, least, after = (json.loads(text) for _, text, _ in answers)
    metrics = {r["index"]: r["metrics"] for r in table["rows"]}
    assert opened["index"] == 1 and opened["records"] > 0 and opened["reproduced"] is True
    assert opened["end"] == replay["end"] and replay["name"] == "tiny: point 1 (strategy=MostAllocated)"
    assert sorted(p["name"] for p in most["pods"]) == ["web-0", "web-1", "web-2", "web-3"]
    assert not most["unscheduled"] and len(most["nodes"]) == 3
    assert nodes_used(most) == metrics[1]["nodesUsed"] == 1
    assert nodes_used(least) == metrics[0]["nodesUsed"] == 3  # the replay follows the point last opened
    assert after["opened"] == 0


def refuse_point_0(directory: Path) -> None:
    """Point 0 written down as failed."""
    lines = [json.loads(line) for line in (directory / POINTS).read_text().splitlines()]
    for line in lines:
        if line["index"] == 0:
            line.update(status="failed", error="plugin X raised", metrics={})
    (directory / POINTS).write_text("".join(json.dumps(line) + "\n" for line in lines))


def point_to(directory: Path, sweep_file: Path) -> None:
    """The results' sweep file changed to `sweep_file`."""
    meta = json.loads((directory / "sweep.json").read_text())
    meta["file"] = str(sweep_file)
    (directory / "sweep.json").write_text(json.dumps(meta))


def reversed_axis(directory: Path) -> None:
    """The sweep file edited since: its axis's values the other way round."""
    axes = {"strategy": {"path": FIT_STRATEGY, "values": ["MostAllocated", "LeastAllocated"]}}
    point_to(directory, sweep_file(directory.parent, sweep_document(axes=axes), "edited.yaml"))


@pytest.mark.parametrize(
    ("change", "index", "status", "message"),
    [
        (None, "99", 404, "point 99 is not among the sweep's 2 finished points"),
        (None, "one", 404, "point 'one' is not in the sweep (points are numbered from 0)"),
        (refuse_point_0, "0", 409, "point 0 failed, there is no run to replay: plugin X raised"),
        (lambda d: point_to(d, d.parent / "gone.yaml"), "1", 409, "the sweep file no longer loads: "),
        (reversed_axis, "1", 409, 'has changed: point 1 is {"strategy": "LeastAllocated"} now'),
    ],
)
def test_a_point_that_cannot_be_opened_says_why(results_dir, tmp_path, change, index, status, message):
    directory = tmp_path / "out"
    shutil.copytree(results_dir, directory)
    if change is not None:
        change(directory)
    (answer, cluster) = call_all(
        served_sweep(directory), post(f"/ui/api/sweep/points/{index}/open"), get("/ui/api/cluster")
    )
    assert answer[0] == status and message in json.loads(answer[1])["message"]
    assert cluster[0] == 404  # nothing replayed


def test_a_point_is_not_opened_by_another_sites_page(results_dir):
    form, bare, sweep = call_all(
        served_sweep(results_dir),
        ("POST", "/ui/api/sweep/points/1/open", b"", {"Content-Type": "application/x-www-form-urlencoded"}),
        ("POST", "/ui/api/sweep/points/1/open", None, {}),
        get("/ui/api/sweep"),
    )
    assert form[0] == bare[0] == 415 and "expected Content-Type application/json" in json.loads(form[1])["message"]
    assert json.loads(sweep[1])["opened"] is None


def test_a_recording_is_replayed_beside_a_sweep_until_a_point_is_opened(results_dir):
    app = web.Application()
    mount_replay(app, Recording([Record(time=5.0, kind="store.pod.added", site="s", pod="default/p")], name="trace"))
    mount_sweep(app, results_dir)
    replay, opened, again = call_all(
        app, get("/ui/api/replay"), post("/ui/api/sweep/points/1/open"), get("/ui/api/replay")
    )
    assert json.loads(replay[1])["name"] == "trace" and opened[0] == 200
    assert json.loads(again[1])["name"].startswith("tiny: point 1")


def test_the_page_has_a_sweep_route(results_dir):
    answers = fetch_all(served_sweep(results_dir), "/ui/", "/ui/static/app.js")
    assert '<a href="#/sweep" data-page="sweep">' in answers["/ui/"][2]
    script = answers["/ui/static/app.js"][2]
    assert 'name === "sweep" ? showSweep()' in script and "/ui/api/sweep/points/${row.index}/open" in script


def test_ui_given_what_is_not_a_sweeps_results_says_so_in_one_line(capsys):
    assert main(["ui", "--sweep", "/nonexistent"]) == 2
    assert capsys.readouterr().err.strip() == "/nonexistent: not a sweep's results directory (no sweep.json)"
