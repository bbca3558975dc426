"""Real kubectl against the embedded API server."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
import yaml

from builders import deployment_config
from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread


def manifest(name: str, *, cpu: str = "100m", labels: str = "app: web") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {{{labels}}}\n"
        f"spec:\n  containers:\n  - name: app\n    image: nginx:1.27\n"
        f"    resources:\n      requests: {{cpu: {cpu}, memory: 64Mi}}\n"
    )


def create(kubectl, tmp_path, name, **kw):
    path = tmp_path / f"{name}.yaml"
    path.write_text(manifest(name, **kw))
    return kubectl("create", "-f", str(path)), path


def bind(cluster, name, node="node-0"):
    import urllib.request

    body = json.dumps(
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": node}}
    ).encode()
    req = urllib.request.Request(
        f"{cluster.url}/api/v1/namespaces/default/pods/{name}/binding",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req) as resp:
        assert resp.status == 201


def wait_for(predicate, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_get_nodes(kubectl):
    out = kubectl("get", "nodes").stdout.splitlines()
    assert out[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [line.split()[:2] for line in out[1:]] == [["node-0", "Ready"], ["node-1", "Ready"], ["node-2", "Ready"]]


def test_create_from_a_manifest_without_flags(kubectl, tmp_path):
    result, _ = create(kubectl, tmp_path, "created")
    assert result.stdout.strip() == "pod/created created"


def test_create_rejects_an_unknown_field(kubectl, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(manifest("bad").replace("  containers:", "  bogusField: 1\n  containers:"))
    result = kubectl("create", "-f", str(path), check=False)
    assert result.returncode != 0
    assert "bogusField" in result.stderr
    assert kubectl("get", "pod", "bad", check=False).returncode != 0


def test_get_pods_wide(kubectl, tmp_path, cluster):
    create(kubectl, tmp_path, "wide")
    bind(cluster, "wide", "node-1")
    wait_for(lambda: "Running" in kubectl("get", "pod", "wide").stdout)
    lines = kubectl("get", "pods", "-o", "wide").stdout.splitlines()
    header = lines[0]
    for column in ("NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"):
        assert column in header
    row = next(line.split() for line in lines if line.startswith("wide "))
    assert row[1:3] == ["1/1", "Running"] and "node-1" in row and row[5].startswith("10.")


def test_watch_sees_a_change(kubectl, tmp_path):
    create(kubectl, tmp_path, "watched")
    proc = subprocess.Popen(
        [kubectl.binary, "get", "pod", "watched", "--watch", "--output-watch-events"],
        env=kubectl.env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "ADDED" in proc.stdout.readline() + proc.stdout.readline()
        kubectl("label", "pod", "watched", "seen=yes")
        assert "MODIFIED" in proc.stdout.readline()
    finally:
        proc.kill()
        proc.wait()


def test_describe_shows_the_pods_events(kubectl, tmp_path, cluster):
    create(kubectl, tmp_path, "described")
    bind(cluster, "described", "node-2")
    wait_for(lambda: "Started" in kubectl("describe", "pod", "described").stdout)
    out = kubectl("describe", "pod", "described").stdout
    assert "Node:" in out and "node-2/" in out
    assert "Started container app" in out


def test_get_events(kubectl, tmp_path, cluster):
    create(kubectl, tmp_path, "eventful")
    bind(cluster, "eventful")
    wait_for(lambda: "pod/eventful" in kubectl("get", "events").stdout)
    header = kubectl("get", "events").stdout.splitlines()[0].split()
    assert header[:4] == ["LAST", "SEEN", "TYPE", "REASON"]


def test_delete_is_graceful_and_completes(kubectl, tmp_path, cluster):
    create(kubectl, tmp_path, "doomed")
    bind(cluster, "doomed")
    wait_for(lambda: "Running" in kubectl("get", "pod", "doomed").stdout)
    assert kubectl("delete", "pod", "doomed").stdout.strip() == 'pod "doomed" deleted'
    assert "NotFound" in kubectl("get", "pod", "doomed", check=False).stderr


def test_apply_twice_is_unchanged(kubectl, tmp_path):
    path = tmp_path / "applied.yaml"
    path.write_text(manifest("applied"))
    assert kubectl("apply", "-f", str(path)).stdout.strip() == "pod/applied created"
    assert kubectl("apply", "-f", str(path)).stdout.strip() == "pod/applied unchanged"
    path.write_text(manifest("applied", labels="app: web, tier: front"))
    assert kubectl("apply", "-f", str(path)).stdout.strip() == "pod/applied configured"
    labels = json.loads(kubectl("get", "pod", "applied", "-o", "json").stdout)["metadata"]["labels"]
    assert labels == {"app": "web", "tier": "front"}


def test_label_and_annotate(kubectl, tmp_path):
    create(kubectl, tmp_path, "tagged")
    kubectl("label", "pod", "tagged", "tier=back")
    kubectl("annotate", "pod", "tagged", "note=hello")
    pod = json.loads(kubectl("get", "pod", "tagged", "-o", "json").stdout)
    assert pod["metadata"]["labels"]["tier"] == "back"
    assert pod["metadata"]["annotations"]["note"] == "hello"
    kubectl("label", "pod", "tagged", "tier-")
    pod = json.loads(kubectl("get", "pod", "tagged", "-o", "json").stdout)
    assert "tier" not in pod["metadata"]["labels"]


def test_get_pdb_pc_lease(kubectl, tmp_path):
    path = tmp_path / "objs.yaml"
    path.write_text(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\n"
        "spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n"
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: holder}\n"
        "spec: {holderIdentity: me, leaseDurationSeconds: 15}\n"
    )
    kubectl("create", "-f", str(path))
    out = kubectl("get", "pdb,pc,lease").stdout
    assert "poddisruptionbudget.policy/web" in out
    assert "priorityclass.scheduling.k8s.io/high" in out
    assert "lease.coordination.k8s.io/holder" in out


def test_imperative_creates_send_protobuf_and_work(kubectl):
    """kubectl's `create namespace|priorityclass|pdb|deployment` send protobuf bodies."""
    for argv in (
        ("create", "namespace", "team-a"),
        ("create", "priorityclass", "urgent", "--value=1000"),
        ("create", "pdb", "web", "--selector=app=web", "--min-available=1", "-n", "team-a"),
        ("create", "deployment", "web", "--image=nginx", "-n", "team-a"),
    ):
        result = kubectl(*argv)
        assert result.returncode == 0, result.stderr
    assert json.loads(kubectl("get", "pc", "urgent", "-o", "json").stdout)["value"] == 1000
    pdb = json.loads(kubectl("get", "pdb", "web", "-n", "team-a", "-o", "json").stdout)
    assert pdb["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}
    assert kubectl("get", "deployment", "web", "-n", "team-a").returncode == 0


MIXED = """apiVersion: v1
kind: ConfigMap
metadata: {name: mixed-config}
data: {index.html: hello}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: mixed}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: mixed}
spec:
  replicas: 2
  selector: {matchLabels: {app: mixed}}
  template:
    metadata: {labels: {app: mixed}}
    spec:
      serviceAccountName: mixed
      containers: [{name: web, image: nginx}]
---
apiVersion: v1
kind: Service
metadata: {name: mixed}
spec:
  selector: {app: mixed}
  ports: [{port: 80}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: mixed-reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: mixed-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: mixed-reader}
subjects: [{kind: ServiceAccount, name: mixed}]
"""


def test_apply_of_a_manifest_mixing_everyday_kinds(kubectl, tmp_path):
    path = tmp_path / "mixed.yaml"
    path.write_text(MIXED)
    first = kubectl("apply", "-f", str(path)).stdout.splitlines()
    assert first == [
        "configmap/mixed-config created",
        "serviceaccount/mixed created",
        "deployment.apps/mixed created",
        "service/mixed created",
        "role.rbac.authorization.k8s.io/mixed-reader created",
        "rolebinding.rbac.authorization.k8s.io/mixed-reader created",
    ]
    assert all(line.endswith(" unchanged") for line in kubectl("apply", "-f", str(path)).stdout.splitlines())
    table = kubectl("get", "rolebinding", "mixed-reader").stdout.splitlines()
    assert table[0].split() == ["NAME", "ROLE", "AGE"] and table[1].split()[:2] == ["mixed-reader", "Role/mixed-reader"]


def test_diff_shows_a_change_without_applying_it(kubectl, tmp_path):
    path = tmp_path / "diffed.yaml"
    path.write_text(manifest("diffed", cpu="100m"))
    created = kubectl("diff", "-f", str(path), check=False)
    assert created.returncode == 1 and "+  name: diffed" in created.stdout  # a dry-run create
    assert kubectl("get", "pod", "diffed", check=False).returncode != 0
    kubectl("apply", "-f", str(path))
    assert kubectl("diff", "-f", str(path)).stdout == ""  # no difference: exit 0
    path.write_text(manifest("diffed", cpu="100m", labels="app: web, tier: front"))
    changed = kubectl("diff", "-f", str(path), check=False)
    assert changed.returncode == 1 and "+    tier: front" in changed.stdout.splitlines()
    assert "tier" not in kubectl("get", "pod", "diffed", "-o", "jsonpath={.metadata.labels}").stdout


@pytest.mark.parametrize(
    ("args", "said", "left"),
    [
        (("create", "namespace", "dry"), "namespace/dry created (server dry run)", ("get", "namespace", "dry")),
        (
            ("create", "configmap", "dry", "--from-literal=a=b"),
            "configmap/dry created (server dry run)",
            ("get", "cm", "dry"),
        ),
        (
            ("label", "node", "node-0", "dry=yes"),
            "node/node-0 labeled (server dry run)",
            ("get", "nodes", "-l", "dry=yes"),
        ),
        (("delete", "namespace", "kube-node-lease"), "", ()),  # refused by the lifecycle rules, dry run or not
        (("delete", "node", "node-1"), 'node "node-1" deleted (server dry run)', ()),
    ],
)
def test_server_dry_run_of_kubectl_commands_changes_nothing(kubectl, args, said, left):
    result = kubectl(*args, "--dry-run=server", check=False)
    assert (result.returncode == 0) == bool(said)
    assert result.stdout.strip() == said or (not said and "may not be deleted" in result.stderr)
    if left:
        after = kubectl(*left, check=False)
        assert after.returncode != 0 or "dry" not in after.stdout
    assert len(kubectl("get", "nodes", "-o", "name").stdout.split()) == 3


def test_create_configmap_secret_and_serviceaccount(kubectl):
    kubectl("create", "configmap", "settings", "--from-literal=mode=fast")
    kubectl("create", "secret", "generic", "password", "--from-literal=p=q")
    kubectl("create", "serviceaccount", "robot")
    assert kubectl("get", "cm", "settings", "-o", "jsonpath={.data.mode}").stdout == "fast"
    assert kubectl("get", "secret", "password", "-o", "jsonpath={.data.p}").stdout == "cQ=="  # base64 of "q"
    assert kubectl("get", "sa", "robot").stdout.split()[:4] == ["NAME", "SECRETS", "AGE", "robot"]


def test_the_system_priority_classes_exist_and_admit_pods(kubectl, tmp_path):
    classes = json.loads(kubectl("get", "pc", "-o", "json").stdout)["items"]
    system = {c["metadata"]["name"]: c["value"] for c in classes if c["metadata"]["name"].startswith("system-")}
    assert system == {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
    path = tmp_path / "critical.yaml"
    path.write_text(manifest("critical").replace("spec:\n", "spec:\n  priorityClassName: system-node-critical\n"))
    kubectl("create", "-f", str(path))
    assert json.loads(kubectl("get", "pod", "critical", "-o", "json").stdout)["spec"]["priority"] == 2000001000


@pytest.mark.parametrize("short", ["po", "no", "ns", "ev", "pc", "pdb"])
def test_short_names(kubectl, short):
    assert kubectl("get", short).returncode == 0


def test_get_all_uses_categories(kubectl, tmp_path):
    create(kubectl, tmp_path, "in-all")
    assert "pod/in-all" in kubectl("get", "all").stdout


def test_token_protected_cluster_with_kubectl(tmp_path, kubectl_for):
    with ClusterThread(ClusterSpec(nodes=1, port=0, token="t0ken")) as secured:
        assert secured.url.startswith("https://")
        ca = secured.ca_pem
        good = kubectl_for(write_kubeconfig(tmp_path / "good" / "config", secured.url, token="t0ken", ca_pem=ca))
        bad = kubectl_for(write_kubeconfig(tmp_path / "bad" / "config", secured.url, token="nope", ca_pem=ca))
        assert "node-0" in good("get", "nodes").stdout
        denied = bad("get", "nodes", check=False)
        assert denied.returncode != 0 and "You must be logged in to the server" in denied.stderr


def test_the_system_namespaces_may_not_be_deleted(kubectl):
    result = kubectl("delete", "namespace", "kube-system", check=False)
    assert result.returncode != 0
    assert 'namespaces "kube-system" is forbidden: this namespace may not be deleted' in result.stderr
    assert "kube-system" in kubectl("get", "namespaces").stdout


def test_the_minimal_scheduler_outlives_watch_bookmarks(cluster, kubectl, tmp_path):
    """Bookmarks come every half second here: the from-scratch scheduler ignores them and keeps binding."""
    import sys

    command = [sys.executable, "-m", "kubesched.cli.main", "minimal", "--kubeconfig", str(cluster.kubeconfig)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(3)  # several bookmarks
        assert process.poll() is None
        path = tmp_path / "late.yaml"
        path.write_text(manifest("minimal-late").replace("spec:\n", "spec:\n  schedulerName: minimal-scheduler\n"))
        kubectl("create", "-f", str(path))
        deadline = time.time() + 15
        while not kubectl("get", "pod", "minimal-late", "-o", "jsonpath={.spec.nodeName}").stdout:
            assert time.time() < deadline and process.poll() is None, "the minimal scheduler did not bind"
            time.sleep(0.2)
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=20)
    assert "Traceback" not in out


def _write_config(tmp_path, name, config):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_server_side_apply_with_two_field_managers_reports_the_conflict(kubectl, tmp_path):
    two = _write_config(tmp_path, "two", deployment_config("ssa", replicas=2))
    four = _write_config(tmp_path, "four", deployment_config("ssa", replicas=4))
    assert kubectl("apply", "--server-side", "--field-manager=alice", "-f", two).stdout.strip() == (
        "deployment.apps/ssa serverside-applied"
    )
    kubectl("apply", "--server-side", "--field-manager=alice", "-f", two)  # the same manager again: fine
    refused = kubectl("apply", "--server-side", "--field-manager=bob", "-f", four, check=False)
    assert refused.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas' in refused.stderr
    assert kubectl("get", "deploy", "ssa", "-o", "jsonpath={.spec.replicas}").stdout == "2"
    kubectl("apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", four)
    owners = kubectl("get", "deploy", "ssa", "-o", "json", "--show-managed-fields").stdout
    entries = {e["manager"]: e for e in json.loads(owners)["metadata"]["managedFields"]}
    assert "f:replicas" in entries["bob"]["fieldsV1"]["f:spec"]
    assert "f:replicas" not in entries["alice"]["fieldsV1"]["f:spec"]
    kubectl("scale", "deploy", "ssa", "--replicas=1")
    scaled = kubectl("apply", "--server-side", "--field-manager=bob", "-f", four, check=False)
    assert 'conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas' in scaled.stderr


def test_server_side_apply_takes_over_from_client_side_apply(kubectl, tmp_path):
    first = _write_config(tmp_path, "csa", deployment_config("csa", replicas=2))
    kubectl("apply", "-f", first)  # client-side: the last-applied annotation
    second = _write_config(tmp_path, "csa2", deployment_config("csa", replicas=3))
    other = kubectl("apply", "--server-side", "--field-manager=someone", "-f", second, check=False)
    assert 'conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas' in other.stderr
    kubectl("apply", "--server-side", "-f", second)  # kubectl itself takes the fields it applied before
    got = json.loads(kubectl("get", "deploy", "csa", "-o", "json").stdout)
    assert got["spec"]["replicas"] == 3
    last = json.loads(got["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 3  # kept in step for a later client-side apply


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("auth", "can-i", "create", "pods"), "yes"),
        (("auth", "can-i", "get", "/healthz"), "yes"),
        (("auth", "can-i", "delete", "nodes", "--all-namespaces"), "yes"),
        (("auth", "whoami"), "system:anonymous"),
    ],
)
def test_kubectl_auth_answers_that_authorization_is_off(kubectl, args, said):
    assert said in kubectl(*args).stdout


def test_kubectl_auth_can_i_list_grants_everything(kubectl):
    rows = [line.split() for line in kubectl("auth", "can-i", "--list").stdout.splitlines()]
    assert rows[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["*.*", "[]", "[]", "[*]"] in rows
