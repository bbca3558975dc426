"""Server-side `meta.k8s.io/v1` `Table` output, the form `kubectl get` asks for.

kubectl sends ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...`` and prints whatever
columns come back, hiding those with a non-zero ``priority`` unless ``-o wide`` is given. So the
columns and the text of every cell are decided here, to match what a real API server prints for
each kind (kube-apiserver's internal printers): pod status such as ``CrashLoopBackOff`` or
``Init:0/2``, node status such as ``Ready,SchedulingDisabled``, ages such as ``3m20s``.

Ages are measured against ``now`` (epoch seconds) handed in by the caller, never the wall clock,
so a server running on a virtual clock prints virtual ages.

Kinds without a dedicated printer get the generic two-column table (``Name``, ``Created At``)
that upstream uses for such resources.

Public entry points: `table`, `parse_include_object`, `columns`,
`human_duration`, `short_human_duration`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import msgspec
from lightkube.resources import (
    apps_v1,
    batch_v1,
    coordination_v1,
    core_v1,
    events_v1,
    policy_v1,
    rbac_authorization_v1,
    resource_v1,
    scheduling_v1,
    storage_v1,
)

from kubesched.cluster.errors import BadRequest
from kubesched.cluster.kinds import Kind
from kubesched.cluster.legacy import PodDisruptionBudgetV1beta1

__all__ = [
    "INCLUDE_METADATA",
    "INCLUDE_NONE",
    "INCLUDE_OBJECT",
    "TABLE_API_VERSION",
    "TABLE_CONTENT_TYPE",
    "columns",
    "human_duration",
    "parse_include_object",
    "short_human_duration",
    "table",
]

TABLE_API_VERSION: Final = "meta.k8s.io/v1"
TABLE_CONTENT_TYPE: Final = "application/json;as=Table;v=v1;g=meta.k8s.io"
"""The `Content-Type` a Table response carries (upstream echoes the negotiated media type)."""

INCLUDE_NONE: Final = "None"
INCLUDE_METADATA: Final = "Metadata"
INCLUDE_OBJECT: Final = "Object"
_INCLUDE_VALUES = (INCLUDE_NONE, INCLUDE_METADATA, INCLUDE_OBJECT)

_NONE = "<none>"
_UNKNOWN = "<unknown>"
_UNSET = "<unset>"


# ---------------------------------------------------------------------------------------------
# Durations


def short_human_duration(seconds: float) -> str:
    """A one-unit age, as apimachinery's ``ShortHumanDuration``: ``45s``, ``12m``, ``5h``, ``3d``, ``2y``.

    Up to a second in the future counts as ``0s`` (clock skew); further is ``<invalid>``.
    """
    whole = int(seconds)  # truncates toward zero, like Go's int(float)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m"
    hours = whole // 3600
    if hours < 24:
        return f"{hours}h"
    if hours < 24 * 365:
        return f"{hours // 24}d"
    return f"{hours // (24 * 365)}y"


def human_duration(seconds: float) -> str:
    """An age with two or three significant figures, as apimachinery's ``HumanDuration``.

    Seconds below 2 minutes (``90s``); minutes and seconds below 10 minutes (``3m20s``); minutes
    below 3 hours (``150m``); hours and minutes below 8 hours (``5h30m``); hours below 2 days
    (``30h``); days and hours below 8 days (``3d4h``); days below 2 years (``400d``); years and
    days below 8 years (``2y10d``); years after that. A zero remainder drops its unit (``5m``).
    """
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        rest = days % 365
        return f"{years}y{rest}d" if rest else f"{years}y"
    return f"{years}y"


def _is_zero(ts: datetime | None) -> bool:
    return ts is None or ts.year <= 1


def _age(ts: datetime | None, now: float) -> str:
    """Time since `ts` for a table cell; ``<unknown>`` for an unset timestamp."""
    if ts is None or _is_zero(ts):
        return _UNKNOWN
    return human_duration(now - ts.timestamp())


# ---------------------------------------------------------------------------------------------
# Query parameters


def parse_include_object(value: str | None) -> str:
    """The ``includeObject`` query parameter, defaulted: ``None``, ``Metadata`` (default) or ``Object``.

    Anything else is a `BadRequest`, as upstream rejects it.
    """
    if not value:
        return INCLUDE_METADATA
    if value in _INCLUDE_VALUES:
        return value
    raise BadRequest(f"includeObject: Invalid value: {value!r}: must be 'Metadata', 'Object', 'None', or empty")


# ---------------------------------------------------------------------------------------------
# Column sets


@dataclass(frozen=True)
class _Col:
    name: str
    type: str = "string"
    description: str = ""
    priority: int = 0
    format: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


def _name_col(description: str = "The object's name, unique within its namespace and kind.") -> _Col:
    return _Col("Name", format="name", description=description)


_AGE = _Col("Age", description="Time since the object was created.")
_CONTAINERS = _Col("Containers", description="Container names of the pod template.", priority=1)
_IMAGES = _Col("Images", description="Container images of the pod template.", priority=1)
_SELECTOR = _Col("Selector", description="The label selector picking the managed pods.", priority=1)

Row = tuple[list[Any], list[dict[str, str]] | None]
RowFn = Callable[[Any, float], Row]


@dataclass(frozen=True)
class _Printer:
    columns: tuple[_Col, ...]
    row: RowFn


def _cells(fn: Callable[[Any, float], list[Any]]) -> RowFn:
    def row(obj: Any, now: float) -> Row:
        return fn(obj, now), None

    return row


def _name(obj: Any) -> str:
    meta = obj.metadata
    return (meta.name if meta else None) or ""


def _created(obj: Any) -> datetime | None:
    meta = obj.metadata
    return meta.creationTimestamp if meta else None


def _deleting(obj: Any) -> bool:
    meta = obj.metadata
    return bool(meta and meta.deletionTimestamp)


def _int(value: int | None) -> int:
    return int(value or 0)


# ---------------------------------------------------------------------------------------------
# Pods

_POD_COMPLETED = [
    {"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}
]
_POD_FAILED = [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
_NODE_LOST = "NodeLost"


def _condition(conditions: Iterable[Any] | None, type_: str) -> Any | None:
    for cond in conditions or ():
        if cond.type == type_:
            return cond
    return None


def _later(current: datetime | None, candidate: datetime | None) -> datetime | None:
    if candidate is None or _is_zero(candidate):
        return current
    if current is None or candidate > current:
        return candidate
    return current


def _finished_at(status: Any) -> datetime | None:
    last = status.lastState
    term = last.terminated if last else None
    return term.finishedAt if term else None


def _terminated_reason(term: Any, prefix: str) -> str:
    if term.reason:
        return f"{prefix}{term.reason}"
    if term.signal:
        return f"{prefix}Signal:{term.signal}"
    return f"{prefix}ExitCode:{term.exitCode}"


def _pod_row(pod: Any, now: float) -> Row:
    spec = pod.spec
    status = pod.status
    containers = (spec.containers if spec else None) or []
    init_specs = (spec.initContainers if spec else None) or []
    conditions = (status.conditions if status else None) or []
    phase = (status.phase if status else None) or ""
    status_reason = (status.reason if status else None) or ""

    sidecars = {c.name for c in init_specs if c.restartPolicy == "Always"}
    total = len(containers) + sum(1 for c in init_specs if c.restartPolicy == "Always")
    ready = 0
    reason = status_reason or phase
    if any(c.type == "PodScheduled" and c.reason == "SchedulingGated" for c in conditions):
        reason = "SchedulingGated"

    restarts = 0
    sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None
    initializing = False
    init_statuses = (status.initContainerStatuses if status else None) or []
    for index, cs in enumerate(init_statuses):
        count = _int(cs.restartCount)
        finished = _finished_at(cs)
        restarts += count
        last_restart = _later(last_restart, finished)
        is_sidecar = cs.name in sidecars
        if is_sidecar:
            sidecar_restarts += count
            last_sidecar_restart = _later(last_sidecar_restart, finished)
        state = cs.state
        term = state.terminated if state else None
        waiting = state.waiting if state else None
        if term is not None and term.exitCode == 0:
            continue
        if is_sidecar and cs.started:
            if cs.ready:
                ready += 1
            continue
        if term is not None:
            reason = _terminated_reason(term, "Init:")
        elif waiting is not None and waiting.reason and waiting.reason != "PodInitializing":
            reason = "Init:" + waiting.reason
        else:
            reason = f"Init:{index}/{len(init_specs)}"
        initializing = True
        break

    initialized = _condition(conditions, "Initialized")
    if not initializing or (initialized is not None and initialized.status == "True"):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        # Walk backwards so that the first container's state has the last word.
        for cs in reversed((status.containerStatuses if status else None) or []):
            restarts += _int(cs.restartCount)
            last_restart = _later(last_restart, _finished_at(cs))
            state = cs.state
            term = state.terminated if state else None
            waiting = state.waiting if state else None
            if waiting is not None and waiting.reason:
                reason = waiting.reason
            elif term is not None:
                reason = _terminated_reason(term, "")
            elif cs.ready and state is not None and state.running is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = _condition(conditions, "Ready")
            reason = "Running" if pod_ready is not None and pod_ready.status == "True" else "NotReady"

    if _deleting(pod):
        if status_reason == _NODE_LOST:
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"

    restarts_cell = str(restarts)
    if restarts and last_restart is not None:
        restarts_cell = f"{restarts} ({_age(last_restart, now)} ago)"

    pod_ips = (status.podIPs if status else None) or []
    ip = (pod_ips[0].ip if pod_ips else None) or (status.podIP if status else None) or _NONE
    node = (spec.nodeName if spec else None) or _NONE
    nominated = (status.nominatedNodeName if status else None) or _NONE
    gates = (spec.readinessGates if spec else None) or []
    gates_cell = _NONE
    if gates:
        passed = 0
        for gate in gates:
            cond = _condition(conditions, gate.conditionType)
            if cond is not None and cond.status == "True":
                passed += 1
        gates_cell = f"{passed}/{len(gates)}"

    cells = [
        _name(pod),
        f"{ready}/{total}",
        reason,
        restarts_cell,
        _age(_created(pod), now),
        ip,
        node,
        nominated,
        gates_cell,
    ]
    row_conditions = _POD_COMPLETED if phase == "Succeeded" else _POD_FAILED if phase == "Failed" else None
    return cells, row_conditions


_POD = _Printer(
    (
        _name_col(),
        _Col("Ready", description="Ready containers over all containers."),
        _Col("Status", description="A one-word summary of the pod's and its containers' states."),
        _Col("Restarts", description="Container restarts, and how long ago the latest was."),
        _AGE,
        _Col("IP", description="The pod's first IP address.", priority=1),
        _Col("Node", description="The node the pod is bound to.", priority=1),
        _Col("Nominated Node", description="The node a preemption has reserved room on.", priority=1),
        _Col("Readiness Gates", description="Readiness gates met over readiness gates declared.", priority=1),
    ),
    _pod_row,
)


# ---------------------------------------------------------------------------------------------
# Nodes and namespaces

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


def _node_address(status: Any, type_: str) -> str:
    for address in (status.addresses if status else None) or []:
        if address.type == type_:
            return str(address.address)
    return _NONE


def _node_cells(node: Any, now: float) -> list[Any]:
    status = node.status
    ready = _condition(status.conditions if status else None, "Ready")
    states = ["Unknown"] if ready is None else ["Ready" if ready.status == "True" else "NotReady"]
    if node.spec and node.spec.unschedulable:
        states.append("SchedulingDisabled")
    info = status.nodeInfo if status else None
    meta = node.metadata
    return [
        _name(node),
        ",".join(states),
        ",".join(_node_roles(meta.labels if meta else None)) or _NONE,
        _age(_created(node), now),
        (info.kubeletVersion if info else None) or "",
        _node_address(status, "InternalIP"),
        _node_address(status, "ExternalIP"),
        (info.osImage if info else None) or _UNKNOWN,
        (info.kernelVersion if info else None) or _UNKNOWN,
        (info.containerRuntimeVersion if info else None) or _UNKNOWN,
    ]


_NODE = _Printer(
    (
        _name_col("The node's name."),
        _Col("Status", description="Readiness, and whether new pods may be scheduled."),
        _Col("Roles", description="Roles taken from the node-role labels."),
        _AGE,
        _Col("Version", description="The kubelet's version."),
        _Col("Internal-IP", description="The node's first internal address.", priority=1),
        _Col("External-IP", description="The node's first external address.", priority=1),
        _Col("OS-Image", description="The operating system image the node reports.", priority=1),
        _Col("Kernel-Version", description="The kernel version the node reports.", priority=1),
        _Col("Container-Runtime", description="The container runtime and its version.", priority=1),
    ),
    _cells(_node_cells),
)

_NAMESPACE = _Printer(
    (_name_col("The namespace's name."), _Col("Status", description="The namespace's phase."), _AGE),
    _cells(lambda ns, now: [_name(ns), (ns.status.phase if ns.status else None) or "", _age(_created(ns), now)]),
)


# ---------------------------------------------------------------------------------------------
# Events (core/v1 and events.k8s.io/v1 print alike: upstream serves both from one storage)


@dataclass(frozen=True)
class _EventView:
    first: datetime | None
    last: datetime | None
    event_time: datetime | None
    series: Any | None
    count: int
    ref: Any | None
    type: str
    reason: str
    message: str
    source: Any | None
    controller: str
    instance: str


def _event_view(ev: Any) -> _EventView:
    if isinstance(ev, events_v1.Event):
        return _EventView(
            first=ev.deprecatedFirstTimestamp,
            last=ev.deprecatedLastTimestamp,
            event_time=ev.eventTime,
            series=ev.series,
            count=_int(ev.deprecatedCount),
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
        count=_int(ev.count),
        ref=ev.involvedObject,
        type=ev.type or "",
        reason=ev.reason or "",
        message=ev.message or "",
        source=ev.source,
        controller=ev.reportingComponent or "",
        instance=ev.reportingInstance or "",
    )


def _event_cells(ev: Any, now: float) -> list[Any]:
    view = _event_view(ev)
    first = _age(view.event_time if _is_zero(view.first) else view.first, now)
    last = first if _is_zero(view.last) else _age(view.last, now)
    count = view.count
    if view.series is not None:
        last = _age(view.series.lastObservedTime, now)
        count = _int(view.series.count)
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
        _name(ev),
    ]


_EVENT = _Printer(
    (
        _Col("Last Seen", description="Time since the event was last observed."),
        _Col("Type", description="Normal or Warning."),
        _Col("Reason", description="A short machine-readable reason."),
        _Col("Object", description="The object the event is about, as kind/name."),
        _Col("Subobject", description="The part of the object concerned, if any.", priority=1),
        _Col("Source", description="The component that reported the event.", priority=1),
        _Col("Message", description="The human-readable description."),
        _Col("First Seen", description="Time since the event was first observed.", priority=1),
        _Col("Count", description="How many times the event was observed.", priority=1),
        _Col("Name", format="name", description="The event object's name.", priority=1),
    ),
    _cells(_event_cells),
)


# ---------------------------------------------------------------------------------------------
# Scheduling, policy and coordination


def _int_or_string(value: int | str | None) -> str:
    return "N/A" if value is None else str(value)


def _pdb_cells(pdb: Any, now: float) -> list[Any]:
    spec = pdb.spec
    return [
        _name(pdb),
        _int_or_string(spec.minAvailable if spec else None),
        _int_or_string(spec.maxUnavailable if spec else None),
        _int(pdb.status.disruptionsAllowed if pdb.status else None),
        _age(_created(pdb), now),
    ]


_PDB = _Printer(
    (
        _name_col(),
        _Col("Min Available", description="Pods that must stay available (a count or a percentage)."),
        _Col("Max Unavailable", description="Pods that may be unavailable (a count or a percentage)."),
        _Col("Allowed Disruptions", type="integer", description="Evictions allowed right now."),
        _AGE,
    ),
    _cells(_pdb_cells),
)

_PRIORITY_CLASS = _Printer(
    (
        _name_col("The priority class's name."),
        _Col("Value", type="integer", description="The priority pods of this class receive."),
        _Col("Global-Default", type="boolean", description="Whether pods without a class get this one."),
        _AGE,
        _Col("PreemptionPolicy", description="Whether pods of this class may preempt others."),
    ),
    _cells(
        lambda pc, now: [
            _name(pc),
            _int(pc.value),
            bool(pc.globalDefault),
            _age(_created(pc), now),
            pc.preemptionPolicy or "",
        ]
    ),
)

_LEASE = _Printer(
    (_name_col(), _Col("Holder", description="The identity holding the lease."), _AGE),
    _cells(
        lambda lease, now: [
            _name(lease),
            (lease.spec.holderIdentity if lease.spec else None) or "",
            _age(_created(lease), now),
        ]
    ),
)


_CONFIG_MAP = _Printer(
    (_name_col(), _Col("Data", type="integer", description="The number of keys."), _AGE),
    _cells(lambda cm, now: [_name(cm), len(cm.data or {}) + len(cm.binaryData or {}), _age(_created(cm), now)]),
)

_SECRET = _Printer(
    (
        _name_col(),
        _Col("Type", description="The secret's type."),
        _Col("Data", type="integer", description="The number of keys."),
        _AGE,
    ),
    _cells(
        lambda secret, now: [
            _name(secret),
            secret.type or "Opaque",
            len(secret.data or {}) + len(secret.stringData or {}),
            _age(_created(secret), now),
        ]
    ),
)

_SERVICE_ACCOUNT = _Printer(
    (_name_col(), _Col("Secrets", type="integer", description="The number of secrets."), _AGE),
    _cells(lambda sa, now: [_name(sa), len(sa.secrets or []), _age(_created(sa), now)]),
)

_ROLE_BINDING = _Printer(
    (
        _name_col(),
        _Col("Role", description="The role bound: its kind and name."),
        _AGE,
    ),
    _cells(
        lambda rb, now: [
            _name(rb),
            f"{rb.roleRef.kind}/{rb.roleRef.name}" if rb.roleRef else "",
            _age(_created(rb), now),
        ]
    ),
)


# ---------------------------------------------------------------------------------------------
# Workloads and services


def _format_labels(labels: Mapping[str, str] | None) -> str:
    """``k1=v1,k2=v2`` in key order, or ``<none>``."""
    if not labels:
        return _NONE
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


_OPERATORS = {"In": "in", "NotIn": "notin"}


def selector_string(selector: Any | None) -> str | None:
    """A `LabelSelector` in label-selector syntax (``""`` matches all); `None` if it is malformed."""
    if selector is None:
        return ""
    reqs: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in (selector.matchLabels or {}).items()]
    for expr in selector.matchExpressions or ():
        key, op, values = expr.key, expr.operator, sorted(expr.values or ())
        if op in _OPERATORS:
            if not values:
                return None
            reqs.append((key, f"{key} {_OPERATORS[op]} ({','.join(values)})"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                return None
            reqs.append((key, key if op == "Exists" else f"!{key}"))
        else:
            return None
    reqs.sort(key=lambda r: r[0])
    return ",".join(text for _, text in reqs)


def _format_selector(selector: Any | None) -> str:
    text = selector_string(selector)
    if text is None:
        return "<error>"
    return text or _NONE


def _container_cells(template: Any | None) -> list[str]:
    spec = template.spec if template else None
    containers = (spec.containers if spec else None) or []
    return [",".join(c.name or "" for c in containers), ",".join(c.image or "" for c in containers)]


def _replicas(spec: Any | None) -> int:
    """Desired replicas; unset means 1, as API defaulting would have filled in."""
    value = spec.replicas if spec else None
    return 1 if value is None else int(value)


def _deployment_cells(d: Any, now: float) -> list[Any]:
    spec, status = d.spec, d.status
    ready = _int(status.readyReplicas if status else None)
    selector = selector_string(spec.selector if spec else None)
    return [
        _name(d),
        f"{ready}/{_replicas(spec)}",
        _int(status.updatedReplicas if status else None),
        _int(status.availableReplicas if status else None),
        _age(_created(d), now),
        *_container_cells(spec.template if spec else None),
        "<invalid>" if selector is None else selector,
    ]


_DEPLOYMENT = _Printer(
    (
        _name_col(),
        _Col("Ready", description="Ready pods over desired pods."),
        _Col("Up-to-date", description="Pods running the latest template."),
        _Col("Available", description="Pods available to serve."),
        _AGE,
        _CONTAINERS,
        _IMAGES,
        _SELECTOR,
    ),
    _cells(_deployment_cells),
)


def _replica_set_cells(rs: Any, now: float) -> list[Any]:
    spec, status = rs.spec, rs.status
    return [
        _name(rs),
        _replicas(spec),
        _int(status.replicas if status else None),
        _int(status.readyReplicas if status else None),
        _age(_created(rs), now),
        *_container_cells(spec.template if spec else None),
        _format_selector(spec.selector if spec else None),
    ]


_REPLICA_COLUMNS = (
    _name_col(),
    _Col("Desired", type="integer", description="Desired pods."),
    _Col("Current", type="integer", description="Pods that exist."),
    _Col("Ready", type="integer", description="Pods that are ready."),
    _AGE,
    _CONTAINERS,
    _IMAGES,
    _SELECTOR,
)
_REPLICA_SET = _Printer(_REPLICA_COLUMNS, _cells(_replica_set_cells))


def _rc_cells(rc: Any, now: float) -> list[Any]:
    spec, status = rc.spec, rc.status
    return [
        _name(rc),
        _replicas(spec),
        _int(status.replicas if status else None),
        _int(status.readyReplicas if status else None),
        _age(_created(rc), now),
        *_container_cells(spec.template if spec else None),
        _format_labels(spec.selector if spec else None),
    ]


_REPLICATION_CONTROLLER = _Printer(_REPLICA_COLUMNS, _cells(_rc_cells))


def _stateful_set_cells(sts: Any, now: float) -> list[Any]:
    spec, status = sts.spec, sts.status
    return [
        _name(sts),
        f"{_int(status.readyReplicas if status else None)}/{_replicas(spec)}",
        _age(_created(sts), now),
        *_container_cells(spec.template if spec else None),
    ]


def _daemon_set_cells(ds: Any, now: float) -> list[Any]:
    spec, status = ds.spec, ds.status
    template = spec.template if spec else None
    node_selector = (template.spec.nodeSelector if template and template.spec else None) or {}
    return [
        _name(ds),
        _int(status.desiredNumberScheduled if status else None),
        _int(status.currentNumberScheduled if status else None),
        _int(status.numberReady if status else None),
        _int(status.updatedNumberScheduled if status else None),
        _int(status.numberAvailable if status else None),
        ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or _NONE,
        _age(_created(ds), now),
        *_container_cells(template),
        _format_selector(spec.selector if spec else None),
    ]


_DAEMON_SET = _Printer(
    (
        _name_col(),
        _Col("Desired", type="integer", description="The number of nodes that should run the daemon pod."),
        _Col("Current", type="integer", description="The number of nodes running at least one daemon pod."),
        _Col("Ready", type="integer", description="The number of nodes with a ready daemon pod."),
        _Col("Up-to-date", type="integer", description="The number of nodes running the updated daemon pod."),
        _Col("Available", type="integer", description="The number of nodes with an available daemon pod."),
        _Col("Node Selector", description="The node selector of the pod template."),
        _AGE,
        _CONTAINERS,
        _IMAGES,
        _SELECTOR,
    ),
    _cells(_daemon_set_cells),
)


def _job_status(job: Any) -> str:
    """The Status column: the job's finished condition, else Suspended, Terminating or Running."""
    conditions = {c.type for c in (job.status.conditions if job.status else None) or () if c.status == "True"}
    for type_ in ("Complete", "Failed", "FailureTarget", "SuccessCriteriaMet", "Suspended"):
        if type_ in conditions:
            return type_
    return "Terminating" if job.metadata.deletionTimestamp is not None else "Running"


