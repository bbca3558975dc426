"""Printers of the workloads and services: Deployments, ReplicaSets, ReplicationControllers,
StatefulSets, DaemonSets, Jobs and Services."""

from __future__ import annotations

from collections.abc import Sequence

from lightkube.models import apps_v1 as apps_m
from lightkube.models import batch_v1 as batch_m
from lightkube.models import core_v1 as m
from lightkube.resources import apps_v1, batch_v1, core_v1

from kubesched.api.objects import meta_of, name_of
from kubesched.api.selectors import selector_string
from kubesched.apiserver.tables.printing import (
    AGE,
    CONTAINERS,
    IMAGES,
    NONE,
    SELECTOR,
    UNKNOWN,
    Cell,
    Col,
    Printer,
    Printers,
    age,
    as_int,
    cells,
    created,
    format_labels,
    format_selector,
    human_duration,
    name_col,
)


def _container_cells(template: m.PodTemplateSpec | None) -> list[str]:
    spec = template.spec if template else None
    containers = (spec.containers if spec else None) or []
    return [",".join(c.name or "" for c in containers), ",".join(c.image or "" for c in containers)]


_ReplicatedSpec = apps_m.DeploymentSpec | apps_m.ReplicaSetSpec | apps_m.StatefulSetSpec | m.ReplicationControllerSpec


def _replicas(spec: _ReplicatedSpec | None) -> int:
    """Desired replicas; unset means 1, as API defaulting would have filled in."""
    value = spec.replicas if spec else None
    return 1 if value is None else int(value)


def _deployment_cells(d: apps_m.Deployment, now: float) -> list[Cell]:
    spec, status = d.spec, d.status
    ready = as_int(status.readyReplicas if status else None)
    selector = selector_string(spec.selector if spec else None)
    return [
        name_of(d),
        f"{ready}/{_replicas(spec)}",
        as_int(status.updatedReplicas if status else None),
        as_int(status.availableReplicas if status else None),
        age(created(d), now),
        *_container_cells(spec.template if spec else None),
        "<invalid>" if selector is None else selector,
    ]


