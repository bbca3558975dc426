"""CustomResourceDefinitions with real kubectl: the package's CRDs applied, their objects served
like built-in ones (short names, describe, watch, tables), schema errors as 422s, and deleting a CRD
removing its objects."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

import kubesched_scheduler_plugins
from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread

MANIFESTS = Path(kubesched_scheduler_plugins.__file__).parent / "manifests"
GROUPS = """apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang}
spec: {minMember: 3, scheduleTimeoutSeconds: 30}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: quota, namespace: default}
spec:
  min: {cpu: "4"}
  max: {cpu: "6", memory: 8Gi}
"""


@pytest.fixture
def fresh(tmp_path, kubectl_for):
    """A cluster of its own (CRDs change what the server serves)."""
    with ClusterThread(ClusterSpec(nodes=1, port=0, kubelets=False)) as running:
        yield make(tmp_path, running, kubectl_for)


def make(tmp_path, running, kubectl_for):
    kubectl = kubectl_for(write_kubeconfig(tmp_path / "kubeconfig", running.url))
    kubectl("apply", "-f", str(MANIFESTS / "crd-podgroups.yaml"), "-f", str(MANIFESTS / "crd-elasticquotas.yaml"))
    return kubectl


def test_crds_are_established_and_their_kinds_discovered(fresh):
    crd = json.loads(fresh("get", "crd", "podgroups.scheduling.x-k8s.io", "-o", "json").stdout)
    assert {c["type"]: c["status"] for c in crd["status"]["conditions"]} == {
        "NamesAccepted": "True",
        "Established": "True",
    }
    resources = fresh("api-resources", "--api-group", "scheduling.x-k8s.io").stdout
    assert "podgroups" in resources and "pg,pgs" in resources and "elasticquotas" in resources and "eq,eqs" in resources


def test_objects_are_applied_listed_by_short_name_described_and_patched(fresh, tmp_path):
    path = tmp_path / "objects.yaml"
    path.write_text(GROUPS)
    out = fresh("apply", "-f", str(path)).stdout
    assert (
        "podgroup.scheduling.x-k8s.io/gang created" in out and "elasticquota.scheduling.x-k8s.io/quota created" in out
    )
    table = fresh("get", "pg").stdout.splitlines()
    assert table[0].split() == ["NAME", "PHASE", "MINMEMBER", "RUNNING", "SUCCEEDED", "FAILED", "AGE"]
    assert table[1].split()[:5] == ["gang", "3", "0", "0", "0"]  # no phase yet: the column is empty
    got = json.loads(fresh("get", "podgroup", "gang", "-o", "json").stdout)
    assert got["spec"] == {"minMember": 3, "scheduleTimeoutSeconds": 30} and got["metadata"]["uid"]
    described = fresh("describe", "eq", "quota").stdout
    assert "Kind:         ElasticQuota" in described and "Max:" in described
    fresh("patch", "pg", "gang", "--type", "merge", "-p", '{"spec": {"minMember": 4}}')
    assert json.loads(fresh("get", "pg", "gang", "-o", "json").stdout)["spec"]["minMember"] == 4
    fresh("apply", "-f", str(path))  # applied again: the object is configured, not created
    assert fresh("get", "pgs", "-o", "name").stdout.split() == ["podgroup.scheduling.x-k8s.io/gang"]


def test_an_invalid_object_is_refused_with_422_naming_the_field(fresh, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(GROUPS.split("---")[0].replace("minMember: 3", 'minMember: "three"'))
    result = fresh("apply", "-f", str(path), check=False)
    assert result.returncode != 0
    assert (
        'spec.minMember: Invalid value: "string": spec.minMember in body must be of type integer: "string"'
        in result.stderr
    )
    path.write_text(GROUPS.split("---")[0].replace("minMember: 3", "minMember: 0"))
    result = fresh("apply", "-f", str(path), check=False)
    assert "spec.minMember in body should be greater than or equal to 1" in result.stderr


def test_a_watch_sees_objects_come_and_go_and_deleting_the_crd_removes_them(fresh, tmp_path):
    path = tmp_path / "objects.yaml"
    path.write_text(GROUPS.split("---")[0])
    watch = subprocess.Popen(
        [fresh.binary, "get", "pg", "--watch", "-o", "name"], env=fresh.env, stdout=subprocess.PIPE, text=True
    )
    try:
        time.sleep(1.0)
        fresh("apply", "-f", str(path))
        fresh("delete", "crd", "podgroups.scheduling.x-k8s.io")
        assert fresh("get", "pg", check=False).returncode != 0  # the kind is no longer served
        deadline = time.time() + 10
        while watch.poll() is None and time.time() < deadline:
            time.sleep(0.1)
    finally:
        watch.kill()
    assert "podgroup.scheduling.x-k8s.io/gang" in watch.stdout.read()
    assert fresh("get", "eq").returncode == 0  # the other CRD is still served


def wait_for_phase(kubectl, phase: str) -> None:
    deadline = time.time() + 15
    while json.loads(kubectl("get", "pg", "gang", "-o", "json").stdout).get("status", {}).get("phase") != phase:
        assert time.time() < deadline, f"the PodGroup never reached {phase}"
        time.sleep(0.2)


def test_cluster_up_runs_the_installed_packages_controllers(fresh, tmp_path):
    path = tmp_path / "group.yaml"
    path.write_text(GROUPS.split("---")[0])
    fresh("apply", "-f", str(path))
    wait_for_phase(fresh, "Pending")  # the PodGroup controller runs inside the embedded cluster


def test_kubesched_controllers_runs_them_against_any_cluster(tmp_path, kubectl_for):
    import sys

    with ClusterThread(ClusterSpec(nodes=1, port=0, kubelets=False, controllers=False)) as running:
        kubectl = make(tmp_path, running, kubectl_for)
        command = [
            sys.executable,
            "-m",
            "kubesched.cli.main",
            "controllers",
            "--kubeconfig",
            str(tmp_path / "kubeconfig"),
        ]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            path = tmp_path / "group.yaml"
            path.write_text(GROUPS.split("---")[0])
            kubectl("apply", "-f", str(path))
            wait_for_phase(kubectl, "Pending")
        finally:
            process.terminate()
            out, _ = process.communicate(timeout=20)
        assert "controller podgroup (kubesched-scheduler-plugins 0.1.0) is running" in out
        assert process.returncode == 0