def _job_cells(job: Any, now: float) -> list[Any]:
    spec, status = job.spec, job.status
    succeeded = _int(status.succeeded if status else None)
    if spec is not None and spec.completions is not None:
        completions = f"{succeeded}/{spec.completions}"
    else:
        parallelism = (spec.parallelism if spec else None) or 0
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start = status.startTime if status else None
    end = status.completionTime if status else None
    duration = "" if start is None else human_duration((end.timestamp() if end else now) - start.timestamp())
    return [
        _name(job),
        _job_status(job),
        completions,
        duration,
        _age(_created(job), now),
        *_container_cells(spec.template if spec else None),
        _format_selector(spec.selector if spec else None),
    ]


_JOB = _Printer(
    (
        _name_col(),
        _Col("Status", description="The status of the job."),
        _Col("Completions", description="The desired number of successfully finished pods the job should be run with."),
        _Col("Duration", description="Time the job took to complete, or has been running."),
        _AGE,
        _CONTAINERS,
        _IMAGES,
        _SELECTOR,
    ),
    _cells(_job_cells),
)


_STATEFUL_SET = _Printer(
    (_name_col(), _Col("Ready", description="Ready pods over desired pods."), _AGE, _CONTAINERS, _IMAGES),
    _cells(_stateful_set_cells),
)


