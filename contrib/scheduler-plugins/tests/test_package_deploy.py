"""deploy/: valid Kubernetes manifests (kubernetes-validate, offline, strict) whose configuration is the
package's, and whose RBAC lets the scheduler read the package's kinds and the controller write PodGroup status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import msgspec
import pytest
import yaml

import kubesched_scheduler_plugins
from kubesched.config import load_file, load_text
from kubesched.scheduler.discovery import plugin_registry

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
MANIFESTS = Path(kubesched_scheduler_plugins.__file__).parent / "manifests"


def documents() -> list[dict[str, Any]]:
    return [d for path in sorted(DEPLOY.glob("*.yaml")) for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("doc", documents(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_every_manifest_is_valid_kubernetes(doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, "1.36", strict=True)


@pytest.mark.parametrize("name", ["crd-podgroups.yaml", "crd-elasticquotas.yaml"])
def test_the_crds_are_valid_kubernetes(name: str) -> None:
    kubernetes_validate.validate(yaml.safe_load((MANIFESTS / name).read_text()), "1.36", strict=True)


def test_the_configmap_holds_the_packages_configuration() -> None:
    registry = plugin_registry()
    (configmap,) = [d for d in documents() if d["kind"] == "ConfigMap"]
    deployed = load_text(configmap["data"]["config.yaml"], registry)
    shipped = load_file(MANIFESTS / "scheduler-config.yaml", registry)
    assert msgspec.to_builtins(deployed.configuration.profiles) == msgspec.to_builtins(shipped.configuration.profiles)


def test_the_role_reads_the_packages_kinds_and_writes_podgroup_status() -> None:
    (role,) = [d for d in documents() if d["kind"] == "ClusterRole"]
    grants = {
        (g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]
    }
    for resource in ("podgroups", "elasticquotas"):
        assert {("scheduling.x-k8s.io", resource, verb) for verb in ("get", "list", "watch")} <= grants
    assert ("scheduling.x-k8s.io", "podgroups/status", "patch") in grants
    assert ("", "pods/binding", "create") in grants
