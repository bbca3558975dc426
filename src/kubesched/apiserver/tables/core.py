"""Printers of the core kinds kube-apiserver prints its own way: pods (the STATUS kubectl shows),
nodes, namespaces and events."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from lightkube.models import core_v1 as m
from lightkube.models import events_v1 as events_m
from lightkube.resources import core_v1, events_v1

from kubesched.api.objects import name_of
from kubesched.apiserver.tables.printing import (
    AGE,
    NONE,
    UNKNOWN,
    Cell,
    Col,
    Printer,
    Printers,
    Row,
    age,
    as_int,
    being_deleted,
    cells,
    created,
    is_zero,
    name_col,
)

_POD_COMPLETED = [
    {"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}
]
_POD_FAILED = [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
_NODE_LOST = "NodeLost"

C = TypeVar("C", m.PodCondition, m.NodeCondition)


def _condition(conditions: Iterable[C] | None, type_: str) -> C | None:
    for cond in conditions or ():
        if cond.type == type_:
            return cond
    return None


def _later(current: datetime | None, candidate: datetime | None) -> datetime | None:
    if candidate is None or is_zero(candidate):
        return current
    if current is None or candidate > current:
        return candidate
    return current


def _finished_at(status: m.ContainerStatus) -> datetime | None:
    last = status.lastState
    term = last.terminated if last else None
    return term.finishedAt if term else None


def _terminated_reason(term: m.ContainerStateTerminated, prefix: str) -> str:
    if term.reason:
        return f"{prefix}{term.reason}"
    if term.signal:
        return f"{prefix}Signal:{term.signal}"
    return f"{prefix}ExitCode:{term.exitCode}"


@dataclass
class _Tally:
    """What the pod's container statuses add up to, as kubectl's pod printer counts it."""

    reason: str
    ready: int = 0
    restarts: int = 0
    last_restart: datetime | None = None
    sidecar_restarts: int = 0
    last_sidecar_restart: datetime | None = None
    initializing: bool = False


def _count_init_containers(tally: _Tally, status: m.PodStatus | None, init_specs: list[m.Container]) -> None:
    """Restarts of the init containers (and their sidecars'), the ready sidecars, and the reason
    of the first init container not done (its index when it says nothing)."""
    sidecars = {c.name for c in init_specs if c.restartPolicy == "Always"}
    for index, cs in enumerate((status.initContainerStatuses if status else None) or []):
        count = as_int(cs.restartCount)
        finished = _finished_at(cs)
        tally.restarts += count
        tally.last_restart = _later(tally.last_restart, finished)
        is_sidecar = cs.name in sidecars
        if is_sidecar:
            tally.sidecar_restarts += count
            tally.last_sidecar_restart = _later(tally.last_sidecar_restart, finished)
        state = cs.state
        term = state.terminated if state else None
        waiting = state.waiting if state else None
        if term is not None and term.exitCode == 0:
            continue
        if is_sidecar and cs.started:
            if cs.ready:
                tally.ready += 1
            continue
        if term is not None:
            tally.reason = _terminated_reason(term, "Init:")
        elif waiting is not None and waiting.reason and waiting.reason != "PodInitializing":
            tally.reason = "Init:" + waiting.reason
        else:
            tally.reason = f"Init:{index}/{len(init_specs)}"
        tally.initializing = True
        return


def _count_containers(tally: _Tally, status: m.PodStatus | None, conditions: list[m.PodCondition]) -> None:
    """Restarts (the sidecars' and the containers'), ready containers, and the reason the
    containers give, the first container's state having the last word."""
    tally.restarts = tally.sidecar_restarts
    tally.last_restart = tally.last_sidecar_restart
    has_running = False
    for cs in reversed((status.containerStatuses if status else None) or []):
        tally.restarts += as_int(cs.restartCount)
        tally.last_restart = _later(tally.last_restart, _finished_at(cs))
        state = cs.state
        term = state.terminated if state else None
        waiting = state.waiting if state else None
        if waiting is not None and waiting.reason:
            tally.reason = waiting.reason
        elif term is not None:
            tally.reason = _terminated_reason(term, "")
        elif cs.ready and state is not None and state.running is not None:
            has_running = True
            tally.ready += 1
    if tally.reason == "Completed" and has_running:
        pod_ready = _condition(conditions, "Ready")
        tally.reason = "Running" if pod_ready is not None and pod_ready.status == "True" else "NotReady"


def _readiness_gates(spec: m.PodSpec | None, conditions: list[m.PodCondition]) -> str:
    gates = (spec.readinessGates if spec else None) or []
    if not gates:
        return NONE
    passed = 0
    for gate in gates:
        cond = _condition(conditions, gate.conditionType)
        if cond is not None and cond.status == "True":
            passed += 1
    return f"{passed}/{len(gates)}"


def _pod_row(pod: m.Pod, now: float) -> Row:
    spec = pod.spec
    status = pod.status
    containers = (spec.containers if spec else None) or []
    init_specs = (spec.initContainers if spec else None) or []
    conditions = (status.conditions if status else None) or []
    phase = (status.phase if status else None) or ""
    status_reason = (status.reason if status else None) or ""
    total = len(containers) + sum(1 for c in init_specs if c.restartPolicy == "Always")
    tally = _Tally(reason=status_reason or phase)
    if any(c.type == "PodScheduled" and c.reason == "SchedulingGated" for c in conditions):
        tally.reason = "SchedulingGated"
    _count_init_containers(tally, status, init_specs)
    initialized = _condition(conditions, "Initialized")
    if not tally.initializing or (initialized is not None and initialized.status == "True"):
        _count_containers(tally, status, conditions)
    if being_deleted(pod):
        if status_reason == _NODE_LOST:
            tally.reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            tally.reason = "Terminating"
    restarts_cell = str(tally.restarts)
    if tally.restarts and tally.last_restart is not None:
        restarts_cell = f"{tally.restarts} ({age(tally.last_restart, now)} ago)"
    pod_ips = (status.podIPs if status else None) or []
    cells: list[Cell] = [
        name_of(pod),
        f"{tally.ready}/{total}",
        tally.reason,
        restarts_cell,
        age(created(pod), now),
        (pod_ips[0].ip if pod_ips else None) or (status.podIP if status else None) or NONE,
        (spec.nodeName if spec else None) or NONE,
        (status.nominatedNodeName if status else None) or NONE,
        _readiness_gates(spec, conditions),
    ]
    row_conditions = _POD_COMPLETED if phase == "Succeeded" else _POD_FAILED if phase == "Failed" else None
    return cells, row_conditions


_POD = Printer(
    (
        name_col(),
        Col("Ready", description="Ready containers over all containers."),
        Col("Status", description="A one-word summary of the pod's and its containers' states."),
        Col("Restarts", description="Container restarts, and how long ago the latest was."),
        AGE,
        Col("IP", description="The pod's first IP address.", priority=1),
        Col("Node", description="The node the pod is bound to.", priority=1),
        Col("Nominated Node", description="The node a preemption has reserved room on.", priority=1),
        Col("Readiness Gates", description="Readiness gates met over readiness gates declared.", priority=1),
    ),
    _pod_row,
)


_ROLE_PREFIX = "node-role.kubernetes.io/"
_ROLE_LABEL = "kubernetes.io/role"


def _node_roles(labels: Mapping[str, str] | None) -> list[str]:
    """Sorted roles from ``node-role.kubernetes.io/<role>`` keys and the ``kubernetes.io/role`` value."""
    roles: set[str] = set()
    for key, value in (labels or {}).items():
        if key.startswith(_ROLE_PREFIX):
            if role := key[len(_ROLE_PREFIX) :]:
                roles.add(role)
        elif key == _ROLE_LABEL and value:
            roles.add(value)
    return sorted(roles)


def _node_address(status: m.NodeStatus | None, type_: str) -> str:
    for address in (status.addresses if status else None) or []:
        if address.type == type_:
            return str(address.address)
    return NONE


def _node_cells(node: m.Node, now: float) -> list[Cell]:
    status = node.status
    ready = _condition(status.conditions if status else None, "Ready")
    states = ["Unknown"] if ready is None else ["Ready" if ready.status == "True" else "NotReady"]
    if node.spec and node.spec.unschedulable:
        states.append("SchedulingDisabled")
    info = status.nodeInfo if status else None
    meta = node.metadata
    return [
        name_of(node),
        ",".join(states),
        ",".join(_node_roles(meta.labels if meta else None)) or NONE,
        age(created(node), now),
        (info.kubeletVersion if info else None) or "",
        _node_address(status, "InternalIP"),
        _node_address(status, "ExternalIP"),
        (info.osImage if info else None) or UNKNOWN,
        (info.kernelVersion if info else None) or UNKNOWN,
        (info.containerRuntimeVersion if info else None) or UNKNOWN,
    ]


_NODE = Printer(
    (
        name_col("The node's name."),
        Col("Status", description="Readiness, and whether new pods may be scheduled."),
        Col("Roles", description="Roles taken from the node-role labels."),
        AGE,
        Col("Version", description="The kubelet's version."),
        Col("Internal-IP", description="The node's first internal address.", priority=1),
        Col("External-IP", description="The node's first external address.", priority=1),
        Col("OS-Image", description="The operating system image the node reports.", priority=1),
        Col("Kernel-Version", description="The kernel version the node reports.", priority=1),
        Col("Container-Runtime", description="The container runtime and its version.", priority=1),
    ),
    cells(_node_cells),
)

_NAMESPACE: Printer[m.Namespace] = Printer(
    (name_col("The namespace's name."), Col("Status", description="The namespace's phase."), AGE),
    cells(lambda ns, now: [name_of(ns), (ns.status.phase if ns.status else None) or "", age(created(ns), now)]),
)


@dataclass(frozen=True)
class _EventView:
    first: datetime | None
    last: datetime | None
    event_time: datetime | None
    series: m.EventSeries | events_m.EventSeries | None
    count: int
    ref: m.ObjectReference | None
    type: str
    reason: str
    message: str
    source: m.EventSource | None
    controller: str
    instance: str


def _event_view(ev: m.Event | events_m.Event) -> _EventView:
    if isinstance(ev, events_m.Event):
        return _EventView(
            first=ev.deprecatedFirstTimestamp,
            last=ev.deprecatedLastTimestamp,
            event_time=ev.eventTime,
            series=ev.series,
            count=as_int(ev.deprecatedCount),
            ref=ev.regarding,
            type=ev.type or "",
            reason=ev.reason or "",
            message=ev.note or "",
            source=ev.deprecatedSource,
            controller=ev.reportingController or "",
            instance=ev.reportingInstance or "",
        )
    return _EventView(
        first=ev.firstTimestamp,
        last=ev.lastTimestamp,
        event_time=ev.eventTime,
        series=ev.series,
        count=as_int(ev.count),
        ref=ev.involvedObject,
        type=ev.type or "",
        reason=ev.reason or "",
        message=ev.message or "",
        source=ev.source,
        controller=ev.reportingComponent or "",
        instance=ev.reportingInstance or "",
    )


def _event_cells(ev: m.Event | events_m.Event, now: float) -> list[Cell]:
    view = _event_view(ev)
    first = age(view.event_time if is_zero(view.first) else view.first, now)
    last = first if is_zero(view.last) else age(view.last, now)
    count = view.count
    if view.series is not None:
        last = age(view.series.lastObservedTime, now)
        count = as_int(view.series.count)
    elif count == 0:
        count = 1  # a one-off event of the new API carries no count
    ref = view.ref
    ref_kind = ((ref.kind if ref else None) or "").lower()
    ref_name = (ref.name if ref else None) or ""
    target = f"{ref_kind}/{ref_name}" if ref_name else ref_kind
    component = (view.source.component if view.source else None) or view.controller
    host = (view.source.host if view.source else None) or view.instance
    source = f"{component}, {host}" if host else component
    return [
        last,
        view.type,
        view.reason,
        target,
        (ref.fieldPath if ref else None) or "",
        source,
        view.message.strip(),
        first,
        count,
        name_of(ev),
    ]


_EVENT = Printer(
    (
        Col("Last Seen", description="Time since the event was last observed."),
        Col("Type", description="Normal or Warning."),
        Col("Reason", description="A short machine-readable reason."),
        Col("Object", description="The object the event is about, as kind/name."),
        Col("Subobject", description="The part of the object concerned, if any.", priority=1),
        Col("Source", description="The component that reported the event.", priority=1),
        Col("Message", description="The human-readable description."),
        Col("First Seen", description="Time since the event was first observed.", priority=1),
        Col("Count", description="How many times the event was observed.", priority=1),
        Col("Name", format="name", description="The event object's name.", priority=1),
    ),
    cells(_event_cells),
)


PRINTERS: Printers = {
    core_v1.Pod: _POD,
    core_v1.Node: _NODE,
    core_v1.Namespace: _NAMESPACE,
    core_v1.Event: _EVENT,
    events_v1.Event: _EVENT,
}
