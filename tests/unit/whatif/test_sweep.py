"""Sweeps: a file's axes and points, a point's simulation and metrics, failures that stay one
point's, results kept as they finish and resumed, the report's best points and Pareto front."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builders import FIT_STRATEGY, installed_package, make_node, make_pod, sweep_document, sweep_file
from kubesched.cli.main import main
from kubesched.clock import VirtualClock
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.whatif.snapshot import read as read_snapshot
from kubesched.whatif.sweep import paths
from kubesched.whatif.sweep.results import load as load_results
from kubesched.whatif.sweep.simulate import run_job
from kubesched.whatif.sweep.spec import SweepError, load

EXAMPLE = Path(__file__).parents[3] / "examples" / "sweep.yaml"
PLUGIN_EXAMPLE = EXAMPLE.with_name("sweep-plugin.yaml")


def job(sweep, index):
    return sweep.job(sweep.point(index))


def ran(tmp_path, document, index=0):
    sweep = load(sweep_file(tmp_path, document))
    return run_job(job(sweep, index))


# -- paths ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "path", "value", "expected"),
    [
        ({}, "seed", 3, {"seed": 3}),
        ({}, "a.b.c", 1, {"a": {"b": {"c": 1}}}),
        ({}, "profiles[0].percentageOfNodesToScore", 50, {"profiles": [{"percentageOfNodesToScore": 50}]}),
        (
            {"pluginConfig": [{"name": "A", "args": {"x": 1}}]},
            "pluginConfig[A].args.x",
            2,
            {"pluginConfig": [{"name": "A", "args": {"x": 2}}]},
        ),
        (
            {"enabled": [{"name": "A", "weight": 1}]},
            "enabled[B].weight",
            5,
            {"enabled": [{"name": "A", "weight": 1}, {"name": "B", "weight": 5}]},
        ),
        (
            {"profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}]},
            "profiles[schedulerName=b].percentageOfNodesToScore",
            10,
            {"profiles": [{"schedulerName": "a"}, {"schedulerName": "b", "percentageOfNodesToScore": 10}]},
        ),
    ],
)
def test_a_path_puts_its_value_making_what_is_missing(start, path, value, expected):
    paths.set_at(start, path, value)
    assert start == expected


@pytest.mark.parametrize(
    ("start", "path", "message"),
    [
        ({}, "", "an empty path"),
        ({}, "a..b", "cannot read ''"),
        ({"a": 3}, "a.b", "a.b: a is a value (3), not a mapping"),
        ({"a": {}}, "a[0]", "a[0]: a is a mapping, not a list"),
        ({"a": [1]}, "a[4]", "a[4]: the list has 1 items"),
    ],
)
def test_a_path_that_cannot_be_followed_says_where(start, path, message):
    with pytest.raises(paths.PathError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        paths.set_at(start, path, 1)


# -- the file and its points ----------------------------------------------------------------------


def test_the_example_is_135_points_in_product_order():
    sweep = load(EXAMPLE)
    points = sweep.points()
    assert sweep.size == len(points) == 135
    assert [a.name for a in sweep.axes] == ["strategy", "balanced", "nodes", "seed"]
    assert points[0].coordinates == {"strategy": "LeastAllocated", "balanced": 1, "nodes": 250, "seed": 1}
    assert points[6].coordinates == {"strategy": "LeastAllocated", "balanced": 1, "nodes": 500, "seed": 2}
    assert points[-1].coordinates == {"strategy": "RequestedToCapacityRatio", "balanced": 5, "nodes": 1000, "seed": 5}
    document = sweep.resolve(points[-1])
    profile = document["scheduler"]["config"]["profiles"][0]
    assert profile["pluginConfig"][0]["args"]["scoringStrategy"]["type"] == "RequestedToCapacityRatio"
    assert profile["plugins"]["score"]["enabled"] == [{"name": "NodeResourcesBalancedAllocation", "weight": 5}]
    assert document["cluster"]["nodes"][0]["count"] == 1000 and document["seed"] == 5
    assert sweep.resolve(points[0])["cluster"]["nodes"][0]["count"] == 250  # the file's own document is untouched


@pytest.mark.parametrize("sampling", ["random", "lhs"])
def test_a_sample_is_distinct_points_the_same_for_a_seed(sampling):
    sweep = load(EXAMPLE)
    first = sweep.points(samples=20, sampling=sampling, seed=7)
    again = sweep.points(samples=20, sampling=sampling, seed=7)
    other = sweep.points(samples=20, sampling=sampling, seed=8)
    assert [p.index for p in first] == [p.index for p in again] != [p.index for p in other]
    assert len({p.index for p in first}) == len(first) and 0 < len(first) <= 20
    if sampling == "lhs":  # every value of every axis is drawn (20 strata over at most 5 values)
        for axis in sweep.axes:
            assert {p.coordinates[axis.name] for p in first} == set(axis.values)


def test_several_workloads_make_an_axis_of_their_own(tmp_path):
    document = sweep_document()
    web = document["workloads"]["web"]
    document["workloads"]["big"] = {**web, "pods": [{**web["pods"][0], "count": 20}]}
    sweep = load(sweep_file(tmp_path, document))
    assert [a.name for a in sweep.axes] == ["workload", "strategy"]
    assert sweep.size == 4
    assert sweep.resolve(sweep.point(2))["workload"]["pods"][0]["count"] == 20


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"axes": {}}, "axes: a sweep needs at least one axis"),
        ({"axes": {"x": {"path": "seed"}}}, "axes.x: give one of values, range or variants (got none)"),
        ({"axes": {"x": {"path": "seed", "values": []}}}, "axes.x.values: expected a list of one value or more"),
        ({"axes": {"x": {"path": "seed", "values": [1, 1]}}}, "axes.x.values: each value once"),
        ({"axes": {"x": {"path": "a..b", "values": [1]}}}, "axes.x.path: 'a..b': cannot read ''"),
        ({"axes": {"x": {"values": [1]}}}, "axes.x.path: expected a non-empty string, got nothing"),
        ({"axes": {"x": {"path": "seed", "range": {"from": 3, "to": 1}}}}, "axes.x.range.to: must be at least 3"),
        ({"axes": {"x": {"path": "seed", "variants": {}, "values": [1]}}}, "give one of values, range or variants"),
        ({"axes": {"x": {"variants": {"a": 3}}}}, "axes.x.variants.a: expected a mapping, got 3"),
        ({"workloads": {}}, "workloads: a sweep needs a workload"),
        ({"colour": "blue"}, "the sweep: unknown field 'colour'"),
        ({"axes": {"workload": {"path": "seed", "values": [1]}}}, "axes.workload: the name is the workloads' own axis"),
    ],
)
def test_a_file_that_cannot_be_a_sweep_is_one_line_naming_the_field(tmp_path, change, message):
    path = sweep_file(tmp_path, {**sweep_document(), **change})
    with pytest.raises(SweepError) as error:
        load(path)
    assert str(error.value).startswith(f"{path}: ")
    assert message in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cluster": {"nodes": []}}, "cluster: needs nodes, a snapshot or a bench workload"),
        ({"workloads": {"web": {"pods": []}}}, "workload.pods: a workload needs pods"),
        ({"workloads": {"web": {"pods": [{"count": 2, "name": "same"}]}}}, "workload.pods[0].name: 2 pods need {i}"),
        ({"workloads": {"web": {"pods": [{"count": -1}]}}}, "workload.pods[0].count: must be at least 0, got -1"),
        ({"workloads": {"web": {"horizon": "soon", "pods": [{}]}}}, "workload.horizon:"),
        ({"scheduler": {"plugins": ["nowhere.py:X"]}}, "nowhere.py"),
        ({"metrics": ["nowhere:M"]}, "metrics: nowhere:M: cannot import nowhere"),
        ({"scheduler": {"config": {"profiles": [{"percentageOfNodesToScore": 150}]}}}, None),
    ],
)
def test_what_every_point_shares_is_checked_before_any_runs(tmp_path, capsys, change, message):
    path = sweep_file(tmp_path, {**sweep_document(), **change})
    code = main(["sweep", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    if message is None:  # a configuration is each point's own: it fails there, with the loader's words
        assert code == 1 and "2/2 points, 2 failed" in err
        table = load_results(tmp_path / "out")
        assert {r.status for r in table.results} == {"failed"}
        assert "profiles[0].percentageOfNodesToScore: Invalid value: 150" in table.results[0].error
        return
    assert code == 2
    assert len(err.splitlines()) == 1 and message in err
    assert not (tmp_path / "out").exists()


# -- a point's run and its metrics ----------------------------------------------------------------


def test_most_allocated_packs_the_pods_least_allocated_spreads_them(tmp_path):
    sweep = load(sweep_file(tmp_path, sweep_document(nodes=3, pods=4)))
    least, most = (run_job(job(sweep, i)) for i in (0, 1))
    assert least["status"] == most["status"] == "ok"
    assert least["metrics"]["placed"] == most["metrics"]["placed"] == 4
    assert least["metrics"]["nodesUsed"] == 3 and most["metrics"]["nodesUsed"] == 1
    assert most["metrics"]["cpuUtilisation"] == 1.0 and least["metrics"]["cpuUtilisation"] == pytest.approx(4 / 12)
    assert least["metrics"]["nodeSkew"] == 1 and most["metrics"]["nodeSkew"] == 4
    assert least["metrics"]["attempts"] == 4 and least["metrics"]["unplaced"] == 0
    assert 0 < least["metrics"]["waitP50"] <= least["metrics"]["waitP99"] < 0.1
    assert least["metrics"]["wallSeconds"] > 0


def test_pods_that_do_not_fit_are_unplaced_and_strand_nothing_when_none_is_free(tmp_path):
    outcome = ran(tmp_path, sweep_document(nodes=2, pods=10, axes={"seed": {"path": "seed", "values": [0]}}))
    metrics = outcome["metrics"]
    assert metrics["placed"] == 8 and metrics["unplaced"] == 2
    assert metrics["cpuFragmentation"] is None  # no CPU free at all
    assert metrics["attempts"] == 10  # nothing frees room, and 10 s is short of the unschedulable pods' 5-minute flush


def test_fragmentation_is_the_free_share_on_nodes_that_cannot_take_a_median_pod(tmp_path):
    # 3 pods of 3 CPU on 4-CPU nodes: 1 CPU free on each, none of it usable by a 3-CPU pod.
    document = sweep_document(nodes=3, pods=3, requests={"cpu": "3"}, axes={"seed": {"path": "seed", "values": [0]}})
    metrics = ran(tmp_path, document)["metrics"]
    assert metrics["cpuFragmentation"] == 1.0
    assert metrics["memoryFragmentation"] == 1.0  # the memory free there is stranded with it


def test_preemption_victims_are_counted(tmp_path):
    low = {"metadata": {"labels": {"app": "low"}}, "spec": {"priority": 0, "containers": [_container("2")]}}
    high = {
        "metadata": {"labels": {"app": "high"}},
        "spec": {"priorityClassName": "high", "containers": [_container("4")]},
    }
    document = sweep_document(nodes=1, axes={"seed": {"path": "seed", "values": [0]}})
    document["workloads"]["web"]["pods"] = [
        {"count": 2, "name": "low-{i}", "template": low},
        {"count": 1, "name": "high-{i}", "at": 1, "template": high},
    ]
    document["cluster"]["objects"] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    ]
    outcome = ran(tmp_path, document)
    assert outcome["status"] == "ok", outcome
    assert outcome["metrics"]["preemptions"] == 2
    assert outcome["metrics"]["placed"] == 1 and outcome["metrics"]["unplaced"] == 0  # the victims are gone


def _container(cpu):
    return {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}


def test_zone_skew_is_that_of_pods_of_the_same_labels(tmp_path):
    document = sweep_document(nodes=6, pods=6)  # nodes in zone-a, zone-b, zone-c in turn
    sweep = load(sweep_file(tmp_path, document))
    least, most = (run_job(job(sweep, i))["metrics"] for i in (0, 1))
    assert least["zoneSkew"] == 0  # spread evenly: two in each zone
    assert most["zoneSkew"] >= 2  # packed onto the fewest nodes


def test_a_point_is_the_same_in_any_process(tmp_path):
    sweep = load(sweep_file(tmp_path, sweep_document(nodes=8, pods=30)))
    here = run_job(job(sweep, 1))
    code = (
        "import json, sys; from kubesched.whatif.sweep.simulate import run_job; "
        "print(json.dumps(run_job(json.load(sys.stdin))))"
    )
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", code], input=json.dumps(job(sweep, 1)), capture_output=True, text=True, env=env
        )
        there = json.loads(done.stdout)
        assert {**there["metrics"], "wallSeconds": 0} == {**here["metrics"], "wallSeconds": 0}


RAISING = """
from kubesched.plugin import FilterPlugin