def _load_balancer_addresses(status: Any | None) -> list[str]:
    lb = status.loadBalancer if status else None
    found: set[str] = set()
    for ingress in (lb.ingress if lb else None) or []:
        if ingress.ip:
            found.add(ingress.ip)
        elif ingress.hostname:
            found.add(ingress.hostname)
    return sorted(found)


def _service_external_ip(svc: Any, type_: str) -> str:
    spec = svc.spec
    external = list((spec.externalIPs if spec else None) or [])
    if type_ in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else _NONE
    if type_ == "LoadBalancer":
        addresses = _load_balancer_addresses(svc.status)
        if external:
            return ",".join([*addresses, *external])
        return ",".join(addresses) if addresses else "<pending>"
    if type_ == "ExternalName":
        return (spec.externalName if spec else None) or ""
    return _UNKNOWN


def _service_ports(ports: Sequence[Any] | None) -> str:
    pieces = []
    for port in ports or ():
        protocol = port.protocol or "TCP"
        if port.nodePort:
            pieces.append(f"{port.port}:{port.nodePort}/{protocol}")
        else:
            pieces.append(f"{port.port}/{protocol}")
    return ",".join(pieces) or _NONE


def _service_cells(svc: Any, now: float) -> list[Any]:
    spec = svc.spec
    type_ = (spec.type if spec else None) or "ClusterIP"
    cluster_ips = (spec.clusterIPs if spec else None) or []
    cluster_ip = (cluster_ips[0] if cluster_ips else None) or (spec.clusterIP if spec else None) or _NONE
    return [
        _name(svc),
        type_,
        cluster_ip,
        _service_external_ip(svc, type_),
        _service_ports(spec.ports if spec else None),
        _age(_created(svc), now),
        _format_labels(spec.selector if spec else None),
    ]


