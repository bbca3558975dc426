"""Defaulting applied on create, as the API server's defaulters do."""

from __future__ import annotations

import msgspec
from lightkube.models import core_v1 as m

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_TERMINATION_GRACE_SECONDS = 30


def _default_container(c: m.Container) -> None:
    res = c.resources
    limits = res.limits if res else None
    if res is not None and limits:
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


def qos_class(spec: m.PodSpec) -> str:
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


def default_pod_spec(spec: m.PodSpec) -> None:
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


def default_node(node: m.Node) -> None:
    """A node registered without allocatable gets its capacity, as the kubelet reports it."""
    status = node.status or m.NodeStatus()
    if status.capacity and not status.allocatable:
        status = msgspec.structs.replace(status, allocatable=dict(status.capacity))
    node.status = status