class Moody(FilterPlugin):
    name = "Moody"

    def __init__(self, args, handle):
        pass

    def filter(self, state, pod, node):
        raise RuntimeError("no node suits me today")
"""


def test_a_point_whose_plugin_raises_fails_with_its_error_and_the_sweep_goes_on(tmp_path, capsys):
    (tmp_path / "moody.py").write_text(RAISING)
    enable = {
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "Moody"}]}}}]
    }
    document = sweep_document(
        scheduler={"plugins": ["moody.py:Moody"]},
        axes={"moody": {"variants": {"off": {}, "on": {"scheduler": {"config": enable}}}}},
    )
    path = sweep_file(tmp_path, document)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--workers", "2"]) == 1
    out = capsys.readouterr().out
    assert "1 of 2 points ran, 1 failed" in out
    table = load_results(tmp_path / "out")
    off, on = table.results
    assert off.status == "ok" and off.metrics["placed"] == 4
    assert on.status == "failed"
    assert on.error.startswith("plugin Moody raised at filter")
    assert "RuntimeError: no node suits me today" in on.error
    assert f"FAILED point 1 {json.dumps({'moody': 'on'})}: plugin Moody raised" in out


CRASHING = """
import os


class Crash:
    name = "Crash"

    def __init__(self, args, handle):
        os._exit(3)