_SERVICE = _Printer(
    (
        _name_col(),
        _Col("Type", description="How the service is exposed."),
        _Col("Cluster-IP", description="The service's cluster-internal address."),
        _Col("External-IP", description="Addresses reachable from outside the cluster."),
        _Col("Port(s)", description="Service ports, with node ports where allocated."),
        _AGE,
        _Col("Selector", description="The labels picking the backing pods.", priority=1),
    ),
    _cells(_service_cells),
)


# ---------------------------------------------------------------------------------------------
# Storage

_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
_DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def _access_modes(modes: Iterable[str] | None) -> str:
    present = set(modes or ())
    return ",".join(short for mode, short in _ACCESS_MODES if mode in present)


def _storage_class_of(obj: Any, spec: Any | None) -> str:
    annotations = (obj.metadata.annotations if obj.metadata else None) or {}
    if _STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[_STORAGE_CLASS_ANNOTATION])
    return (spec.storageClassName if spec else None) or ""


def _storage(resources: Mapping[str, Any] | None) -> str:
    value = (resources or {}).get("storage")
    return "0" if value is None else str(value)


def _pv_cells(pv: Any, now: float) -> list[Any]:
    spec, status = pv.spec, pv.status
    claim = spec.claimRef if spec else None
    claim_cell = f"{claim.namespace or ''}/{claim.name or ''}" if claim else ""
    phase = "Terminating" if _deleting(pv) else (status.phase if status else None) or ""
    return [
        _name(pv),
        _storage(spec.capacity if spec else None),
        _access_modes(spec.accessModes if spec else None),
        (spec.persistentVolumeReclaimPolicy if spec else None) or "",
        phase,
        claim_cell,
        _storage_class_of(pv, spec),
        (spec.volumeAttributesClassName if spec else None) or _UNSET,
        (status.reason if status else None) or "",
        _age(_created(pv), now),
        (spec.volumeMode if spec else None) or _UNSET,
    ]


