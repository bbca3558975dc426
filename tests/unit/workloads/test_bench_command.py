"""`kubesched bench` runs a workload to the end and reports it (speed is not asserted here)."""

import json

from kubesched.cli.main import main


def test_scheduling_basic_small(capsys):
    assert (
        main(["bench", "scheduling-basic", "--nodes", "20", "--initial", "10", "--measured", "60", "--output", "json"])
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["scheduled"] == 60
    assert summary["params"] == {"nodes": 20, "initial": 10, "measured": 60}
    assert set(summary["throughput"]) == {"average", "perc50", "perc90", "perc99", "samples"}


def test_bad_config_file_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "config.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nbogus: 1\n")
    assert main(["bench", "scheduling-basic", "--nodes", "5", "--measured", "5", "--config", str(bad)]) == 2
    assert "bogus" in capsys.readouterr().err


def test_each_shaped_workload_runs_small(capsys):
    for name in ("unschedulable", "topology-spreading", "pod-affinity", "preferred-pod-anti-affinity"):
        assert main(["bench", name, "--nodes", "12", "--initial", "6", "--measured", "12", "--output", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["scheduled"] == 12, name


def test_a_workload_that_cannot_finish_fails_instead_of_hanging(monkeypatch, capsys):
    from kubesched.workloads import runner

    monkeypatch.setattr(runner, "STALL_SECONDS", 0.5)
    # Required anti-affinity per node: only 3 of the 8 pods can ever be placed on 3 nodes.
    assert main(["bench", "pod-anti-affinity", "--nodes", "3", "--initial", "0", "--measured", "8"]) == 1
    assert "5 pods still unscheduled after 0.5 s without progress" in capsys.readouterr().err


def test_sizes_below_their_minimum_are_usage_errors(capsys):
    assert main(["bench", "scheduling-basic", "--nodes", "0"]) == 2
    assert "--nodes must be at least 1" in capsys.readouterr().err


def test_preemption_basic_small_binds_every_preemptor(capsys):
    assert (
        main(["bench", "preemption-basic", "--nodes", "10", "--initial", "40", "--measured", "10", "--output", "json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["scheduled"] == 10