"""


def test_a_worker_that_dies_fails_only_its_point(tmp_path, capsys):
    (tmp_path / "crash.py").write_text(CRASHING)
    enable = {
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "Crash"}]}}}]
    }
    document = sweep_document(
        scheduler={"plugins": ["crash.py:Crash"]},
        axes={
            "crash": {"variants": {"no": {}, "yes": {"scheduler": {"config": enable}}}},
            "seed": {"path": "seed", "values": [1, 2]},
        },
    )
    assert main(["sweep", str(sweep_file(tmp_path, document)), "--out", str(tmp_path / "out"), "--workers", "1"]) == 1
    table = load_results(tmp_path / "out")
    assert [r.status for r in table.results] == ["ok", "ok", "failed", "failed"]
    assert table.results[2].error == "the worker running the point died (exit code 3)"


def test_a_declared_metric_is_measured_beside_the_built_in_ones(tmp_path):
    (tmp_path / "mine.py").write_text(
        "from kubesched.whatif.sweep import Metric\n"
        "BUSIEST = Metric('busiestNode', 'pods on the busiest node', 'min',\n"
        "    lambda o: max([sum(1 for p in o.pods if p.spec.nodeName == n.metadata.name) for n in o.nodes]))\n"
    )
    outcome = ran(tmp_path, sweep_document(metrics=["mine.py:BUSIEST"]), index=1)
    assert outcome["metrics"]["busiestNode"] == 4  # MostAllocated: all on one node


PACKED = """
from kubesched.whatif.sweep import Metric