_PERSISTENT_VOLUME = _Printer(
    (
        _name_col(),
        _Col("Capacity", description="The volume's storage capacity."),
        _Col("Access Modes", description="How the volume may be mounted."),
        _Col("Reclaim Policy", description="What happens to the volume when its claim goes."),
        _Col("Status", description="The volume's phase."),
        _Col("Claim", description="The claim bound to the volume, as namespace/name."),
        _Col("StorageClass", description="The volume's storage class."),
        _Col("VolumeAttributesClass", description="The volume's attributes class."),
        _Col("Reason", description="Why the volume is in its phase."),
        _AGE,
        _Col("VolumeMode", description="Filesystem or Block.", priority=1),
    ),
    _cells(_pv_cells),
)


def _pvc_cells(pvc: Any, now: float) -> list[Any]:
    spec, status = pvc.spec, pvc.status
    volume = (spec.volumeName if spec else None) or ""
    capacity = access = ""
    if volume:
        capacity = _storage(status.capacity if status else None)
        access = _access_modes(status.accessModes if status else None)
    phase = "Terminating" if _deleting(pvc) else (status.phase if status else None) or ""
    return [
        _name(pvc),
        phase,
        volume,
        capacity,
        access,
        _storage_class_of(pvc, spec),
        (spec.volumeAttributesClassName if spec else None) or _UNSET,
        _age(_created(pvc), now),
        (spec.volumeMode if spec else None) or _UNSET,
    ]


