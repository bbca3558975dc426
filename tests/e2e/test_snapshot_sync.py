"""`kubesched snapshot sync`: a `cluster up` kept in step with another cluster — pods created,
bound by the source's scheduler, relabelled, deleted; a node relabelled — with a token that may
only read the source (RBAC would refuse any write)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from lightkube.resources import core_v1

from builders import make_pod
from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.apiserver.rbac import RBAC
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.sim import KubeletConfig
from processes import eventually

ADMIN = "sync-admin-token"
SYNCER = "system:serviceaccount:default:syncer"


@pytest.fixture
def source(tmp_path, kubectl_for):
    spec = ClusterSpec(
        nodes=3,
        port=0,
        token=ADMIN,
        authorization=RBAC,
        scheduler=True,
        scheduler_port=0,
        kubelet=KubeletConfig(start_seconds=0.1, stop_seconds=0.1),
    )
    with ClusterThread(spec) as running:
        admin = kubectl_for(write_kubeconfig(tmp_path / "admin", running.url, token=ADMIN, ca_pem=running.ca_pem))
        admin("create", "serviceaccount", "syncer")
        admin("create", "clusterrole", "reader", "--verb=get,list,watch", "--resource=*.*")
        admin("create", "clusterrolebinding", "syncer-reads", "--clusterrole=reader", "--serviceaccount=default:syncer")
        token = admin("create", "token", "syncer", "--duration=1h").stdout.strip()
        running.reader = write_kubeconfig(tmp_path / "reader", running.url, token=token, ca_pem=running.ca_pem)
        yield running


@pytest.fixture
def target(tmp_path):
    spec = ClusterSpec(nodes=0, port=0, kubelets=False, builtin_controllers=(), controllers=False)
    with ClusterThread(spec) as running:
        running.kubeconfig = write_kubeconfig(tmp_path / "target", running.url)
        yield running


def pods_of(running):
    pods = running.call(lambda c: c.store.list(core_v1.Pod).items)
    return {p.metadata.name: (p.spec.nodeName, dict(p.metadata.labels or {})) for p in pods}


def test_a_synced_cluster_follows_the_source_which_is_only_read(source, target):
    source.call(lambda c: c.store.create(make_pod("before").req(cpu="100m").obj))
    eventually(lambda: pods_of(source)["before"][0])
    command = [sys.executable, "-m", "kubesched", "snapshot", "sync", "--kubeconfig", str(source.reader)]
    sync = subprocess.Popen([*command, "--to", str(target.kubeconfig)], stderr=subprocess.PIPE, text=True)
    try:
        assert sync.stderr.readline().startswith("synced ")
        nodes = eventually(
            lambda: sorted(n.metadata.name for n in target.call(lambda c: c.store.list(core_v1.Node).items))
        )
        assert nodes == ["node-0", "node-1", "node-2"]
        assert pods_of(target)["before"] == pods_of(source)["before"]  # bound where the source bound it

        for name in ("a", "b", "c"):
            source.call(lambda c, name=name: c.store.create(make_pod(name).req(cpu="100m").obj))
        eventually(lambda: all(pods_of(source).get(n, (None,))[0] for n in "abc"))
        source.call(
            lambda c: c.store.patch(core_v1.Pod, "a", {"metadata": {"labels": {"tier": "web"}}}, namespace="default")
        )
        source.call(lambda c: c.store.delete(core_v1.Pod, "b", namespace="default", grace_period_seconds=0))
        source.call(lambda c: c.store.patch(core_v1.Node, "node-1", {"metadata": {"labels": {"rack": "r7"}}}))

        eventually(lambda: pods_of(target) == pods_of(source))
        node = lambda: target.call(lambda c: c.store.get(core_v1.Node, "node-1"))  # noqa: E731
        eventually(lambda: node().metadata.labels.get("rack") == "r7")
        pod = target.call(lambda c: c.store.get(core_v1.Pod, "c", namespace="default"))
        assert pod.status.phase == "Running"  # the status followed too
    finally:
        sync.send_signal(signal.SIGINT)
        _, said = sync.communicate(timeout=20)
    assert sync.returncode == 0
    assert "refused" not in said, said
    used = {verb for (who, verb, _group, _resource) in source.cluster.server.granted if who == SYNCER}
    assert used and used <= {"get", "list", "watch"}
