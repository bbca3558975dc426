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
    assert "bogus" in capsys.readouterr().out
