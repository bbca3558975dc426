"""Faults under load, against `cluster up` in this process and `kubesched run` replicas as separate
processes with kube-scheduler's default lease timings and client limits: a pod burst during which
the leader is killed with -9 again and again (a fresh replica joins after each kill), then an API
server restart. Reports what held: pods bound twice, lost, nodes overcommitted, each takeover's
time, and the time from the API server's return to the next binding.

.venv/bin/python -m bench.chaos [--pods N] [--kills K]
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from lightkube.resources.core_v1 import Event, Node, Pod

from kubesched.api.quantity import milli_value
from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.sim import KubeletConfig, NodeTemplate
from kubesched.workloads.burst import make_pod
from processes import client, endpoint, lease, metric, start_run
from restartable import Restartable

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: true, resourceNamespace: default}
"""
LEADING = 'leader_election_master_status{name="kube-scheduler"}'


def wait(probe, timeout: float) -> float:
    """Seconds until `probe()` holds."""
    start = time.monotonic()
    while not probe():
        if time.monotonic() - start > timeout:
            raise SystemExit(f"timed out after {timeout:.0f} s")
        time.sleep(0.1)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--kills", type=int, default=3)
    args = parser.parse_args()
    template = NodeTemplate(capacity={"cpu": "8", "memory": "32Gi", "pods": "110"})
    spec = ClusterSpec(nodes=20, template=template, port=0, kubelet=KubeletConfig(start_seconds=0.1, stop_seconds=0.1))
    work = Path(tempfile.mkdtemp(prefix="kubesched-chaos-"))
    config = work / "config.yaml"
    config.write_text(CONFIG)
    with ClusterThread(spec) as running, Restartable(running) as server:
        kubeconfig = write_kubeconfig(work / "kubeconfig", server.start())
        api = client(kubeconfig)
        replicas = []
        for _ in range(2):
            process = start_run(kubeconfig, config)
            replicas.append((process, endpoint(process)))
        wait(lambda: any(metric(url, LEADING) == 1 for _, url in replicas), 30)
        names = [f"chaos-{i}" for i in range(args.pods)]
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda n: api.create(make_pod(n, cpu="50m", scheduler="default-scheduler")), names))

        def bound() -> int:
            return sum(1 for p in api.list(Pod, namespace="default") if p.spec.nodeName)

        takeovers = []
        for kill in range(args.kills):
            wait(lambda k=kill: bound() >= args.pods * (k + 1) // (args.kills + 1), 120)
            leader = next((p, u) for p, u in replicas if metric(u, LEADING) == 1)
            leader[0].send_signal(signal.SIGKILL)
            leader[0].wait(10)
            killed = time.monotonic()
            replicas.remove(leader)
            wait(lambda: any(metric(url, LEADING) == 1 for _, url in replicas), 60)
            takeovers.append(time.monotonic() - killed)
            process = start_run(kubeconfig, config)  # the Deployment's replacement
            replicas.append((process, endpoint(process)))
        wait(lambda: bound() == args.pods, 180)
        # the API server restarts (same store) under the running replicas
        server.stop()
        time.sleep(2.0)
        server.start()
        back = time.monotonic()
        api.create(make_pod("after-restart", cpu="50m", scheduler="default-scheduler"))
        wait(lambda: api.get(Pod, "after-restart").spec.nodeName, 120)
        recovery = time.monotonic() - back
        transitions = lease(api, "kube-scheduler").spec.leaseTransitions
        for process, _ in replicas:
            process.send_signal(signal.SIGTERM)
            process.wait(20)
        pods = [p for p in api.list(Pod, namespace="default") if p.metadata.name.startswith("chaos-")]
        scheduled = Counter(
            e.involvedObject.name for e in api.list(Event, namespace="default") if e.reason == "Scheduled"
        )
        rejected = [e for e in api.list(Event, namespace="default") if (e.reason or "").startswith("OutOf")]
        cpu: defaultdict[str, int] = defaultdict(int)
        count: Counter[str] = Counter()
        for pod in pods:
            cpu[pod.spec.nodeName] += milli_value(pod.spec.containers[0].resources.requests["cpu"])
            count[pod.spec.nodeName] += 1
        overcommitted = [
            n.metadata.name for n in api.list(Node) if cpu[n.metadata.name] > 8000 or count[n.metadata.name] > 110
        ]
    print(f"pods: {args.pods}, leader kills: {args.kills}, lease transitions: {transitions}")
    print(f"pods bound: {sum(1 for p in pods if p.spec.nodeName)}, lost: {args.pods - len(pods)}")
    print(f"pods with more than one Scheduled event: {sum(1 for c in scheduled.values() if c > 1)}")
    print(f"kubelet rejections (OutOf*): {len(rejected)}, nodes overcommitted: {len(overcommitted)}")
    print("takeover after kill -9, s: " + ", ".join(f"{t:.1f}" for t in takeovers))
    print(f"API server restart to the next binding, s: {recovery:.1f}")


if __name__ == "__main__":
    main()
