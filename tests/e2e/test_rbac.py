"""`cluster up --authorization rbac`: ServiceAccount tokens from the TokenRequest API, every request
decided by RBAC with kube-apiserver's 403, the access reviews answering as RBAC would; and lab
5.5.6: kubesched run with deploy/'s RBAC and only that, which proves sufficient and least."""

from __future__ import annotations

import pytest
import yaml

from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.apiserver.rbac import RBAC
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.cli.main import main
from kubesched.console.options import UsageError
from kubesched.lab import unprivileged
from kubesched.sim import KubeletConfig, NodeTemplate

ADMIN_TOKEN = "rbac-admin-token"
VIEWER = 'User "system:serviceaccount:default:viewer"'


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    spec = ClusterSpec(
        nodes=2,
        template=NodeTemplate(capacity={"cpu": "4", "memory": "16Gi", "pods": "110"}),
        port=0,
        token=ADMIN_TOKEN,
        authorization=RBAC,
        kubelet=KubeletConfig(start_seconds=0.2, stop_seconds=0.3),
        scheduler=True,  # the default scheduler the live forms of 5.5.4 and 5.6.1 rely on
        scheduler_port=0,
    )
    with ClusterThread(spec) as running:
        path = tmp_path_factory.mktemp("rbac") / "config"
        running.kubeconfig = write_kubeconfig(path, running.url, token=ADMIN_TOKEN, ca_pem=running.ca_pem)
        yield running


@pytest.fixture(scope="module")
def admin(secured, kubectl_for):
    return kubectl_for(secured.kubeconfig)


def test_a_service_account_token_is_signed_in_and_held_to_its_rbac(admin):
    admin("create", "serviceaccount", "viewer")
    token = admin("create", "token", "viewer").stdout.strip()
    assert token
    denied = admin("--token", token, "get", "pods", check=False)
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        f'Error from server (Forbidden): pods is forbidden: {VIEWER} cannot list resource "pods" in API group "" '
        'in the namespace "default"'
    )
    assert admin("--token", token, "auth", "can-i", "list", "pods", check=False).stdout.strip() == "no"
    admin("create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
    admin("create", "rolebinding", "viewer-reads", "--role=pod-reader", "--serviceaccount=default:viewer")
    assert admin("--token", token, "get", "pods").returncode == 0
    assert admin("--token", token, "auth", "can-i", "list", "pods").stdout.strip() == "yes"
    cluster_wide = admin("--token", token, "get", "nodes", check=False)
    assert cluster_wide.stderr.strip() == (
        f'Error from server (Forbidden): nodes is forbidden: {VIEWER} cannot list resource "nodes" in API group "" '
        "at the cluster scope"
    )
    named = admin("--token", token, "delete", "pod", "nope", check=False)
    assert named.stderr.strip() == (
        f'Error from server (Forbidden): pods "nope" is forbidden: {VIEWER} cannot delete resource "pods" in API '
        'group "" in the namespace "default"'
    )
    assert admin("--token", "not-a-token", "get", "pods", check=False).stderr.strip() == (
        "error: You must be logged in to the server (Unauthorized)"
    )


def test_deploys_rbac_is_sufficient_and_least(secured):
    result = unprivileged.run(kubeconfig=str(secured.kubeconfig))
    assert result.check is not None and result.check.passed, result.check
    user = "system:serviceaccount:kubesched:kubesched"
    used = {(verb, group, resource) for (who, verb, group, resource) in secured.cluster.server.granted if who == user}
    rules = [
        r
        for d in yaml.safe_load_all((unprivileged.deploy_dir() / "10-rbac.yaml").read_text())
        if d and d["kind"] in ("ClusterRole", "Role")
        for r in d["rules"]
    ]
    unused = [
        r
        for r in rules
        if not any(
            (verb, group, resource) in used
            for verb in r["verbs"]
            for group in r["apiGroups"]
            for resource in r["resources"]
        )
    ]
    assert unused == []  # every rule granted is a rule the scheduler used


def test_without_a_rule_the_scheduler_cannot_do_its_work(secured):
    broken = unprivileged.run(kubeconfig=str(secured.kubeconfig), drop="pods/binding", wait=5.0)
    assert broken.check is not None and not broken.check.passed
    assert broken.check.evidence["fits"] is None  # nothing could bind
    assert broken.check.evidence["outside"]["code"] == 403


def test_every_lab_runs_and_holds_against_a_live_rbac_cluster_none_skipped(secured, capsys):
    assert main(["lab", "check", "--all", "--require-all", "--kubeconfig", str(secured.kubeconfig)]) == 0
    out = capsys.readouterr().out
    assert "SKIP" not in out and out.splitlines()[-1] == "37 passed, 0 failed, 0 skipped"


def test_replicas_that_never_come_are_one_line_and_leave_nothing_behind(tmp_path, kubectl_for):
    # no Deployment controller: deploy/'s Deployment never makes its pods
    spec = ClusterSpec(nodes=1, port=0, token=ADMIN_TOKEN, authorization=RBAC, builtin_controllers=())
    with ClusterThread(spec) as running:
        kubeconfig = write_kubeconfig(tmp_path / "config", running.url, token=ADMIN_TOKEN, ca_pem=running.ca_pem)
        with pytest.raises(UsageError) as raised:
            unprivileged.run(kubeconfig=str(kubeconfig), wait=1.0)
        assert str(raised.value) == "lab 5.5.6: the Deployment's pods were not made within 1 s (controllers off?)"
        admin = kubectl_for(kubeconfig)
        assert admin("get", "deployments,replicasets", "-n", unprivileged.NAMESPACE, "-o", "name").stdout == ""
