"""The built-in controllers through kubectl, with `cluster up --scheduler`: Deployments scaled and
rolled out, Jobs completed, DaemonSets on every node, deletion cascading, namespaces terminating;
and a Deployment driven by the official Python client."""

from __future__ import annotations

import json
import subprocess
import time

import kubernetes
import pytest

from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.sim import KubeletConfig


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory):
    kubelet = KubeletConfig(start_seconds=0.2, stop_seconds=0.2, complete_seconds=0.3)
    spec = ClusterSpec(nodes=3, port=0, scheduler=True, scheduler_port=0, kubelet=kubelet, bookmark_interval=0.5)
    with ClusterThread(spec) as running:
        yield write_kubeconfig(tmp_path_factory.mktemp("kube") / "config", running.url)


@pytest.fixture(scope="module")
def kubectl(kubeconfig, kubectl_for):
    return kubectl_for(kubeconfig)


def _until(predicate, *, seconds: float = 30.0):
    """Poll a live cluster (it runs on the wall clock) until `predicate` holds."""
    end = time.monotonic() + seconds
    while not (result := predicate()):
        if time.monotonic() > end:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)
    return result


def _apply(kubectl, manifest: dict) -> None:
    binary, env = kubectl.binary, kubectl.env
    subprocess.run(
        [binary, "apply", "-f", "-"],
        input=json.dumps(manifest),
        env=env,
        text=True,
        check=True,
        capture_output=True,
        timeout=30,
    )


def _pods(kubectl, selector: str, namespace: str = "default") -> list[dict]:
    out = kubectl("get", "pods", "-n", namespace, "-l", selector, "-o", "json").stdout
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


def _rollout(kubectl, what: str, namespace: str = "default") -> str:
    return kubectl("rollout", "status", what, "-n", namespace, "--timeout=60s", timeout=70).stdout


def test_a_deployment_is_created_scaled_rolled_out_and_deleted(kubectl):
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3")
    assert 'deployment "web" successfully rolled out' in _rollout(kubectl, "deployment/web")
    pods = _pods(kubectl, "app=web")
    assert len(pods) == 3 and {p["status"]["phase"] for p in pods} == {"Running"}
    assert all(p["spec"]["nodeName"] for p in pods)

    kubectl("scale", "deployment/web", "--replicas=5")
    _rollout(kubectl, "deployment/web")
    assert len(_pods(kubectl, "app=web")) == 5

    kubectl("set", "image", "deployment/web", "nginx=nginx:1.28")
    _rollout(kubectl, "deployment/web")
    images = {p["spec"]["containers"][0]["image"] for p in _pods(kubectl, "app=web")}
    assert images == {"nginx:1.28"}
    sets = json.loads(kubectl("get", "rs", "-l", "app=web", "-o", "json").stdout)["items"]
    assert sorted(rs["spec"]["replicas"] for rs in sets) == [0, 5]
    history = kubectl("rollout", "history", "deployment/web").stdout
    assert "1 " in history and "2 " in history

    kubectl("delete", "deployment", "web")
    kubectl("wait", "--for=delete", "pod", "-l", "app=web", "--timeout=30s", timeout=40)
    assert kubectl("get", "rs", "-l", "app=web", "-o", "name").stdout == ""


def test_a_job_of_five_completions_two_at_a_time_completes(kubectl):
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "calc"},
        "spec": {
            "completions": 5,
            "parallelism": 2,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "calc", "image": "busybox"}]}},
        },
    }
    _apply(kubectl, job)
    kubectl("wait", "--for=condition=complete", "job/calc", "--timeout=60s", timeout=70)
    row = kubectl("get", "job", "calc", "--no-headers").stdout.split()
    assert row[:3] == ["calc", "Complete", "5/5"]


def test_a_daemonset_has_one_pod_per_node(kubectl):
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "a", "image": "agent:1"}]},
            },
        },
    }
    _apply(kubectl, ds)
    assert "successfully rolled out" in _rollout(kubectl, "daemonset/agent")
    nodes = sorted(p["spec"]["nodeName"] for p in _pods(kubectl, "app=agent"))
    assert nodes == ["node-0", "node-1", "node-2"]


def test_deleting_a_namespace_goes_through_terminating(kubectl):
    kubectl("create", "namespace", "team")
    kubectl("create", "deployment", "db", "--image=db:1", "--replicas=2", "-n", "team")
    _rollout(kubectl, "deployment/db", "team")
    kubectl("delete", "namespace", "team", "--wait=false")
    phase = kubectl("get", "namespace", "team", "-o", "jsonpath={.status.phase}", check=False).stdout
    assert phase == "Terminating"
    refused = kubectl("create", "configmap", "late", "-n", "team", check=False)
    assert refused.returncode != 0 and "because it is being terminated" in refused.stderr
    kubectl("wait", "--for=delete", "namespace/team", "--timeout=30s", timeout=40)


@pytest.mark.parametrize("command", [["logs", "quiet"], ["exec", "quiet", "--", "true"], ["attach", "quiet"]])
def test_container_commands_say_the_fake_kubelet_runs_no_containers(kubectl, command):
    kubectl("run", "quiet", "--image=nginx", check=False)
    kubectl("wait", "--for=condition=Ready", "pod/quiet", "--timeout=30s", timeout=40)
    result = kubectl(*command, check=False)
    assert result.returncode != 0
    assert "runs no containers in kubesched's embedded cluster" in result.stderr, result.stderr


def test_the_official_python_client_drives_a_deployment(kubeconfig):
    client = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
    apps, core = kubernetes.client.AppsV1Api(client), kubernetes.client.CoreV1Api(client)
    container = kubernetes.client.V1Container(name="api", image="nginx:1.27")
    body = kubernetes.client.V1Deployment(
        metadata=kubernetes.client.V1ObjectMeta(name="api"),
        spec=kubernetes.client.V1DeploymentSpec(
            replicas=3,
            selector=kubernetes.client.V1LabelSelector(match_labels={"app": "api"}),
            template=kubernetes.client.V1PodTemplateSpec(
                metadata=kubernetes.client.V1ObjectMeta(labels={"app": "api"}),
                spec=kubernetes.client.V1PodSpec(containers=[container]),
            ),
        ),
    )
    apps.create_namespaced_deployment("default", body)

    def running() -> list:
        pods = core.list_namespaced_pod("default", label_selector="app=api").items
        return [p for p in pods if p.status.phase == "Running" and not p.metadata.deletion_timestamp]

    assert len(_until(lambda: len(running()) == 3 and running())) == 3
    assert _until(lambda: apps.read_namespaced_deployment_status("api", "default").status.ready_replicas == 3)
    apps.patch_namespaced_deployment_scale("api", "default", {"spec": {"replicas": 1}})
    _until(lambda: len(running()) == 1)
    assert apps.read_namespaced_deployment_scale("api", "default").spec.replicas == 1
    apps.delete_namespaced_deployment("api", "default")
    _until(lambda: not core.list_namespaced_pod("default", label_selector="app=api").items)
    assert not apps.list_namespaced_replica_set("default", label_selector="app=api").items
