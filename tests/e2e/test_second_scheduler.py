"""The package's scheduler-plugins-scheduler as a second `kubesched run` process beside a default
one, against `kubesched cluster up`: each binds only its own pods, and a gang that cannot all fit
is not partly placed."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import lightkube
import pytest
from lightkube.config.kubeconfig import KubeConfig
from lightkube.resources.core_v1 import Event, Pod

import kubesched_scheduler_plugins
from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.sim import KubeletConfig, NodeTemplate

MANIFESTS = Path(kubesched_scheduler_plugins.__file__).parent / "manifests"
DEFAULT = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
"""


def pod(name: str, scheduler: str, group: str = "") -> str:
    labels = f"labels: {{scheduling.x-k8s.io/pod-group: {group}}}" if group else "labels: {}"
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  {labels}\nspec:\n  schedulerName: {scheduler}\n"
        "  containers:\n  - name: app\n    image: registry.k8s.io/pause:3.10\n"
        "    resources: {requests: {cpu: '1', memory: 64Mi}}\n---\n"
    )


def run(cluster, config: Path, tmp_path: Path) -> subprocess.Popen[str]:
    log = open(tmp_path / f"{config.stem}.log", "w")  # noqa: SIM115 - closed with the process
    command = [sys.executable, "-m", "kubesched.cli.main", "run", "--config", str(config)]
    command += ["--kubeconfig", str(cluster.kubeconfig), "--metrics-bind", "127.0.0.1:0", "--no-leader-elect"]
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True)


@pytest.fixture
def cluster(tmp_path):
    template = NodeTemplate(capacity={"cpu": "1", "memory": "4Gi", "pods": "110"}, zones=())
    spec = ClusterSpec(nodes=4, template=template, port=0, kubelet=KubeletConfig(start_seconds=0.1, stop_seconds=0.1))
    with ClusterThread(spec) as running:
        running.kubeconfig = write_kubeconfig(tmp_path / "config", running.url)
        yield running


def test_two_schedulers_each_bind_their_own_pods_and_the_gang_is_not_split(cluster, tmp_path, kubectl_for):
    kubectl = kubectl_for(cluster.kubeconfig)
    kubectl("apply", "-f", str(MANIFESTS / "crd-podgroups.yaml"), "-f", str(MANIFESTS / "crd-elasticquotas.yaml"))
    default_config = tmp_path / "default.yaml"
    default_config.write_text(DEFAULT)
    processes = [run(cluster, default_config, tmp_path), run(cluster, MANIFESTS / "scheduler-config.yaml", tmp_path)]
    try:
        objects = tmp_path / "objects.yaml"
        group = (
            "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: gang}\n"
            "spec: {minMember: 5}\n---\n"
        )
        gang = "".join(pod(f"gang-{i}", "scheduler-plugins-scheduler", "gang") for i in range(6))
        objects.write_text(group + pod("web", "default-scheduler") + gang)
        kubectl("apply", "-f", str(objects))
        client = lightkube.Client(config=KubeConfig.from_file(str(cluster.kubeconfig)))
        deadline = time.monotonic() + 30
        while not client.get(Pod, "web", namespace="default").spec.nodeName:
            assert time.monotonic() < deadline, "the default scheduler did not bind web"
            time.sleep(0.2)
        rejected = "PodGroup default/gang gets rejected due to Pod"
        while not any(rejected in (e.message or "") for e in client.list(Event, namespace="default")):
            assert time.monotonic() < deadline, "no rejection of the gang was reported"
            time.sleep(0.2)
        time.sleep(2)
        pods = {p.metadata.name: p.spec.nodeName for p in client.list(Pod, namespace="default")}
        assert pods["web"] is not None
        # Four nodes of one CPU for a gang of at least five one-CPU pods: none of its pods is bound.
        assert [name for name, node in pods.items() if name.startswith("gang-") and node] == []
        events = client.list(Event, namespace="default")
        by = {(e.involvedObject.name, e.reason): e.reportingComponent for e in events if e.reason != "Started"}
        assert by[("web", "Scheduled")] == "default-scheduler"
        assert {c for (name, reason), c in by.items() if name.startswith("gang-")} == {"scheduler-plugins-scheduler"}
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=20)