_PERSISTENT_VOLUME_CLAIM = _Printer(
    (
        _name_col(),
        _Col("Status", description="The claim's phase."),
        _Col("Volume", description="The volume bound to the claim."),
        _Col("Capacity", description="The bound volume's capacity."),
        _Col("Access Modes", description="How the bound volume may be mounted."),
        _Col("StorageClass", description="The claim's storage class."),
        _Col("VolumeAttributesClass", description="The claim's attributes class."),
        _AGE,
        _Col("VolumeMode", description="Filesystem or Block.", priority=1),
    ),
    _cells(_pvc_cells),
)


def _storage_class_cells(sc: Any, now: float) -> list[Any]:
    annotations = (sc.metadata.annotations if sc.metadata else None) or {}
    name = _name(sc)
    if any(annotations.get(key) == "true" for key in _DEFAULT_CLASS_ANNOTATIONS):
        name += " (default)"
    return [
        name,
        sc.provisioner or "",
        sc.reclaimPolicy or "Delete",
        sc.volumeBindingMode or "Immediate",
        bool(sc.allowVolumeExpansion),
        _age(_created(sc), now),
    ]


_STORAGE_CLASS = _Printer(
    (
        _name_col(),
        _Col("Provisioner", description="The driver that provisions volumes of this class."),
        _Col("ReclaimPolicy", description="The reclaim policy of volumes it provisions."),
        _Col("VolumeBindingMode", description="When claims are bound and provisioned."),
        _Col("AllowVolumeExpansion", description="Whether claims of this class may grow."),
        _AGE,
    ),
    _cells(_storage_class_cells),
)

