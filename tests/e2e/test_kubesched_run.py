"""`kubesched run` as a separate process against `kubesched cluster up`: it binds its own pods as
its profile spreads them, leaves other schedulers' pods alone, reports failures to the API server,
and with two replicas exactly one schedules until it is killed."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter

import lightkube
import pytest
from lightkube.resources.core_v1 import Event, Pod

from kubesched.api.quantity import milli_value
from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.sim import KubeletConfig, NodeTemplate
from kubesched.workloads.burst import make_pod
from processes import client, endpoint, eventually, lease, metrics, start_run
from restartable import Restartable

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: {elect}
  leaseDuration: 2s
  renewDeadline: 1500ms
  retryPeriod: 200ms
  resourceName: kubesched
  resourceNamespace: default
profiles:
- schedulerName: kubesched
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    template = NodeTemplate(capacity={"cpu": "4", "memory": "16Gi", "pods": "110"})
    spec = ClusterSpec(nodes=10, template=template, port=0, kubelet=KubeletConfig(start_seconds=0.1, stop_seconds=0.1))
    with ClusterThread(spec) as running:
        running.kubeconfig = write_kubeconfig(tmp_path_factory.mktemp("kube") / "config", running.url)
        yield running


def start(cluster, tmp_path, *, elect: bool, name: str) -> subprocess.Popen[str]:
    config = tmp_path / f"{name}.yaml"
    config.write_text(CONFIG.format(elect=str(elect).lower()))
    return start_run(cluster.kubeconfig, config)


def test_run_binds_its_pods_evenly_leaves_others_alone_and_reports_failures(cluster, tmp_path):
    api = client(cluster.kubeconfig)
    process = start(cluster, tmp_path, elect=False, name="single")
    try:
        url = endpoint(process)
        for i in range(100):
            api.create(make_pod(f"even-{i}", cpu="100m", scheduler="kubesched"))
        api.create(make_pod("not-mine", cpu="100m", scheduler="someone-else"))
        api.create(make_pod("huge", cpu="64", scheduler="kubesched"))

        def placed() -> Counter[str] | None:
            nodes = Counter(api.get(Pod, f"even-{i}").spec.nodeName for i in range(100))
            return nodes if None not in nodes else None

        assert sorted(eventually(placed).values()) == [10] * 10  # the default profile spreads them
        assert api.get(Pod, "not-mine").spec.nodeName is None
        message = (
            "0/10 nodes are available: 10 Insufficient cpu. no new claims to deallocate, preemption: "
            "0/10 nodes are available: 10 Preemption is not helpful for scheduling."
        )
        eventually(lambda: any(e.message == message for e in api.list(Event) if e.involvedObject.name == "huge"))
        conditions = eventually(lambda: api.get(Pod, "huge").status.conditions)  # written after the event
        condition = next(c for c in conditions if c.type == "PodScheduled")
        assert (condition.status, condition.reason, condition.message) == ("False", "Unschedulable", message)
        # the same verdict, node by node, from the running scheduler's result store
        command = [sys.executable, "-m", "kubesched", "explain", "default/huge", "--url", url, "--output", "json"]
        explained = json.loads(subprocess.run(command, capture_output=True, text=True, check=True, timeout=30).stdout)
        last = explained["attempts"][-1]
        assert last["message"] == message and last["filter"][0]["plugin"] == "NodeResourcesFit"
        assert len(last["filter"][0]["nodes"]) == 10 and len(last["closestToFitting"]) == 5
        # its UI, read-only: the pod page holds the same attempt; actions are refused
        with urllib.request.urlopen(f"{url}/ui/api/pods/default/huge", timeout=10) as answer:
            assert json.loads(answer.read())["explain"]["attempts"][-1]["message"] == message
        cordon = urllib.request.Request(f"{url}/ui/api/nodes/node-0/cordon", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(cordon, timeout=10)
        assert refused.value.code == 403
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0


def test_two_replicas_one_leader_and_a_takeover_after_kill_9(cluster, tmp_path):
    api = client(cluster.kubeconfig)
    first = start(cluster, tmp_path, elect=True, name="a")
    endpoint(first)
    holder = eventually(lambda: _holder(api))
    second = start(cluster, tmp_path, elect=True, name="b")
    try:
        endpoint(second)
        api.create(make_pod("led-1", cpu="100m", scheduler="kubesched"))
        eventually(lambda: api.get(Pod, "led-1").spec.nodeName)
        assert _holder(api) == holder
        first.kill()  # kill -9: no release
        first.wait(10)
        api.create(make_pod("led-2", cpu="100m", scheduler="kubesched"))
        eventually(lambda: api.get(Pod, "led-2").spec.nodeName, timeout=15)
        assert _holder(api) != holder
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(15)


def _holder(api: lightkube.Client) -> str | None:
    found = lease(api, "kubesched")
    return found.spec.holderIdentity if found is not None else None


def test_the_minimal_scheduler_runs_against_a_cluster_too(cluster):
    api = client(cluster.kubeconfig)
    command = [sys.executable, "-m", "kubesched.cli.main", "minimal", "--kubeconfig", str(cluster.kubeconfig)]
    process = subprocess.Popen([*command, "--scheduler-name", "mini"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and "schedulerName mini" in process.stdout.readline()
        for i in range(3):
            api.create(make_pod(f"mini-{i}", cpu="100m", scheduler="mini"))
        eventually(lambda: all(api.get(Pod, f"mini-{i}").spec.nodeName for i in range(3)))
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0


def _cpu_per_node(api: lightkube.Client) -> dict[str, int]:
    used: dict[str, int] = {}
    for pod in api.list(Pod, namespace="*"):
        if pod.spec.nodeName and pod.status.phase not in ("Failed", "Succeeded"):
            cpu = milli_value(pod.spec.containers[0].resources.requests.get("cpu", "0"))
            used[pod.spec.nodeName] = used.get(pod.spec.nodeName, 0) + cpu
    return used


def test_a_scheduler_killed_in_a_burst_and_restarted_binds_every_pod_once(cluster, tmp_path):
    api = client(cluster.kubeconfig)
    first = start(cluster, tmp_path, elect=False, name="burst-a")
    endpoint(first)
    names = [f"burst-{i}" for i in range(200)]
    creating = threading.Thread(
        target=lambda: [api.create(make_pod(n, cpu="100m", scheduler="kubesched")) for n in names]
    )
    creating.start()  # the burst goes on while the first scheduler dies
    bound = lambda: sum(1 for p in api.list(Pod) if p.metadata.name.startswith("burst-") and p.spec.nodeName)  # noqa: E731
    eventually(lambda: bound() >= 20)
    first.kill()  # kill -9 in the middle of the burst: assumed pods die with it
    first.wait(10)
    creating.join()
    assert bound() < len(names)  # some are left for the second one
    second = start(cluster, tmp_path, elect=False, name="burst-b")
    try:
        url = endpoint(second)
        eventually(lambda: all(api.get(Pod, n).spec.nodeName for n in names), timeout=30)
        assert all(cpu <= 4000 for cpu in _cpu_per_node(api).values())  # no node overcommitted
        rejected = [e for e in api.list(Event) if (e.reason or "").startswith("OutOf")]
        assert rejected == []
        text = metrics(url)
        assert 'scheduler_schedule_attempts_total{profile="kubesched",result="scheduled"}' in text
        assert 'scheduler_pending_pods{queue="active"} 0.0' in text
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(15) == 0


def test_scheduling_resumes_after_the_api_server_restarts_under_a_running_scheduler(tmp_path):
    spec = ClusterSpec(nodes=2, port=0, kubelet=KubeletConfig(start_seconds=0.1, stop_seconds=0.1))
    with ClusterThread(spec) as running, Restartable(running) as server:
        url = server.start()
        running.kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url)
        api = client(running.kubeconfig)
        process = start(running, tmp_path, elect=False, name="restart")
        try:
            endpoint(process)
            api.create(make_pod("before", cpu="100m", scheduler="kubesched"))
            eventually(lambda: api.get(Pod, "before").spec.nodeName)
            server.stop()
            server.change(lambda store: store.create(make_pod("while-down", cpu="100m", scheduler="kubesched")))
            time.sleep(1.0)
            server.start()  # same store, same port
            api.create(make_pod("after", cpu="100m", scheduler="kubesched"))
            eventually(lambda: api.get(Pod, "while-down").spec.nodeName and api.get(Pod, "after").spec.nodeName, 40)
            assert process.poll() is None  # the same scheduler process throughout
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(15) == 0


@pytest.mark.parametrize(
    ("elect", "rewound"),
    [(False, True), (True, False)],
    ids=["single-versions-too-large", "leader-elect-versions-gone"],
)
def test_a_scheduler_under_an_api_server_that_comes_back_empty_relists_and_schedules_on_it(tmp_path, elect, rewound):
    spec = ClusterSpec(nodes=2, port=0, kubelets=False)
    with ClusterThread(spec) as running, Restartable(running) as server:
        running.kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.start())
        api = client(running.kubeconfig)
        process = start(running, tmp_path, elect=elect, name="empty")
        try:
            endpoint(process)
            api.create(make_pod("before", cpu="100m", scheduler="kubesched"))
            eventually(lambda: api.get(Pod, "before").spec.nodeName)
            server.stop()
            # same port; the versions the scheduler holds are newer than any (or older than all) it has
            server.start(empty_with_nodes=2, rewound=rewound)
            for name in ("after-1", "after-2"):
                api.create(make_pod(name, cpu="100m", scheduler="kubesched"))
            eventually(lambda: all(api.get(Pod, n).spec.nodeName for n in ("after-1", "after-2")), 40)
            assert process.poll() is None  # the same scheduler process throughout
        finally:
            process.send_signal(signal.SIGTERM)
            out, _ = process.communicate(timeout=15)
        assert process.returncode == 0, out


def test_a_scheduler_started_before_its_api_server_retries_one_line_a_try_then_schedules(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free now; the cluster comes up on it later
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{port}")
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG.format(elect="false"))
    process = start_run(kubeconfig, config, stderr=subprocess.PIPE)
    try:
        endpoint(process)
        assert process.stderr is not None
        tries = [process.stderr.readline() for _ in range(2)]
        assert all(t.startswith("listing PodDisruptionBudget: ") and "; trying again in " in t for t in tries), tries
        spec = ClusterSpec(nodes=1, port=port, kubelets=False)
        with ClusterThread(spec) as running:
            api = client(kubeconfig)
            api.create(make_pod("late", cpu="100m", scheduler="kubesched"))
            eventually(lambda: api.get(Pod, "late").spec.nodeName, 45)
            assert running.url.endswith(f":{port}")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
