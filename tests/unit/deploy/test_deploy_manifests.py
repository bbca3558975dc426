"""deploy/: every manifest is valid Kubernetes (the OpenAPI schemas of kubernetes-validate, offline,
strict), the embedded configuration is one kubesched loads, the RBAC grants exactly what kubesched
uses, the scheduler runs locked down, and the Dockerfile runs what the Deployment expects."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from lightkube.resources import core_v1, policy_v1

from kubesched.config import load_text
from kubesched.plugins.registry import in_tree_registry

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
# The Kubernetes version kubesched follows (kube-scheduler v1.36.2); kubernetes-validate ships its schemas.
K8S_VERSION = "1.36"
NAMESPACE = "kubesched"
CONFIG_PATH = "/etc/kubesched/config.yaml"
RUN_ARGS = ["run", "--config", CONFIG_PATH, "--leader-elect", "--metrics-bind", "$(POD_IP):10259"]


def manifest_files() -> list[Path]:
    return sorted(DEPLOY.rglob("*.yaml"))


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def all_documents() -> list[dict[str, Any]]:
    return [d for path in manifest_files() for d in documents(path)]


def one(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in all_documents() if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def scheduler_config_text() -> str:
    configmap = one("ConfigMap")
    return configmap["data"]["config.yaml"]


def deployment_container() -> dict[str, Any]:
    (container,) = one("Deployment")["spec"]["template"]["spec"]["containers"]
    return container


# -- the manifests are Kubernetes objects -----------------------------------------------------------------


@pytest.fixture
def offline(monkeypatch):
    """No connection can be opened: the validator must find every schema in its package."""

    def refuse(*args, **kwargs):
        raise AssertionError("the validator tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_the_manifests_are_the_expected_objects():
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in all_documents())
    assert kinds == [
        ("ClusterRole", "kubesched"),
        ("ClusterRoleBinding", "kubesched"),
        ("ConfigMap", "kubesched-config"),
        ("Deployment", "kubesched"),
        ("Namespace", "kubesched"),
        ("Pod", "kubesched-example"),
        ("PodDisruptionBudget", "kubesched"),
        ("Role", "kubesched-leader-election"),
        ("RoleBinding", "kubesched-leader-election"),
        ("ServiceAccount", "kubesched"),
    ]


def test_kubectl_apply_of_the_directory_creates_the_namespace_first_and_not_the_example():
    """`kubectl apply -f deploy/` takes the files in name order and does not descend into examples/."""
    top = sorted(p.name for p in DEPLOY.glob("*.yaml"))
    assert top[0] == "00-namespace.yaml"
    assert [d["kind"] for d in documents(DEPLOY / top[0])] == ["Namespace"]
    assert all(d["kind"] != "Pod" for name in top for d in documents(DEPLOY / name))
    assert (DEPLOY / "examples" / "example-pod.yaml").is_file()


def test_namespaced_objects_live_in_the_kubesched_namespace():
    cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
    for doc in all_documents():
        if doc["kind"] in cluster_scoped:
            assert "namespace" not in doc["metadata"], doc["kind"]
        elif doc["kind"] != "Pod":  # the example pod is the user's, in default
            assert doc["metadata"]["namespace"] == NAMESPACE, doc["kind"]


@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_manifest_validates_against_the_kubernetes_openapi_schema(path, offline):
    docs = documents(path)
    assert docs, f"{path} holds no object"
    for doc in docs:
        # strict: an unknown field (a typo) is an error, as `kubectl apply --validate=strict` would say
        assert kubernetes_validate.validate(doc, K8S_VERSION, strict=True) == K8S_VERSION


@pytest.mark.parametrize(
    ("mutate", "error"),
    [
        (lambda d: d["spec"].update(replica=2), "Additional properties are not allowed"),
        (lambda d: d["spec"].update(replicas="two"), "is not of type 'integer'"),
        (lambda d: d["spec"].pop("selector"), "'selector' is a required property"),
    ],
)
def test_the_validator_works_offline_and_catches_mistakes(mutate, error, offline):
    """The schemas ship inside the package (no network here), and a broken Deployment fails."""
    deployment = json.loads(json.dumps(one("Deployment")))
    mutate(deployment)
    with pytest.raises(kubernetes_validate.ValidationError, match=re.escape(error)):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)


# -- the scheduler's configuration ------------------------------------------------------------------------


def test_the_configmap_holds_a_configuration_kubesched_loads():
    config = load_text(scheduler_config_text(), in_tree_registry())
    assert [p.scheduler_name for p in config.profiles] == ["kubesched"]
    le = config.configuration.leaderElection
    assert le.leaderElect is True
    assert (le.resourceLock, le.resourceName, le.resourceNamespace) == ("leases", "kubesched", NAMESPACE)


def test_the_lease_the_config_names_is_the_one_the_role_grants():
    le = load_text(scheduler_config_text(), in_tree_registry()).configuration.leaderElection
    role = one("Role")
    assert role["metadata"]["namespace"] == le.resourceNamespace
    named = [r for r in role["rules"] if r.get("resourceNames")]
    assert [r["resourceNames"] for r in named] == [[le.resourceName]]


def test_the_example_pod_asks_for_the_kubesched_profile():
    pod = one("Pod", "kubesched-example")
    assert pod["spec"]["schedulerName"] == "kubesched"


# -- RBAC: exactly what kubesched uses ---------------------------------------------------------------------


# (apiGroup, resource, resourceNames) -> verbs. kubesched watches pods, nodes, namespaces and
# PodDisruptionBudgets (Scheduler.start), binds (DefaultBinder), patches pod status (conditions,
# nominatedNodeName), deletes preemption victims and writes events; the Lease is get/create/update
# (LeaderElector). Volume and DRA kinds are not modelled, so not granted.
def watched() -> set[tuple[str, str]]:
    """(group, resource) of every kind `kubesched run` lists and watches with the deployed configuration."""
    from kubesched.client.backend import api_of
    from kubesched.clock import VirtualClock
    from kubesched.config import load_text
    from kubesched.plugins.registry import in_tree_registry
    from kubesched.scheduler import Scheduler
    from kubesched.storage import MemoryCluster, MemoryStore

    registry = in_tree_registry()
    config = load_text(one("ConfigMap")["data"]["config.yaml"], registry)
    clock = VirtualClock()
    scheduler = Scheduler(MemoryCluster(MemoryStore(clock=clock)), clock, config, registry)
    own = [core_v1.Pod, core_v1.Node, core_v1.Namespace, policy_v1.PodDisruptionBudget]
    kinds = own + list(scheduler.shared_informers.informers)
    clock.close()
    return {(api_of(k).group, api_of(k).plural) for k in kinds}


CLUSTER_GRANTS: dict[tuple[str, str, tuple[str, ...]], set[str]] = {
    **{(group, plural, ()): {"get", "list", "watch"} for group, plural in watched()},
    ("", "pods", ()): {"get", "list", "watch", "delete"},
    ("", "pods/binding", ()): {"create"},
    ("", "pods/status", ()): {"patch", "update"},
    ("", "events", ()): {"create", "patch", "update"},
    ("events.k8s.io", "events", ()): {"create", "patch", "update"},
}
LEASE_GRANTS: dict[tuple[str, str, tuple[str, ...]], set[str]] = {
    ("coordination.k8s.io", "leases", ()): {"create"},  # a create request carries no name to restrict
    ("coordination.k8s.io", "leases", ("kubesched",)): {"get", "update"},
}


def grants(role: dict[str, Any]) -> dict[tuple[str, str, tuple[str, ...]], set[str]]:
    flat: dict[tuple[str, str, tuple[str, ...]], set[str]] = {}
    for rule in role["rules"]:
        assert "nonResourceURLs" not in rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                key = (group, resource, tuple(rule.get("resourceNames", ())))
                flat.setdefault(key, set()).update(rule["verbs"])
    return flat


@pytest.mark.parametrize(
    ("kind", "expected"), [("ClusterRole", CLUSTER_GRANTS), ("Role", LEASE_GRANTS)], ids=["cluster", "lease"]
)
def test_rbac_grants_exactly_what_kubesched_uses(kind, expected):
    assert grants(one(kind)) == expected


def test_no_rbac_rule_uses_a_wildcard():
    for role in (one("ClusterRole"), one("Role")):
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs", "resourceNames"):
                assert not any("*" in value for value in rule.get(field, ())), (role["kind"], rule)


@pytest.mark.parametrize(("binding", "role"), [("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")])
def test_the_bindings_give_the_roles_to_the_service_account_only(binding, role):
    b = one(binding)
    r = one(role)
    assert b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": role, "name": r["metadata"]["name"]}
    sa = one("ServiceAccount")
    assert b["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": NAMESPACE}]
    if binding == "RoleBinding":
        assert b["metadata"]["namespace"] == r["metadata"]["namespace"] == NAMESPACE


# -- the Deployment ----------------------------------------------------------------------------------------


def test_the_deployment_runs_two_leader_electing_replicas_with_the_config():
    deployment = one("Deployment")
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    assert spec["replicas"] == 2
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    assert pod["serviceAccountName"] == one("ServiceAccount")["metadata"]["name"]
    assert "schedulerName" not in pod  # the scheduler's own pods are placed by the default scheduler
    container = deployment_container()
    assert [*container["command"], *container["args"]] == ["kubesched", *RUN_ARGS]
    # the endpoints listen on the pod's address (run's default is loopback), where the probes reach them
    (pod_ip,) = [e for e in container["env"] if e["name"] == "POD_IP"]
    assert pod_ip["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    # the ConfigMap, mounted where --config points, under its data key
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == str(Path(CONFIG_PATH).parent)]
    assert mount["readOnly"] is True
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["configMap"]["name"] == one("ConfigMap")["metadata"]["name"]
    assert Path(CONFIG_PATH).name in one("ConfigMap")["data"]


def test_the_deployment_is_locked_down():
    pod = one("Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        assert not pod.get(flag)
    sc = deployment_container()["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not sc.get("privileged")
    assert all("hostPath" not in v for v in pod["volumes"])


def test_the_deployment_sets_requests_and_limits():
    resources = deployment_container()["resources"]
    assert set(resources["requests"]) == {"cpu", "memory"}
    assert set(resources["limits"]) == {"cpu", "memory"}


@pytest.mark.parametrize(("probe", "path"), [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")])
def test_the_probes_ask_the_scheduler_endpoints(probe, path):
    container = deployment_container()
    get = container[probe]["httpGet"]
    assert (get["path"], get["port"], get["scheme"]) == (path, 10259, "HTTP")
    assert [p["containerPort"] for p in container["ports"]] == [10259]


def test_the_disruption_budget_covers_the_replicas_one_at_a_time():
    pdb = one("PodDisruptionBudget")
    assert pdb["spec"]["maxUnavailable"] == 1
    labels = one("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()


# -- the image ---------------------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_the_dockerfile_builds_on_python_slim_and_runs_as_the_deployment_expects():
    instructions = dockerfile_instructions()
    froms = [arg for op, arg in instructions if op == "FROM"]
    assert len(froms) == 2  # build stage, runtime stage
    assert all(f.split()[0] == "python:3.11-slim" for f in froms)
    runs = " ".join(arg for op, arg in instructions if op == "RUN")
    assert "pip install ." in runs and "[dev]" not in runs
    (user,) = [arg for op, arg in instructions if op == "USER"]
    assert user.split(":")[0] not in ("0", "root")
    entrypoint = [json.loads(arg) for op, arg in instructions if op == "ENTRYPOINT"]
    cmd = [json.loads(arg) for op, arg in instructions if op == "CMD"]
    assert entrypoint == [["kubesched"]]
    assert cmd == [[*RUN_ARGS[:-1], "0.0.0.0:10259"]]  # the container's own addresses; the Deployment gives the pod's
    # the image's user is the one the Deployment runs as
    assert int(user.split(":")[0]) == one("Deployment")["spec"]["template"]["spec"]["securityContext"]["runAsUser"]


def test_the_dockerignore_keeps_local_state_out_of_the_build_context():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".git", ".venv", ".tools", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"} <= ignored
    assert {"src", "pyproject.toml", "README.md"}.isdisjoint(ignored)