_CSI_NODE = _Printer(
    (_name_col(), _Col("Drivers", type="integer", description="CSI drivers registered on the node."), _AGE),
    _cells(lambda n, now: [_name(n), len((n.spec.drivers if n.spec else None) or ()), _age(_created(n), now)]),
)


def _csi_driver_cells(d: Any, now: float) -> list[Any]:
    spec = d.spec
    attach = True if spec is None or spec.attachRequired is None else bool(spec.attachRequired)
    tokens = spec.tokenRequests if spec else None
    modes = ",".join((spec.volumeLifecycleModes if spec else None) or ())
    return [
        _name(d),
        attach,
        bool(spec and spec.podInfoOnMount),
        bool(spec and spec.storageCapacity),
        _UNSET if tokens is None else ",".join(t.audience or "" for t in tokens),
        bool(spec and spec.requiresRepublish),
        modes or _NONE,
        _age(_created(d), now),
    ]


_CSI_DRIVER = _Printer(
    (
        _name_col(),
        _Col("AttachRequired", type="boolean", description="Whether volumes need an attach step."),
        _Col("PodInfoOnMount", type="boolean", description="Whether mounts receive pod information."),
        _Col("StorageCapacity", type="boolean", description="Whether the scheduler checks capacity."),
        _Col("TokenRequests", description="Audiences of service account tokens passed on mount."),
        _Col("RequiresRepublish", type="boolean", description="Whether volumes are re-published periodically."),
        _Col("Modes", description="Volume lifecycle modes supported."),
        _AGE,
    ),
    _cells(_csi_driver_cells),
)

_CSI_STORAGE_CAPACITY = _Printer(
    (
        _name_col(),
        _Col("StorageClassName", description="The storage class the capacity is for."),
        _Col("Capacity", description="Capacity available in the topology segment."),
    ),
    _cells(lambda c, now: [_name(c), c.storageClassName or "", _UNSET if c.capacity is None else str(c.capacity)]),
)


def _volume_attachment_cells(va: Any, now: float) -> list[Any]:
    spec = va.spec
    source = spec.source if spec else None
    return [
        _name(va),
        (spec.attacher if spec else None) or "",
        (source.persistentVolumeName if source else None) or "",
        (spec.nodeName if spec else None) or "",
        bool(va.status and va.status.attached),
        _age(_created(va), now),
    ]


_VOLUME_ATTACHMENT = _Printer(
    (
        _name_col(),
        _Col("Attacher", format="name", description="The driver attaching the volume."),
        _Col("PV", description="The persistent volume attached."),
        _Col("Node", description="The node it is attached to."),
        _Col("Attached", type="boolean", description="Whether the attach has completed."),
        _AGE,
    ),
    _cells(_volume_attachment_cells),
)


# ---------------------------------------------------------------------------------------------
# Dynamic resource allocation


def _claim_state(claim: Any) -> str:
    states = []
    deleting = _deleting(claim)
    if deleting:
        states.append("deleted")
    status = claim.status
    if status is None or status.allocation is None:
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if status.reservedFor:
            states.append("reserved")
    return ",".join(states)


_RESOURCE_CLAIM = _Printer(
    (_name_col(), _Col("State", description="Deleted, pending, allocated and/or reserved."), _AGE),
    _cells(lambda c, now: [_name(c), _claim_state(c), _age(_created(c), now)]),
)


def _resource_slice_cells(s: Any, now: float) -> list[Any]:
    spec = s.spec
    pool = spec.pool if spec else None
    return [
        _name(s),
        (spec.nodeName if spec else None) or "",
        (spec.driver if spec else None) or "",
        (pool.name if pool else None) or "",
        _age(_created(s), now),
    ]


_RESOURCE_SLICE = _Printer(
    (
        _name_col(),
        _Col("Node", description="The node whose devices the slice lists."),
        _Col("Driver", description="The driver publishing the slice."),
        _Col("Pool", description="The device pool the slice belongs to."),
        _AGE,
    ),
    _cells(_resource_slice_cells),
)

_DEVICE_CLASS = _Printer((_name_col(), _AGE), _cells(lambda c, now: [_name(c), _age(_created(c), now)]))


# ---------------------------------------------------------------------------------------------
# The generic table


def _created_at(obj: Any, now: float) -> list[Any]:
    ts = _created(obj)
    stamp = "0001-01-01T00:00:00Z" if ts is None else ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [_name(obj), stamp]


_DEFAULT = _Printer(
    (_name_col(), _Col("Created At", type="date", description="When the object was created.")),
    _cells(_created_at),
)

