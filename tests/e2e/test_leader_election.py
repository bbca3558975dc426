"""Two `kubesched run --leader-elect` replicas with kube-scheduler's default lease timings and client
limits (qps 50, burst 100), as separate processes, under a 2,000-pod burst: the leader's renewals
never wait behind its bindings, so the lease never changes hands while it lives and the standby
never schedules; killed with -9 mid-burst, the standby takes over within the lease duration and
every pod ends bound exactly once, on a node with room for it."""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest
from lightkube.resources.core_v1 import Event, Node, Pod

from kubesched.api.quantity import milli_value
from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.sim import KubeletConfig, NodeTemplate
from kubesched.workloads.burst import make_pod
from processes import client, endpoint, eventually, lease, metric, start_run

PODS = 2000
LEASE_DURATION, RETRY_PERIOD = 15.0, 2.0  # upstream's defaults, which the configuration leaves alone
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: true, resourceNamespace: default}
"""
SCHEDULED = 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}'
ERRORS = 'scheduler_schedule_attempts_total{profile="default-scheduler",result="error"}'
LEADING = 'leader_election_master_status{name="kube-scheduler"}'


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    template = NodeTemplate(capacity={"cpu": "8", "memory": "32Gi", "pods": "110"})
    spec = ClusterSpec(nodes=20, template=template, port=0, kubelet=KubeletConfig(start_seconds=0.1, stop_seconds=0.1))
    with ClusterThread(spec) as running:
        running.kubeconfig = write_kubeconfig(tmp_path_factory.mktemp("kube") / "config", running.url)
        yield running


class LeaseWatcher(threading.Thread):
    """Reads the lease every 0.2 s and keeps each holder it saw, with when it first saw it."""

    def __init__(self, api) -> None:
        super().__init__(daemon=True)
        self.api = api
        self.holders: list[tuple[float, str | None, int]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.2):
            found = lease(self.api, "kube-scheduler")
            if found is None:
                continue
            holder, transitions = found.spec.holderIdentity, found.spec.leaseTransitions or 0
            if not self.holders or self.holders[-1][1:] != (holder, transitions):
                self.holders.append((time.monotonic(), holder, transitions))


def test_the_leader_keeps_its_lease_under_a_burst_and_a_kill_9_hands_over_without_double_binds(cluster, tmp_path):
    api = client(cluster.kubeconfig)
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    first = start_run(cluster.kubeconfig, config)
    urls = {"first": endpoint(first)}
    eventually(lambda: metric(urls["first"], LEADING) == 1)
    second = start_run(cluster.kubeconfig, config)
    urls["second"] = endpoint(second)
    watcher = LeaseWatcher(api)
    watcher.start()
    names = [f"burst-{i}" for i in range(PODS)]
    try:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda n: api.create(make_pod(n, cpu="50m", scheduler="default-scheduler")), names))

        def bound() -> int:
            return sum(1 for p in api.list(Pod, namespace="default") if p.spec.nodeName)

        # well past the lease duration, the bindings still queued behind the rate limit
        eventually(lambda: bound() >= PODS // 2, timeout=60)
        assert [h[1:] for h in watcher.holders] == [(watcher.holders[0][1], 0)], watcher.holders  # no transition
        assert metric(urls["second"], SCHEDULED) == 0 and metric(urls["second"], LEADING) == 0  # the standby waits
        assert metric(urls["first"], ERRORS) == 0
        first.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        first.wait(10)
        eventually(lambda: metric(urls["second"], LEADING) == 1, timeout=LEASE_DURATION + 10)
        takeover = time.monotonic() - killed
        # the standby saw the last renewal at a poll, then waits the lease duration to the poll after
        assert takeover <= LEASE_DURATION + 2 * RETRY_PERIOD * 1.2 + 1, takeover
        eventually(lambda: bound() == PODS, timeout=60)
    finally:
        watcher.stopped.set()
        watcher.join()  # before the replicas stop: a replica that stops releases the lease (holder empty)
        for process in (first, second):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(15)
    assert len({h[1] for h in watcher.holders}) == 2 and watcher.holders[-1][2] == 1  # one transition
    # every pod bound once: one Scheduled event at most, and no node holds more than it has
    scheduled = Counter(e.involvedObject.name for e in api.list(Event, namespace="default") if e.reason == "Scheduled")
    assert max(scheduled.values()) == 1
    assert not [e for e in api.list(Event, namespace="default") if (e.reason or "").startswith("OutOf")]
    cpu: defaultdict[str, int] = defaultdict(int)
    pods: Counter[str] = Counter()
    for pod in api.list(Pod, namespace="default"):
        cpu[pod.spec.nodeName] += milli_value(pod.spec.containers[0].resources.requests["cpu"])
        pods[pod.spec.nodeName] += 1
    for node in api.list(Node):
        assert cpu[node.metadata.name] <= 8000 and pods[node.metadata.name] <= 110
