"""`kubesched bench`: every reproduced test case runs at upstream's integration-test size, the
operations place objects as scheduler_perf does, and the command's options (speed is not asserted)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from lightkube.resources import core_v1

from builders import perf_case
from kubesched.cli.main import main
from kubesched.workloads import runner
from kubesched.workloads.cases import CASES, select

SMOKE = [f"{case.name}/{case.workloads[0].name}" for case in CASES.values()]


@pytest.mark.parametrize("name", SMOKE)
def test_each_test_case_runs_at_its_smallest_size(name, capsys):
    assert main(["bench", name, "--output", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    measured = select(name).params["measurePods"]
    assert body["workload"] == name
    assert [r["scheduled"] for r in body["runs"]] == [measured]
    assert set(body["runs"][0]["throughput"]) >= {"average", "perc50", "perc90", "perc95", "perc99", "samples"}
    assert body["runs"][0]["oneSecond"]["intervalSeconds"] == 1.0  # upstream's collector, always beside


def _store_of(name: str, **params: int) -> Any:
    seen: list[Any] = []
    runner.run(select(name, params), inspect=seen.append)
    return seen[0]


def test_nodes_get_upstreams_labels_round_robin_and_pods_their_namespaces():
    store = _store_of("TopologySpreading/5Nodes", initNodes=6)
    nodes = store.list(core_v1.Node).items
    assert [(n.metadata.name, n.metadata.labels["topology.kubernetes.io/zone"]) for n in nodes] == [
        (f"scheduler-perf-{i:05d}", zone) for i, zone in enumerate(["moon-1", "moon-2", "moon-3"] * 2)
    ]
    pods = Counter(p.metadata.namespace for p in store.list(core_v1.Pod).items)
    assert pods == {"namespace-1": 10, "namespace-2": 10}  # namespace-<op index>, as scheduler_perf names them


def test_affinity_cases_put_init_and_measured_pods_in_the_two_sched_namespaces():
    store = _store_of("SchedulingPodAntiAffinity/5Nodes")
    pods = store.list(core_v1.Pod).items
    assert Counter(p.metadata.namespace for p in pods) == {"sched-0": 1, "sched-1": 4}
    assert len({p.spec.nodeName for p in pods}) == 5  # one anti-affine pod per node


def test_pod_sets_go_one_per_labelled_namespace_and_shift_the_later_ops_indices():
    store = _store_of("SchedulingRequiredPodAntiAffinityWithNSSelector/10Nodes")
    namespaces = {n.metadata.name: n.metadata.labels for n in store.list(core_v1.Namespace).items}
    for name in ("init-ns-0", "init-ns-1", "measure-ns-0"):
        assert namespaces[name] == {"team": "devops", "kubernetes.io/metadata.name": name}
    pods = store.list(core_v1.Pod).items
    assert Counter(p.metadata.namespace for p in pods) == {"init-ns-0": 2, "init-ns-1": 2, "measure-ns-0": 6}
    # the namespace selector makes the anti-affinity hold across the three namespaces: one pod a node
    assert len({p.spec.nodeName for p in pods}) == 10
    assert "namespace-4" not in namespaces  # no op fell back to namespace-<index>


def test_a_service_made_by_create_any_selects_the_measured_pods():
    store = _store_of("DefaultTopologySpreading/5Nodes")
    (service,) = store.list(core_v1.Service, namespace="service-ns").items
    assert service.spec.selector == {"app": "scheduler-perf"}
    measured = store.list(core_v1.Pod, namespace="service-ns").items
    assert len(measured) == 10 and all(p.metadata.labels == service.spec.selector for p in measured)
    assert Counter(p.metadata.namespace for p in store.list(core_v1.Pod).items)["namespace-2"] == 10


def test_deleted_pods_with_a_finalizer_stay_terminating_and_unscheduled():
    from kubesched.workloads.cases import CreateNodes, CreatePods, DeletePods

    seen: list[Any] = []
    runner.run(
        perf_case(
            CreateNodes(2),
            CreatePods(4, "pod-with-finalizer.yaml", skip_wait=True),
            DeletePods("namespace-1"),
            CreatePods(3, collect_metrics=True),
        ),
        inspect=seen.append,
    )
    finalized, measured = (seen[0].list(core_v1.Pod, namespace=ns).items for ns in ("namespace-1", "namespace-3"))
    assert [(p.metadata.deletionTimestamp is not None, p.spec.nodeName) for p in finalized] == [(True, None)] * 4
    assert len(measured) == 3 and all(p.spec.nodeName for p in measured)


def test_deleting_pods_without_a_finalizer_removes_the_ones_there_when_the_op_starts():
    from kubesched.workloads.cases import CreateNodes, CreatePods, DeletePods

    seen: list[Any] = []
    runner.run(perf_case(CreateNodes(1), CreatePods(5), DeletePods("namespace-1"), CreatePods(2)), inspect=seen.append)
    assert Counter(p.metadata.namespace for p in seen[0].list(core_v1.Pod).items) == {"namespace-3": 2}


@pytest.mark.parametrize(("stage", "finishes"), [("Attempted", True), ("Scheduled", False)])
def test_gated_pods_pass_an_attempted_barrier_and_never_a_scheduled_one(stage, finishes, monkeypatch):
    from kubesched.workloads.cases import Barrier, CreateNodes, CreatePods

    monkeypatch.setattr(runner, "STALL_SECONDS", 0.3)
    case = perf_case(CreateNodes(1), CreatePods(3, "gated-pod.yaml", skip_wait=True), Barrier(stage), CreatePods(2))
    if finishes:
        seen: list[Any] = []
        runner.run(case, inspect=seen.append)
        assert len(seen[0].list(core_v1.Pod, namespace="namespace-3").items) == 2
    else:
        with pytest.raises(runner.Stalled, match="3 pods still unscheduled"):
            runner.run(case)


def test_list_names_every_workload_with_its_threshold_and_what_is_not_reproduced(capsys):
    assert main(["bench", "--list", "--output", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    thresholds = {w["workload"]: w["threshold"] for w in body["workloads"]}
    assert thresholds["SchedulingBasic/5000Nodes_10000Pods"] == 680
    assert thresholds["SchedulingPodAntiAffinity/5000Nodes_2000Pods"] == 60
    assert thresholds["TopologySpreading/5000Nodes_5000Pods"] == 460
    assert "volume" in body["notReproduced"]["PreemptionPVs"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "NoSuchCase"], "NoSuchCase: no such test case"),
        (["bench", "PreemptionPVs"], "PreemptionPVs: not reproduced: persistent volumes"),
        (["bench", "SchedulingBasic/9Nodes"], "SchedulingBasic: no workload '9Nodes' (it has 5Nodes, 500Nodes"),
        (["bench", "SchedulingBasic/5Nodes", "--param", "nodes=3"], "--param nodes: SchedulingBasic/5Nodes has"),
        (["bench", "SchedulingBasic/5Nodes", "--param", "initNodes=x"], "--param initNodes=x: expected NAME=N"),
        (["bench", "SchedulingBasic/5Nodes", "--repeat", "0"], "--repeat must be at least 1"),
        (["bench"], "bench: name a workload"),
    ],
)
def test_bad_names_and_options_are_one_line_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_bad_config_file_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "config.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nbogus: 1\n")
    assert main(["bench", "SchedulingBasic/5Nodes", "--config", str(bad)]) == 2
    assert "bogus" in capsys.readouterr().err


def test_a_workload_that_cannot_finish_fails_instead_of_hanging(monkeypatch, capsys):
    monkeypatch.setattr(runner, "STALL_SECONDS", 0.5)
    # Required anti-affinity per node: only 3 of the 8 pods can ever be placed on 3 nodes.
    argv = ["bench", "SchedulingPodAntiAffinity/5Nodes", "--param", "initNodes=3", "--param", "measurePods=8"]
    assert main(argv) == 1
    assert "6 pods still unscheduled after 0.5 s without progress" in capsys.readouterr().err


def test_repeat_reports_medians_and_ranges_of_runs_each_in_its_own_process(capsys):
    assert main(["bench", "SchedulingBasic/5Nodes", "--repeat", "2", "--output", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert len(body["runs"]) == 2
    assert set(body["average"]) == {"median", "min", "max"}
    assert body["average"]["min"] <= body["average"]["median"] <= body["average"]["max"]


def test_profile_writes_where_the_time_goes(tmp_path, capsys):
    report = tmp_path / "profile.txt"
    assert main(["bench", "SchedulingBasic/5Nodes", "--profile", str(report)]) == 0
    text = report.read_text()
    assert "function calls" in text and "scheduling_cycle" in text


@pytest.mark.parametrize(
    ("reported_interval", "deviation"), [(0.1, True), (1.0, False)], ids=["sub-second", "one-second"]
)
def test_a_sub_second_figure_is_printed_as_a_deviation_beside_upstreams(reported_interval, deviation):
    from io import StringIO

    from rich.console import Console

    from kubesched.cli.bench import print_report, report
    from kubesched.workloads.collector import Throughput

    ticks = Throughput([900.0])
    run = runner.Result("SchedulingPodAntiAffinity/5000Nodes_2000Pods", {}, scheduled=2000, seconds=2.4)
    run.ticks = ticks
    run.throughput = Throughput([850.0] * 20, interval=0.1) if reported_interval == 0.1 else ticks
    body = report(select("SchedulingPodAntiAffinity/5000Nodes_2000Pods"), [run.to_json()])
    assert body["average"]["median"] == (850.0 if deviation else 900.0)
    assert body["oneSecondAverage"]["median"] == 900.0
    out = StringIO()
    print_report(Console(file=out, width=200), body)
    text = out.getvalue()
    assert ("sampled every 0.1 s, a deviation" in text) is deviation
    if deviation:
        assert "20 0.1-second samples" in text and "gave 900.0 pods/s over 1 sample (last run)" in text