_DEPLOYMENT = Printer(
    (
        name_col(),
        Col("Ready", description="Ready pods over desired pods."),
        Col("Up-to-date", description="Pods running the latest template."),
        Col("Available", description="Pods available to serve."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ),
    cells(_deployment_cells),
)


def _replica_set_cells(rs: apps_m.ReplicaSet, now: float) -> list[Cell]:
    spec, status = rs.spec, rs.status
    return [
        name_of(rs),
        _replicas(spec),
        as_int(status.replicas if status else None),
        as_int(status.readyReplicas if status else None),
        age(created(rs), now),
        *_container_cells(spec.template if spec else None),
        format_selector(spec.selector if spec else None),
    ]


_REPLICA_COLUMNS = (
    name_col(),
    Col("Desired", type="integer", description="Desired pods."),
    Col("Current", type="integer", description="Pods that exist."),
    Col("Ready", type="integer", description="Pods that are ready."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
)
_REPLICA_SET = Printer(_REPLICA_COLUMNS, cells(_replica_set_cells))


def _rc_cells(rc: m.ReplicationController, now: float) -> list[Cell]:
    spec, status = rc.spec, rc.status
    return [
        name_of(rc),
        _replicas(spec),
        as_int(status.replicas if status else None),
        as_int(status.readyReplicas if status else None),
        age(created(rc), now),
        *_container_cells(spec.template if spec else None),
        format_labels(spec.selector if spec else None),
    ]


_REPLICATION_CONTROLLER = Printer(_REPLICA_COLUMNS, cells(_rc_cells))


def _stateful_set_cells(sts: apps_m.StatefulSet, now: float) -> list[Cell]:
    spec, status = sts.spec, sts.status
    return [
        name_of(sts),
        f"{as_int(status.readyReplicas if status else None)}/{_replicas(spec)}",
        age(created(sts), now),
        *_container_cells(spec.template if spec else None),
    ]


def _daemon_set_cells(ds: apps_m.DaemonSet, now: float) -> list[Cell]:
    spec, status = ds.spec, ds.status
    template = spec.template if spec else None
    node_selector = (template.spec.nodeSelector if template and template.spec else None) or {}
    return [
        name_of(ds),
        as_int(status.desiredNumberScheduled if status else None),
        as_int(status.currentNumberScheduled if status else None),
        as_int(status.numberReady if status else None),
        as_int(status.updatedNumberScheduled if status else None),
        as_int(status.numberAvailable if status else None),
        ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or NONE,
        age(created(ds), now),
        *_container_cells(template),
        format_selector(spec.selector if spec else None),
    ]


_DAEMON_SET = Printer(
    (
        name_col(),
        Col("Desired", type="integer", description="The number of nodes that should run the daemon pod."),
        Col("Current", type="integer", description="The number of nodes running at least one daemon pod."),
        Col("Ready", type="integer", description="The number of nodes with a ready daemon pod."),
        Col("Up-to-date", type="integer", description="The number of nodes running the updated daemon pod."),
        Col("Available", type="integer", description="The number of nodes with an available daemon pod."),
        Col("Node Selector", description="The node selector of the pod template."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ),
    cells(_daemon_set_cells),
)


def _job_status(job: batch_m.Job) -> str:
    """The Status column: the job's finished condition, else Suspended, Terminating or Running."""
    conditions = {c.type for c in (job.status.conditions if job.status else None) or () if c.status == "True"}
    for type_ in ("Complete", "Failed", "FailureTarget", "SuccessCriteriaMet", "Suspended"):
        if type_ in conditions:
            return type_
    return "Terminating" if meta_of(job).deletionTimestamp is not None else "Running"


def _job_cells(job: batch_m.Job, now: float) -> list[Cell]:
    spec, status = job.spec, job.status
    succeeded = as_int(status.succeeded if status else None)
    if spec is not None and spec.completions is not None:
        completions = f"{succeeded}/{spec.completions}"
    else:
        parallelism = (spec.parallelism if spec else None) or 0
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start = status.startTime if status else None
    end = status.completionTime if status else None
    duration = "" if start is None else human_duration((end.timestamp() if end else now) - start.timestamp())
    return [
        name_of(job),
        _job_status(job),
        completions,
        duration,
        age(created(job), now),
        *_container_cells(spec.template if spec else None),
        format_selector(spec.selector if spec else None),
    ]


_JOB = Printer(
    (
        name_col(),
        Col("Status", description="The status of the job."),
        Col("Completions", description="The desired number of successfully finished pods the job should be run with."),
        Col("Duration", description="Time the job took to complete, or has been running."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ),
    cells(_job_cells),
)


_STATEFUL_SET = Printer(
    (name_col(), Col("Ready", description="Ready pods over desired pods."), AGE, CONTAINERS, IMAGES),
    cells(_stateful_set_cells),
)


def _load_balancer_addresses(status: m.ServiceStatus | None) -> list[str]:
    lb = status.loadBalancer if status else None
    found: set[str] = set()
    for ingress in (lb.ingress if lb else None) or []:
        if ingress.ip:
            found.add(ingress.ip)
        elif ingress.hostname:
            found.add(ingress.hostname)
    return sorted(found)


def _service_external_ip(svc: m.Service, type_: str) -> str:
    spec = svc.spec
    external = list((spec.externalIPs if spec else None) or [])
    if type_ in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else NONE
    if type_ == "LoadBalancer":
        addresses = _load_balancer_addresses(svc.status)
        if external:
            return ",".join([*addresses, *external])
        return ",".join(addresses) if addresses else "<pending>"
    if type_ == "ExternalName":
        return (spec.externalName if spec else None) or ""
    return UNKNOWN


def _service_ports(ports: Sequence[m.ServicePort] | None) -> str:
    pieces = []
    for port in ports or ():
        protocol = port.protocol or "TCP"
        if port.nodePort:
            pieces.append(f"{port.port}:{port.nodePort}/{protocol}")
        else:
            pieces.append(f"{port.port}/{protocol}")
    return ",".join(pieces) or NONE


def _service_cells(svc: m.Service, now: float) -> list[Cell]:
    spec = svc.spec
    type_ = (spec.type if spec else None) or "ClusterIP"
    cluster_ips = (spec.clusterIPs if spec else None) or []
    cluster_ip = (cluster_ips[0] if cluster_ips else None) or (spec.clusterIP if spec else None) or NONE
    return [
        name_of(svc),
        type_,
        cluster_ip,
        _service_external_ip(svc, type_),
        _service_ports(spec.ports if spec else None),
        age(created(svc), now),
        format_labels(spec.selector if spec else None),
    ]


_SERVICE = Printer(
    (
        name_col(),
        Col("Type", description="How the service is exposed."),
        Col("Cluster-IP", description="The service's cluster-internal address."),
        Col("External-IP", description="Addresses reachable from outside the cluster."),
        Col("Port(s)", description="Service ports, with node ports where allocated."),
        AGE,
        Col("Selector", description="The labels picking the backing pods.", priority=1),
    ),
    cells(_service_cells),
)


PRINTERS: Printers = {
    apps_v1.Deployment: _DEPLOYMENT,
    apps_v1.ReplicaSet: _REPLICA_SET,
    apps_v1.StatefulSet: _STATEFUL_SET,
    apps_v1.DaemonSet: _DAEMON_SET,
    batch_v1.Job: _JOB,
    core_v1.ReplicationController: _REPLICATION_CONTROLLER,
    core_v1.Service: _SERVICE,
}