EMPTY = [Metric("emptyNodes", "nodes with no pod at the end", "max",
                lambda o: sum(1 for n in o.nodes if not any(p.spec.nodeName == n.metadata.name for p in o.pods)))]
"""


def test_an_installed_package_declares_a_metric_every_sweep_measures(tmp_path, monkeypatch):
    site = installed_package(
        tmp_path,
        name="packing-metrics",
        version="1.0",
        modules={"packing_metrics": PACKED},
        entry_points={"kubesched.metrics": {"packing": "packing_metrics:EMPTY"}},
    )
    monkeypatch.syspath_prepend(str(site))
    least, most = (ran(tmp_path, sweep_document(), index=i)["metrics"] for i in (0, 1))
    assert least["emptyNodes"] == 0 and most["emptyNodes"] == 2


def test_a_bench_workload_is_a_base_cluster_and_its_pods(tmp_path):
    document = sweep_document(
        cluster={
            "bench": {
                "workload": "SchedulingBasic/500Nodes",
                "params": {"initNodes": 20, "initPods": 10, "measurePods": 30},
            }
        },
        workloads={"bench": {"horizon": "60s"}},
        axes={"seed": {"path": "seed", "values": [0]}},
    )
    outcome = ran(tmp_path, document)
    assert outcome["status"] == "ok", outcome
    assert outcome["metrics"]["placed"] == 40 and outcome["metrics"]["unplaced"] == 0


# -- the command: results, resume, report ---------------------------------------------------------


def rows_without_wall(folder):
    return [{k: v for k, v in row.items() if k != "wallSeconds"} for row in load_results(folder).rows()]


def test_a_sweep_writes_its_table_and_the_report_finds_the_best_and_the_front(tmp_path, capsys):
    document = sweep_document(
        nodes=6,
        pods=6,
        axes={
            "strategy": {"path": FIT_STRATEGY, "values": ["LeastAllocated", "MostAllocated"]},
            "seed": {"path": "seed", "values": [1, 2]},
        },
    )
    path = sweep_file(tmp_path, document)
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out), "--workers", "2", "--output", "json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["points"] == said["ok"] == 4 and said["failed"] == []
    csv_lines = (out / "results.csv").read_text().splitlines()
    assert csv_lines[0].startswith("index,strategy,seed,status,placed,unplaced,")
    assert len(csv_lines) == 5
    assert json.loads((out / "results.json").read_text())["results"][3]["strategy"] == "MostAllocated"
    assert (out / "results.parquet").exists()

    assert main(["sweep", "report", str(out), "--pareto", "nodesUsed,zoneSkew", "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["groupedOver"] == ["seed"]
    assert [g["point"] for g in report["groups"]] == [{"strategy": "LeastAllocated"}, {"strategy": "MostAllocated"}]
    best = {b["metric"]: b["point"]["strategy"] for b in report["best"]}
    assert best["nodesUsed"] == "MostAllocated" and best["zoneSkew"] == "LeastAllocated"
    assert {g["point"]["strategy"] for g in report["pareto"]} == {"LeastAllocated", "MostAllocated"}

    assert main(["sweep", "report", str(out), "--over", "strategy", "--output", "json"]) == 0
    over = json.loads(capsys.readouterr().out)
    assert over["groupedOver"] == ["seed", "strategy"] and len(over["groups"]) == 1
    assert over["groups"][0]["metrics"]["nodesUsed"]["min"] < over["groups"][0]["metrics"]["nodesUsed"]["max"]

    plots = tmp_path / "plots"
    assert (
        main(
            [
                "sweep",
                "report",
                str(out),
                "--metric",
                "nodesUsed",
                "--plots",
                str(plots),
                "--heatmap",
                "strategy,seed",
                "--pareto",
                "nodesUsed,zoneSkew",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "best configuration per metric" in text and "Pareto front of nodesUsed and zoneSkew" in text
    names = sorted(p.name for p in plots.iterdir())
    assert names == [
        "nodesUsed-by-strategy.png",
        "nodesUsed-by-strategy.svg",
        "nodesUsed-strategy-x-seed.png",
        "nodesUsed-strategy-x-seed.svg",
        "pareto-nodesUsed-zoneSkew.png",
        "pareto-nodesUsed-zoneSkew.svg",
    ]
    assert (plots / "nodesUsed-by-strategy.png").read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in (plots / "nodesUsed-by-strategy.svg").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pareto", "nodesUsed"], "--pareto: expected two names with a comma between"),
        (["--metric", "happiness"], "'happiness' is not a metric of this sweep"),
        (["--heatmap", "strategy,seed"], "--heatmap: goes with --plots DIR"),
        (["--over", "colour"], "--over: 'colour' is not an axis of this sweep (it has strategy)"),
    ],
)
def test_a_report_asked_for_what_is_not_there_is_one_line(tmp_path, capsys, args, message):
    out = tmp_path / "out"
    assert main(["sweep", str(sweep_file(tmp_path, sweep_document())), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["sweep", "report", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_results_are_not_overwritten_without_resume_or_force(tmp_path, capsys):
    path = sweep_file(tmp_path, sweep_document())
    out = str(tmp_path / "out")
    assert main(["sweep", str(path), "--out", out]) == 0
    assert main(["sweep", str(path), "--out", out]) == 2
    assert "holds a sweep's results; --resume to go on, --force to start over" in capsys.readouterr().err
    assert main(["sweep", str(path), "--out", out, "--resume"]) == 0
    assert "resuming: 2 of 2 points already in" in capsys.readouterr().err
    changed = sweep_file(tmp_path, sweep_document(pods=5))
    assert main(["sweep", str(changed), "--out", out, "--resume"]) == 2
    assert "holds the results of another sweep" in capsys.readouterr().err
    assert main(["sweep", str(changed), "--out", out, "--force"]) == 0


def test_kill_9_then_resume_keeps_each_finished_point_once_and_equals_an_uninterrupted_run(tmp_path):
    document = sweep_document(nodes=30, pods=150, axes={"seed": {"path": "seed", "range": {"from": 1, "to": 10}}})
    path = sweep_file(tmp_path, document)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert main(["sweep", str(path), "--out", str(whole), "--workers", "2"]) == 0

    command = [sys.executable, "-m", "kubesched", "sweep", str(path), "--out", str(cut), "--workers", "1"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    points = cut / "points.jsonl"
    try:  # until three points are kept, then kill it and its workers at once
        deadline = time.monotonic() + 60
        while not (points.exists() and points.read_text().count("\n") >= 3):
            assert process.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    kept = points.read_text().count("\n")
    assert 3 <= kept < 10
    assert main(["sweep", str(path), "--out", str(cut), "--resume", "--workers", "2"]) == 0
    indices = [json.loads(line)["index"] for line in points.read_text().splitlines()]
    assert sorted(indices) == list(range(10))  # each once
    assert rows_without_wall(cut) == rows_without_wall(whole)


def test_the_example_on_ray_gives_the_same_metrics_point_for_point(tmp_path, capsys, ray_address):
    sample = ["--samples", "3", "--sample-seed", "4"]
    assert main(["sweep", str(EXAMPLE), *sample, "--out", str(tmp_path / "local")]) == 0
    code = main(
        ["sweep", str(EXAMPLE), *sample, "--out", str(tmp_path / "ray"), "--executor", "ray", "--address", ray_address]
    )
    assert code == 0, capsys.readouterr()
    assert "3/3 points, 0 failed" in capsys.readouterr().err
    assert len(rows_without_wall(tmp_path / "ray")) == 3
    assert rows_without_wall(tmp_path / "ray") == rows_without_wall(tmp_path / "local")


def test_ray_without_a_cluster_there_is_one_line(tmp_path, capsys):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'kubesched[ray]')")
    from processes import free_port

    path = sweep_file(tmp_path, sweep_document())
    address = f"127.0.0.1:{free_port()}"
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--executor", "ray", "--address", address]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--address: no Ray cluster to connect to at {address}: Connection refused" in err
    assert len(err.splitlines()) == 1


def test_the_example_gives_its_table_and_plots(tmp_path, capsys):
    out, plots = tmp_path / "out", tmp_path / "plots"
    assert main(["sweep", str(EXAMPLE), "--samples", "2", "--sampling", "lhs", "--out", str(out)]) == 0
    rows = load_results(out).rows()
    assert len(rows) == 2 and all(r["status"] == "ok" and r["placed"] == 1200 for r in rows)
    code = main(
        ["sweep", "report", str(out), "--metric", "nodesUsed", "--plots", str(plots), "--heatmap", "strategy,nodes"]
    )
    assert code == 0
    assert "wrote" in capsys.readouterr().out
    assert (plots / "nodesUsed-strategy-x-nodes.png").exists() and (plots / "nodesUsed-strategy-x-nodes.svg").exists()


SLOW = """
import time

