"""Defaulting and admission applied on create, as the API server's defaulters and the
Priority admission plugin do."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from lightkube.models import core_v1 as m

from kubesched.api.priority import DEFAULT_PRIORITY
from kubesched.cluster.errors import Forbidden

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_TERMINATION_GRACE_SECONDS = 30


def _default_container(c: Any) -> None:
    res = c.resources
    limits = res.limits if res else None
    if limits:
        requests = res.requests
        if requests is None or any(k not in requests for k in limits):
            res.requests = {**limits, **(requests or {})}
    if c.imagePullPolicy is None and c.image is not None:
        tag = c.image.rsplit("/", 1)[-1]
        c.imagePullPolicy = "Always" if ":" not in tag or tag.endswith(":latest") else "IfNotPresent"
    if c.terminationMessagePath is None:
        c.terminationMessagePath = "/dev/termination-log"
    if c.terminationMessagePolicy is None:
        c.terminationMessagePolicy = "File"


def qos_class(spec: Any) -> str:
    """BestEffort, Burstable or Guaranteed, from the containers' requests and limits."""
    containers = [*(spec.initContainers or []), *spec.containers]
    any_set = False
    guaranteed = True
    for c in containers:
        req = (c.resources.requests if c.resources else None) or {}
        lim = (c.resources.limits if c.resources else None) or {}
        any_set = any_set or bool(req) or bool(lim)
        for res in ("cpu", "memory"):
            if res not in lim or req.get(res, lim[res]) != lim[res]:
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def default_pod_spec(spec: Any) -> None:
    """Fill a new pod spec's defaults in place (the spec is the store's own copy)."""
    for c in spec.containers or ():
        _default_container(c)
    for c in spec.initContainers or ():
        _default_container(c)
    spec.schedulerName = spec.schedulerName or DEFAULT_SCHEDULER_NAME
    spec.restartPolicy = spec.restartPolicy or "Always"
    spec.dnsPolicy = spec.dnsPolicy or "ClusterFirst"
    spec.securityContext = spec.securityContext or m.PodSecurityContext()
    if spec.terminationGracePeriodSeconds is None:
        spec.terminationGracePeriodSeconds = DEFAULT_TERMINATION_GRACE_SECONDS


Admitted = tuple[str | None, int, str]  # priorityClassName, priority, preemptionPolicy


def admitted_priority(spec: Any, name: str, priority_classes: Iterable[Any]) -> Admitted:
    """The priority class name, value and preemption policy the Priority admission plugin gives
    a pod with `spec` (from its PriorityClass or the global default); an unknown class or a
    contradicting value is Forbidden."""
    class_name = spec.priorityClassName
    if class_name:
        found = next((pc for pc in priority_classes if pc.metadata.name == class_name), None)
        if found is None:
            raise Forbidden(
                f'pods "{name}" is forbidden: no PriorityClass with name {class_name} was found',
                kind="pods",
                name=name,
            )
        value, policy = found.value, found.preemptionPolicy
    else:
        default = next((pc for pc in priority_classes if pc.globalDefault), None)
        value = default.value if default else DEFAULT_PRIORITY
        policy = default.preemptionPolicy if default else None
        if default:
            class_name = default.metadata.name
    if spec.priority is not None and spec.priority != value:
        raise Forbidden(
            f'pods "{name}" is forbidden: the integer value of priority ({spec.priority}) must not be '
            f"provided in pod spec; priority admission controller computed {value} from the given "
            "PriorityClass name",
            kind="pods",
            name=name,
        )
    return class_name, value, spec.preemptionPolicy or policy or "PreemptLowerPriority"


def default_node(node: Any) -> None:
    """A node registered without allocatable gets its capacity, as the kubelet reports it."""
    status = node.status or m.NodeStatus()
    if status.capacity and not status.allocatable:
        status = msgspec.structs.replace(status, allocatable=dict(status.capacity))
    node.status = status
