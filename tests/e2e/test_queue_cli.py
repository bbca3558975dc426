"""`kubesched queue --url` against the scheduler running in an embedded cluster: a pod too big for
any node and a gated pod wait in their queues, and removing the gate gets the pod bound."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request
from typing import Any

import lightkube
import pytest
from lightkube.config.kubeconfig import KubeConfig
from lightkube.resources.core_v1 import Pod
from lightkube.types import PatchType

from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.cli.main import main
from kubesched.sim import KubeletConfig
from kubesched.workloads.burst import GATE, make_pod
from processes import eventually


@pytest.fixture(scope="module")
def scheduling_cluster(tmp_path_factory):
    spec = ClusterSpec(
        nodes=2,
        port=0,
        scheduler=True,
        scheduler_port=0,
        kubelet=KubeletConfig(start_seconds=0.2, stop_seconds=0.3),
        bookmark_interval=0.5,
    )
    with ClusterThread(spec) as running:
        running.kubeconfig = write_kubeconfig(tmp_path_factory.mktemp("kube") / "config", running.url)
        yield running


def test_queue_url_shows_waiting_pods_and_an_ungated_pod_gets_bound(scheduling_cluster, capsys):
    client = lightkube.Client(config=KubeConfig.from_file(str(scheduling_cluster.kubeconfig)))
    client.create(make_pod("too-big", cpu="64", scheduler="default-scheduler"))
    client.create(make_pod("held", cpu="100m", scheduler="default-scheduler", gates=[GATE]))

    def queue() -> dict[str, dict[str, Any]]:
        assert main(["queue", "--url", scheduling_cluster.scheduler_url, "--output", "json"]) == 0
        return {p["key"]: p for p in json.loads(capsys.readouterr().out)["pods"]}

    def both_waiting() -> dict[str, dict[str, Any]] | None:
        pods = queue()
        where = {key: pod["queue"] for key, pod in pods.items()}
        return pods if where == {"default/too-big": "unschedulablePods", "default/held": "gated"} else None

    pods = eventually(both_waiting)
    assert pods["default/too-big"]["rejected_by"] == ["NodeResourcesFit"]
    assert pods["default/held"]["rejected_by"] == ["SchedulingGates"]

    client.patch(Pod, "held", [{"op": "remove", "path": "/spec/schedulingGates"}], patch_type=PatchType.JSON)
    node = eventually(lambda: client.get(Pod, "held").spec.nodeName)
    assert node in {"node-0", "node-1"}
    assert set(queue()) == {"default/too-big"}


def test_cluster_up_with_the_scheduler_serves_its_endpoints(tmp_path):
    args = ["cluster", "up", "--nodes", "1", "--port", "0", "--kubeconfig", str(tmp_path / "kubeconfig")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched.cli.main", *args, "--scheduler", "--scheduler-port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [proc.stdout.readline()]
        while "Press Ctrl-C" not in lines[-1] and len(lines) < 20:
            lines.append(proc.stdout.readline())
        banner = " ".join(lines)
        found = re.search(r"kubesched scheduler is running.* at (http://127\.0\.0\.1:\d+)", banner)
        assert found, banner
        assert f"kubesched queue --url {found[1]}" in banner
        with urllib.request.urlopen(f"{found[1]}/healthz", timeout=5) as response:
            assert response.read() == b"ok"
        with urllib.request.urlopen(f"{found[1]}/metrics", timeout=5) as response:
            assert b'scheduler_pending_pods{queue="active"} 0.0' in response.read()
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=15)
    assert proc.returncode == 0 and "kubesched cluster stopped." in out