from kubesched.plugin import FilterPlugin


class Slow(FilterPlugin):
    name = "Slow"

    def __init__(self, args, handle):
        pass

    def filter(self, state, pod, node):
        time.sleep(30)
"""


def test_a_point_longer_than_the_timeout_fails_saying_so(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    enable = {
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "Slow"}]}}}]
    }
    document = sweep_document(
        scheduler={"plugins": ["slow.py:Slow"]},
        axes={"slow": {"variants": {"no": {}, "yes": {"scheduler": {"config": enable}}}}},
    )
    path = sweep_file(tmp_path, document)
    began = time.monotonic()
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--timeout", "1s", "--workers", "2"]) == 1
    assert time.monotonic() - began < 20
    fast, slow = load_results(tmp_path / "out").results
    assert fast.status == "ok"
    assert slow.status == "failed" and slow.error == "took longer than --timeout 1s"


def test_a_snapshot_is_a_base_cluster(tmp_path):
    store = MemoryStore(clock=VirtualClock())
    for name in ("a", "b"):
        store.create(make_node(name).capacity(cpu="8", memory="16Gi").obj)
    store.create(make_pod("running").req(cpu="3").node("a").obj)
    store.create(make_pod("waiting").req(cpu="3").obj)
    asyncio.run(read_snapshot(MemoryCluster(store))).save(tmp_path / "cluster.yaml")
    outcome = ran(tmp_path, sweep_document(cluster={"snapshot": "cluster.yaml"}))
    assert outcome["status"] == "ok", outcome
    # the snapshot's pending pod is placed with the workload's four; the one bound already is not counted
    assert outcome["metrics"]["placed"] == 5 and outcome["metrics"]["unplaced"] == 0
    assert outcome["metrics"]["nodesUsed"] == 2


def test_an_interrupted_sweep_says_how_far_it_got(tmp_path):
    document = sweep_document(nodes=30, pods=150, axes={"seed": {"path": "seed", "range": {"from": 1, "to": 10}}})
    path = sweep_file(tmp_path, document)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "kubesched", "sweep", str(path), "--out", str(out), "--workers", "1"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    points = out / "points.jsonl"
    deadline = time.monotonic() + 60
    while not (points.exists() and points.read_text().count("\n") >= 2):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGINT)  # as Ctrl-C sends it: to the sweep and its workers
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in err
    assert "points kept in" in err and "--resume goes on from there" in err
    assert main(["sweep", str(path), "--out", str(out), "--resume"]) == 0
    assert sorted(json.loads(line)["index"] for line in points.read_text().splitlines()) == list(range(10))


def test_the_plugin_example_keeps_pods_off_sundays_only_with_the_plugin(tmp_path):
    out = tmp_path / "out"
    sample = ["--samples", "4", "--sampling", "lhs", "--sample-seed", "2"]
    assert main(["sweep", str(PLUGIN_EXAMPLE), *sample, "--out", str(out)]) == 0
    rows = load_results(out).rows()
    assert {r["plugin"] for r in rows} == {"default", "no-sundays"}
    for row in rows:
        assert row["placed"] == 1000
        assert row["nodesUsed"] == (400 if row["plugin"] == "no-sundays" else 500)
