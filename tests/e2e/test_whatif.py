"""Snapshots and capacity against a served cluster: read with lists only, never written, and a
snapshot that `cluster up --from` serves again as it was."""

from __future__ import annotations

import json
import subprocess
import sys

from kubesched.cli.main import main
from processes import eventually, free_port

POD = """
apiVersion: v1
kind: Pod
metadata: {name: probe}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""


def test_save_serve_save_round_trips(tmp_path, kubectl, cluster, capsys):
    kubectl("create", "namespace", "whatif")
    kubectl("-n", "whatif", "create", "deployment", "web", "--image=nginx", "--replicas=2")
    eventually(lambda: kubectl("-n", "whatif", "get", "pods", "-o", "name").stdout.count("pod/") == 2)
    first = tmp_path / "first.yaml"
    assert main(["snapshot", "save", "--kubeconfig", str(cluster.kubeconfig), "-o", str(first)]) == 0
    assert "saved " in capsys.readouterr().out
    port, kubeconfig = free_port(), tmp_path / "served"
    command = [sys.executable, "-m", "kubesched", "cluster", "up", "--from", str(first), "--port", str(port)]
    served = subprocess.Popen([*command, "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True)
    try:
        assert f"from {first}" in served.stdout.readline()
        second = tmp_path / "second.yaml"
        assert main(["snapshot", "save", "--kubeconfig", str(kubeconfig), "-o", str(second)]) == 0
    finally:
        served.terminate()
        served.communicate(timeout=15)
    assert second.read_text() == first.read_text()
    assert "name: whatif" in first.read_text() and "kind: Deployment" in first.read_text()


def test_capacity_reads_the_cluster_and_writes_nothing(tmp_path, kubectl, cluster, capsys):
    (tmp_path / "pod.yaml").write_text(POD)
    before = kubectl("get", "pods", "-A", "-o", "json").stdout
    args = ["capacity", "--kubeconfig", str(cluster.kubeconfig), "--podspec", str(tmp_path / "pod.yaml"), "-o", "json"]
    assert main(args) == 0
    review = json.loads(capsys.readouterr().out)
    assert review["status"]["replicas"] > 0
    assert review["status"]["failReason"]["failType"] == "Unschedulable"
    assert kubectl("get", "pods", "-A", "-o", "json").stdout == before
