"""deploy/ applied with the real kubectl to a fresh embedded cluster running kubesched's scheduler
with the configuration from deploy/'s ConfigMap; then the example pod is scheduled by it.

The embedded API server refuses dry-run requests, so the objects are really created (in a cluster
of this test's own). Every kind deploy/ holds is served (RBAC stored, not enforced), so every
file is applied."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.cluster.kinds import KINDS
from kubesched.config import load_text
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim import KubeletConfig

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
EXAMPLE = DEPLOY / "examples" / "example-pod.yaml"
SERVED = {(k.api_version, k.kind) for k in KINDS.values()}
# What deploy/ holds that the embedded server does not serve (when it does, apply it here too).
NOT_SERVED: set[str] = set()


def documents(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def served(doc: dict) -> bool:
    return (doc["apiVersion"], doc["kind"]) in SERVED


def split_files() -> tuple[list[Path], set[str]]:
    """deploy/'s files in `kubectl apply -f deploy/` order: those the server serves, and the kinds
    of those it does not. A file is all one or all the other."""
    applied, skipped = [], set()
    for path in sorted(DEPLOY.glob("*.yaml")):
        docs = documents(path)
        flags = {served(d) for d in docs}
        assert len(flags) == 1, f"{path.name} mixes served and unserved kinds"
        if flags == {True}:
            applied.append(path)
        else:
            skipped |= {d["kind"] for d in docs}
    return applied, skipped


@pytest.fixture(scope="module")
def deployed(tmp_path_factory, kubectl_for):
    configmap = next(d for d in documents(DEPLOY / "20-config.yaml") if d["kind"] == "ConfigMap")
    config = load_text(configmap["data"]["config.yaml"], in_tree_registry())
    spec = ClusterSpec(
        nodes=2,
        port=0,
        kubelet=KubeletConfig(start_seconds=0.1, stop_seconds=0.1),
        bookmark_interval=0.5,
        scheduler=True,
        scheduler_port=0,
        scheduler_config=config,
    )
    with ClusterThread(spec) as running:
        kubeconfig = write_kubeconfig(tmp_path_factory.mktemp("deploy") / "config", running.url)
        yield kubectl_for(kubeconfig)


def test_every_file_of_deploy_is_served():
    applied, skipped = split_files()
    assert skipped == NOT_SERVED
    assert [p.name for p in applied] == [
        "00-namespace.yaml",
        "10-rbac.yaml",
        "20-config.yaml",
        "30-deployment.yaml",
        "40-poddisruptionbudget.yaml",
    ]


def test_kubectl_apply_creates_the_served_objects_and_is_idempotent(deployed):
    kubectl = deployed
    applied, _ = split_files()
    files = [arg for path in applied for arg in ("-f", str(path))]
    first = kubectl("apply", *files).stdout.splitlines()
    assert len(first) == sum(len(documents(path)) for path in applied), first
    assert all(line.endswith(" created") for line in first), first
    again = kubectl("apply", *files)
    assert not any(line.endswith(" created") for line in again.stdout.splitlines()), again.stdout
    for path in applied:
        for doc in documents(path):
            meta = doc["metadata"]
            ns = ["-n", meta["namespace"]] if "namespace" in meta else []
            got = json.loads(kubectl("get", doc["kind"].lower(), meta["name"], *ns, "-o", "json").stdout)
            assert meta["labels"].items() <= got["metadata"]["labels"].items()
    deployment = json.loads(kubectl("get", "deployment", "kubesched", "-n", "kubesched", "-o", "json").stdout)
    assert deployment["spec"]["replicas"] == 2
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    pdb = json.loads(kubectl("get", "pdb", "kubesched", "-n", "kubesched", "-o", "json").stdout)
    assert pdb["spec"]["maxUnavailable"] == 1


def test_the_example_pod_is_scheduled_by_the_kubesched_profile(deployed):
    kubectl = deployed
    kubectl("apply", "-f", str(EXAMPLE))
    node = ""
    deadline = time.monotonic() + 20
    while not node and time.monotonic() < deadline:
        node = kubectl("get", "pod", "kubesched-example", "-o", "jsonpath={.spec.nodeName}").stdout
        time.sleep(0.1)
    assert node.startswith("node-")
    events = json.loads(kubectl("get", "events.events.k8s.io", "-n", "default", "-o", "json").stdout)["items"]
    scheduled = [e for e in events if e["reason"] == "Scheduled" and e["regarding"]["name"] == "kubesched-example"]
    assert [e["reportingController"] for e in scheduled] == ["kubesched"]
    assert scheduled[0]["note"] == f"Successfully assigned default/kubesched-example to {node}"