_PRINTERS: dict[type[Any], _Printer] = {
    core_v1.Pod: _POD,
    core_v1.Node: _NODE,
    core_v1.Namespace: _NAMESPACE,
    core_v1.Event: _EVENT,
    events_v1.Event: _EVENT,
    policy_v1.PodDisruptionBudget: _PDB,
    PodDisruptionBudgetV1beta1: _PDB,
    scheduling_v1.PriorityClass: _PRIORITY_CLASS,
    coordination_v1.Lease: _LEASE,
    apps_v1.Deployment: _DEPLOYMENT,
    apps_v1.ReplicaSet: _REPLICA_SET,
    apps_v1.StatefulSet: _STATEFUL_SET,
    apps_v1.DaemonSet: _DAEMON_SET,
    batch_v1.Job: _JOB,
    core_v1.ReplicationController: _REPLICATION_CONTROLLER,
    core_v1.Service: _SERVICE,
    core_v1.PersistentVolume: _PERSISTENT_VOLUME,
    core_v1.PersistentVolumeClaim: _PERSISTENT_VOLUME_CLAIM,
    storage_v1.StorageClass: _STORAGE_CLASS,
    storage_v1.CSINode: _CSI_NODE,
    storage_v1.CSIDriver: _CSI_DRIVER,
    storage_v1.CSIStorageCapacity: _CSI_STORAGE_CAPACITY,
    storage_v1.VolumeAttachment: _VOLUME_ATTACHMENT,
    resource_v1.ResourceClaim: _RESOURCE_CLAIM,
    resource_v1.ResourceSlice: _RESOURCE_SLICE,
    resource_v1.DeviceClass: _DEVICE_CLASS,
    core_v1.ConfigMap: _CONFIG_MAP,
    core_v1.Secret: _SECRET,
    core_v1.ServiceAccount: _SERVICE_ACCOUNT,
    rbac_authorization_v1.RoleBinding: _ROLE_BINDING,
    rbac_authorization_v1.ClusterRoleBinding: _ROLE_BINDING,
}


def _printer(kind: Kind) -> _Printer:
    found = _PRINTERS.get(kind.cls)
    if found is not None:
        return found
    if kind.columns:
        return _custom_printer(kind)
    return _DEFAULT


def _json_path(data: Any, path: str) -> Any:
    """A simple JSONPath (`.status.phase`) into the object's JSON form; None where it leads nowhere."""
    for part in [p for p in path.strip().lstrip("$").split(".") if p]:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _custom_printer(kind: Kind) -> _Printer:
    """A custom kind's additionalPrinterColumns after the name; `date` columns as ages."""
    specs = kind.columns
    cols = [_Col("Name", format="name", description="Name must be unique within a namespace.")]
    for spec in specs:
        kind_of_column = spec.get("type", "string")
        cols.append(
            _Col(
                spec.get("name", ""),
                type="string" if kind_of_column == "date" else kind_of_column,
                description=spec.get("description", ""),
                priority=int(spec.get("priority", 0) or 0),
                format=spec.get("format", "") or "",
            )
        )

    def cells(obj: Any, now: float) -> list[Any]:
        data = msgspec.to_builtins(obj)
        out: list[Any] = [_name(obj)]
        for spec in specs:
            value = _json_path(data, spec.get("jsonPath", ""))
            if spec.get("type") == "date":
                stamp = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None
                out.append(_age(stamp, now))
            elif isinstance(value, bool | int | str):
                out.append(value)
            elif value is None:
                out.append("" if spec.get("type", "string") == "string" else 0)
            else:
                out.append(msgspec.json.encode(value).decode())
        return out

    return _Printer(tuple(cols), _cells(cells))


def columns(kind: Kind, *, wide: bool = True) -> list[dict[str, Any]]:
    """The `columnDefinitions` of `kind`'s table (without the priority-1 ones unless `wide`)."""
    return [c.as_json() for c in _printer(kind).columns if wide or c.priority == 0]


# ---------------------------------------------------------------------------------------------
# The Table


def _row_object(kind: Kind, obj: Any, include_object: str) -> dict[str, Any] | None:
    if include_object == INCLUDE_NONE:
        return None
    if include_object == INCLUDE_METADATA:
        meta = obj.metadata
        return {
            "kind": "PartialObjectMetadata",
            "apiVersion": TABLE_API_VERSION,
            "metadata": msgspec.to_builtins(meta) if meta is not None else {},
        }
    body: dict[str, Any] = msgspec.to_builtins(obj)
    return {"apiVersion": kind.api_version, "kind": kind.kind, **body}


def table(
    kind: Kind,
    objects: Sequence[Any],
    *,
    now: float,
    wide: bool,
    include_object: str = INCLUDE_METADATA,
    resource_version: str = "",
    continue_token: str | None = None,
    remaining_item_count: int | None = None,
) -> dict[str, Any]:
    """`objects` of `kind` as a ``meta.k8s.io/v1`` `Table` (JSON-ready dict), one row each, in order.

    `wide` means upstream's "generate wide" option. kube-apiserver always generates wide tables and
    leaves kubectl to hide the ``priority: 1`` columns unless ``-o wide``, so the API server should
    pass ``wide=True``; ``wide=False`` drops those columns and their cells (for in-process use).

    `include_object` is the parsed ``includeObject`` parameter (`parse_include_object`): ``None``
    gives rows without objects, ``Metadata`` a ``PartialObjectMetadata`` per row, ``Object`` the
    whole object. `now` is the time ages are measured against, in epoch seconds.
    """
    if include_object not in _INCLUDE_VALUES:
        include_object = parse_include_object(include_object)
    printer = _printer(kind)
    keep = [wide or c.priority == 0 for c in printer.columns]
    rows = []
    for obj in objects:
        cells, conditions = printer.row(obj, now)
        row: dict[str, Any] = {"cells": [cell for cell, kept in zip(cells, keep, strict=True) if kept]}
        if conditions:
            row["conditions"] = [dict(c) for c in conditions]
        row["object"] = _row_object(kind, obj, include_object)
        rows.append(row)
    metadata: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        metadata["continue"] = continue_token
    if remaining_item_count is not None:
        metadata["remainingItemCount"] = remaining_item_count
    return {
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": metadata,
        "columnDefinitions": [c.as_json() for c, kept in zip(printer.columns, keep, strict=True) if kept],
        "rows": rows,
    }
