"""The scheduling.x-k8s.io/v1alpha1 kinds: PodGroup (Coscheduling) and ElasticQuota (CapacityScheduling),
as scheduler-plugins' `apis/scheduling/v1alpha1` defines them. Their CRDs are `manifests/crd-*.yaml`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from kubesched.plugin.cluster import custom_resource

GROUP = "scheduling.x-k8s.io"
VERSION = "v1alpha1"
POD_GROUP_LABEL = f"{GROUP}/pod-group"  # a pod joins a group by this label, valued with the group's name

# PodGroup phases
PENDING = "Pending"
SCHEDULING = "Scheduling"
RUNNING = "Running"
FINISHED = "Finished"
FAILED = "Failed"
UNKNOWN = "Unknown"

Quantities = dict[str, int | str]  # a ResourceList as JSON: name -> quantity


class PodGroupSpec(msgspec.Struct, kw_only=True, omit_defaults=True):
    minMember: int = 0
    minResources: Quantities | None = None
    scheduleTimeoutSeconds: int | None = None


class PodGroupStatus(msgspec.Struct, kw_only=True, omit_defaults=True):
    phase: str = ""
    occupiedBy: str = ""
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    scheduleStartTime: datetime | None = None


class ElasticQuotaSpec(msgspec.Struct, kw_only=True, omit_defaults=True):
    min: Quantities | None = None
    max: Quantities | None = None


class ElasticQuotaStatus(msgspec.Struct, kw_only=True, omit_defaults=True):
    used: Quantities | None = None


PodGroup: Any = custom_resource(
    group=GROUP, version=VERSION, kind="PodGroup", plural="podgroups", spec=PodGroupSpec, status=PodGroupStatus
)
ElasticQuota: Any = custom_resource(
    group=GROUP,
    version=VERSION,
    kind="ElasticQuota",
    plural="elasticquotas",
    spec=ElasticQuotaSpec,
    status=ElasticQuotaStatus,
)
POD_GROUP_RESOURCE = f"podgroups.{VERSION}.{GROUP}"  # the resource name of PodGroup cluster events
ELASTIC_QUOTA_RESOURCE = f"elasticquotas.{VERSION}.{GROUP}"


def pod_group_label(pod: Any) -> str:
    """The name of the pod's group ("" for none)."""
    labels: dict[str, str] = (pod.metadata.labels or {}) if pod.metadata else {}
    return labels.get(POD_GROUP_LABEL, "")


def pod_group_full_name(pod: Any) -> str:
    """`<namespace>/<group>`, or "" for a pod in no group."""
    label = pod_group_label(pod)
    return f"{pod.metadata.namespace or 'default'}/{label}" if label else ""
