"""The labs against a live cluster (`lab run ID --kubeconfig K`), performed against the session's
embedded cluster, each check holding as it is and failing once its claim is made false."""

from __future__ import annotations

import asyncio

import pytest
from lightkube.resources import core_v1

from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.cli.main import main
from kubesched.lab import leases, one_post, owned, revert, stale_cache
from kubesched.lab.book import BOOK
from kubesched.lab.live import connect
from kubesched.sim import KubeletConfig

LIVE = {"5.2.2": one_post.run, "5.5.8": leases.run}
# The labs of the memory cluster that also run against a live one, given a kubeconfig.
EITHER = {"5.2.1": stale_cache.run_memory, "5.2.5": stale_cache.run, "5.5.4": owned.run, "5.6.1": revert.run}


def test_the_live_labs_are_these():
    assert {lab.id for lab in BOOK if lab.runnable and lab.live} == {*LIVE, "5.5.6"}  # 5.5.6: test_rbac.py
    assert {lab.id for lab in BOOK if lab.runnable and lab.takes_cluster and not lab.live} == {*EITHER}


@pytest.fixture(scope="module")
def scheduled(tmp_path_factory):
    """A cluster with its own default scheduler, as `cluster up --scheduler` runs it."""
    kubelet = KubeletConfig(start_seconds=0.2, stop_seconds=0.3)
    spec = ClusterSpec(nodes=3, port=0, scheduler=True, scheduler_port=0, kubelet=kubelet, bookmark_interval=0.5)
    with ClusterThread(spec) as running:
        running.kubeconfig = write_kubeconfig(tmp_path_factory.mktemp("kube") / "config", running.url)
        yield running


@pytest.mark.parametrize(
    ("lab_id", "falsified"),
    [
        # the pods come one by one while the from-scratch scheduler watches: its cache keeps up
        ("5.2.1", {"interval": 0.5}),
        ("5.2.5", {"interval": 0.5}),
        ("5.5.4", {"mode": "Most"}),  # the plugin scoring the other way: the owned scheduler fills the large nodes
        ("5.6.1", {"revert_to": "2560Mi"}),  # nothing shrinks: the late pod fits, the restart rejects nobody
    ],
)
def test_a_memory_lab_holds_on_a_live_cluster_and_fails_once_its_claim_is_made_false(scheduled, lab_id, falsified):
    kubeconfig = str(scheduled.kubeconfig)
    before = _names(kubeconfig)
    held = EITHER[lab_id](kubeconfig=kubeconfig)
    assert held.check is not None and held.check.passed, held.check
    broken = EITHER[lab_id](kubeconfig=kubeconfig, **falsified)
    assert broken.check is not None and not broken.check.passed, broken.check
    assert _names(kubeconfig) == before  # the lab's nodes and pods are gone


def _names(kubeconfig: str) -> tuple[list[str], list[str]]:
    """The cluster's nodes and pods, by name."""

    async def names() -> tuple[list[str], list[str]]:
        cluster = connect(kubeconfig)
        try:
            nodes = (await cluster.list(core_v1.Node)).items
            pods = (await cluster.list(core_v1.Pod, namespace="default")).items
            return sorted(n.metadata.name for n in nodes), sorted(p.metadata.name for p in pods)
        finally:
            await cluster.close()

    return asyncio.run(names())


@pytest.mark.parametrize(
    ("lab_id", "falsified"),
    [
        # bound to a node nobody serves: the API server takes the Binding, no kubelet runs the pod
        ("5.2.2", {"node": "no-such-node", "running_within": 2.0}),
        ("5.5.8", {"replicas": 1, "takeover_within": 4.0}),  # no standby: nobody takes the Lease over
    ],
)
def test_a_live_labs_check_holds_and_fails_once_its_claim_is_made_false(cluster, lab_id, falsified):
    held = LIVE[lab_id](kubeconfig=str(cluster.kubeconfig))
    assert held.check is not None and held.check.passed, held.check
    broken = LIVE[lab_id](kubeconfig=str(cluster.kubeconfig), **falsified)
    assert broken.check is not None and not broken.check.passed, broken.check


def test_lab_check_runs_a_live_lab_with_a_kubeconfig_and_skips_it_without(cluster, capsys):
    assert main(["lab", "check", "5.2.2", "--kubeconfig", str(cluster.kubeconfig)]) == 0
    assert "PASS 5.2.2" in capsys.readouterr().out
    assert main(["lab", "check", "5.2.2"]) == 2
    assert capsys.readouterr().err.strip() == ("lab 5.2.2 runs against a live cluster (cluster up): give --kubeconfig")


def test_lab_check_runs_a_memory_lab_on_a_live_cluster_when_given_one(cluster, capsys):
    assert main(["lab", "check", "5.2.5", "--kubeconfig", str(cluster.kubeconfig)]) == 0
    assert "PASS 5.2.5" in capsys.readouterr().out
    assert main(["lab", "run", "5.2.5", "--ui", "--kubeconfig", str(cluster.kubeconfig)]) == 2
    assert capsys.readouterr().err.strip() == ("--ui: lab 5.2.5 runs against a live cluster: open its own UI instead")


def test_a_cluster_that_cannot_be_reached_is_one_line(tmp_path, capsys):
    dead = tmp_path / "kubeconfig"
    dead.write_text(
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    assert main(["lab", "run", "5.2.2", "--kubeconfig", str(dead)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lab 5.2.2: GET http://127.0.0.1:1/api/v1/nodes: ") and "\n" not in err
