"""`cluster up --data-dir` (or `--etcd`) killed with SIGKILL in the middle of a burst of creates: after a restart
every create that was answered 201 is there as it was answered, versions go on rising, and a
client's watch resumes from where it was or is told to relist."""

from __future__ import annotations

import asyncio
import json
import signal
import urllib.request

import pytest
from lightkube.resources import core_v1

from bench.durable import PODS, burst, pod, start_cluster_up
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.sim import KubeletConfig
from processes import eventually


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def first_watch_event(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.readline())


@pytest.fixture(params=["data-dir", "etcd"])
def kept(request, tmp_path):
    """Where a cluster is kept: a data directory, or a prefix of a real etcd."""
    if request.param == "data-dir":
        return {"data_dir": tmp_path / "data"}
    return {"etcd": request.getfixturevalue("etcd_url"), "etcd_prefix": f"/test-{tmp_path.name}"}


def test_a_killed_cluster_keeps_every_answered_write_and_resumes_watches(tmp_path, kept):
    where = [f"--{key.replace('_', '-')}={value}" for key, value in kept.items()]
    data = [*where, "--watch-history", "500", "--no-kubelets", "--nodes", "1"]
    process, url, _ = start_cluster_up(tmp_path / "kubeconfig", *data)
    try:
        answered = asyncio.run(burst(url, 2_000, kill_after=800, pid=process.pid))
    finally:
        process.kill()
        process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL
    assert 800 <= len(answered) < 2_000

    process, url, _ = start_cluster_up(tmp_path / "kubeconfig", *data)  # etcd: once the killed one's lease expires
    try:
        listed = get(url + PODS)
        stored = {p["metadata"]["name"]: p["metadata"]["resourceVersion"] for p in listed["items"]}
        assert {name: stored.get(name) for name in answered} == answered  # none lost, none changed
        newest = max(int(rv) for rv in stored.values())
        assert int(listed["metadata"]["resourceVersion"]) >= newest

        request = urllib.request.Request(
            url + PODS, json.dumps(pod("after")).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            after = json.loads(response.read())
        assert int(after["metadata"]["resourceVersion"]) > newest  # versions go on from where they were

        resumed = first_watch_event(f"{url}{PODS}?watch=true&resourceVersion={newest}")
        assert (resumed["type"], resumed["object"]["metadata"]["name"]) == ("ADDED", "after")
        oldest = min(int(rv) for rv in answered.values())
        expired = first_watch_event(f"{url}{PODS}?watch=true&resourceVersion={oldest}")
        assert (expired["type"], expired["object"]["code"], expired["object"]["reason"]) == ("ERROR", 410, "Expired")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=15)


def test_a_restarted_cluster_with_its_scheduler_keeps_placements_and_schedules_on(kept):
    spec = ClusterSpec(
        nodes=2,
        port=0,
        scheduler=True,
        scheduler_port=0,
        kubelet=KubeletConfig(start_seconds=0.1),
        **kept,
    )

    def placed(running, name):
        def probe():
            pod = running.call(lambda c: c.store.get(core_v1.Pod, name, namespace="default"))
            return pod if pod.status.phase == "Running" else None

        return eventually(probe)

    with ClusterThread(spec) as running:
        urllib.request.urlopen(
            urllib.request.Request(
                running.url + PODS, json.dumps(pod("first")).encode(), {"Content-Type": "application/json"}
            ),
            timeout=10,
        )
        before = placed(running, "first")
    with ClusterThread(spec) as running:
        nodes = running.call(lambda c: [n.metadata.name for n in c.store.list(core_v1.Node).items])
        assert nodes == ["node-0", "node-1"]  # the kept nodes, none made again
        after = running.call(lambda c: c.store.get(core_v1.Pod, "first", namespace="default"))
        assert (after.spec.nodeName, after.metadata.uid, after.metadata.resourceVersion) == (
            before.spec.nodeName,
            before.metadata.uid,
            before.metadata.resourceVersion,
        )
        urllib.request.urlopen(
            urllib.request.Request(
                running.url + PODS, json.dumps(pod("second")).encode(), {"Content-Type": "application/json"}
            ),
            timeout=10,
        )
        assert placed(running, "second").spec.nodeName in nodes
