"""The labs against a live cluster (`lab run ID --kubeconfig K`), performed against the session's
embedded cluster, each check holding as it is and failing once its claim is made false."""

from __future__ import annotations

import pytest

from kubesched.cli.lab import leases, one_post
from kubesched.cli.lab.book import BOOK
from kubesched.cli.main import main

LIVE = {"5.2.2": one_post.run, "5.5.8": leases.run}


def test_the_live_labs_are_these():
    assert {lab.id for lab in BOOK if lab.runnable and lab.live} == {*LIVE, "5.5.6"}  # 5.5.6: test_rbac.py


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


def test_a_cluster_that_cannot_be_reached_is_one_line(tmp_path, capsys):
    dead = tmp_path / "kubeconfig"
    dead.write_text(
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    assert main(["lab", "run", "5.2.2", "--kubeconfig", str(dead)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lab 5.2.2: GET http://127.0.0.1:1/api/v1/nodes: ") and "\n" not in err
