"""Server-side Table output: the columns and cell texts `kubectl get` prints for each kind."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from lightkube.models import apps_v1 as am
from lightkube.models import coordination_v1 as cm
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.models import policy_v1 as pm
from lightkube.models import storage_v1 as sm
from lightkube.resources import (
    apps_v1,
    coordination_v1,
    core_v1,
    events_v1,
    policy_v1,
    rbac_authorization_v1,
    scheduling_v1,
    storage_v1,
)

from builders import make_node, make_pod
from kubesched.apiserver.negotiation import wants_table
from kubesched.apiserver.tables import (
    columns,
    human_duration,
    parse_include_object,
    short_human_duration,
    table,
)
from kubesched.clock import DEFAULT_EPOCH, VirtualClock
from kubesched.cluster import BadRequest
from kubesched.cluster.kinds import KINDS, Kind
from kubesched.storage import MemoryStore

NOW = DEFAULT_EPOCH + 86_400.0
KUBECTL_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


def ago(seconds: float) -> datetime:
    return datetime.fromtimestamp(NOW - seconds, UTC)


def meta(name: str, age: float = 10, **extra: Any) -> meta_v1.ObjectMeta:
    return meta_v1.ObjectMeta(
        name=name, namespace=extra.pop("namespace", "default"), creationTimestamp=ago(age), **extra
    )


def cells(cls: type[Any], *objects: Any, wide: bool = True) -> list[list[Any]]:
    return [row["cells"] for row in table(KINDS[cls], objects, now=NOW, wide=wide)["rows"]]


def one_row(obj: Any) -> list[Any]:
    [row] = cells(type(obj), obj)
    return row


def names(cls: type[Any]) -> list[str]:
    return [c["name"] for c in columns(KINDS[cls])]


# ---------------------------------------------------------------------------------------------
# Durations

HUMAN = [
    (-5, "<invalid>"),
    (-2, "<invalid>"),
    (-1.5, "0s"),
    (-0.5, "0s"),
    (0, "0s"),
    (5, "5s"),
    (59, "59s"),
    (119, "119s"),
    (120, "2m"),
    (200, "3m20s"),
    (599, "9m59s"),
    (600, "10m"),
    (601, "10m"),
    (179 * 60 + 59, "179m"),
    (3 * 3600, "3h"),
    (5 * 3600 + 30 * 60, "5h30m"),
    (8 * 3600, "8h"),
    (47 * 3600 + 59 * 60, "47h"),
    (48 * 3600, "2d"),
    (3 * 86400 + 4 * 3600, "3d4h"),
    (7 * 86400 + 23 * 3600, "7d23h"),
    (8 * 86400, "8d"),
    (400 * 86400, "400d"),
    (729 * 86400, "729d"),
    (730 * 86400, "2y"),
    (740 * 86400, "2y10d"),
    (8 * 365 * 86400, "8y"),
    (20 * 365 * 86400 + 5 * 86400, "20y"),
]

SHORT = [
    (-2, "<invalid>"),
    (-1, "0s"),
    (0, "0s"),
    (59, "59s"),
    (60, "1m"),
    (3599, "59m"),
    (3600, "1h"),
    (23 * 3600 + 3599, "23h"),
    (24 * 3600, "1d"),
    (364 * 86400, "364d"),
    (365 * 86400, "1y"),
    (3 * 365 * 86400 + 100, "3y"),
]


@pytest.mark.parametrize(("seconds", "text"), HUMAN)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


@pytest.mark.parametrize(("seconds", "text"), SHORT)
def test_short_human_duration(seconds: float, text: str) -> None:
    assert short_human_duration(seconds) == text


# ---------------------------------------------------------------------------------------------
# Negotiation and parameters


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (KUBECTL_ACCEPT, True),
        ("application/json;as=Table;v=v1;g=meta.k8s.io", True),
        ("application/json; g=meta.k8s.io; v=v1; as=Table", True),
        ('application/json;as="Table";v="v1";g="meta.k8s.io"', True),
        ("application/json", False),
        ("*/*", False),
        ("", False),
        (None, False),
        ("application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", False),
        ("application/json;as=Table;v=v1;g=meta.k8s.io;q=0,application/json", False),
        ("application/json, application/json;as=Table;v=v1;g=meta.k8s.io", False),
        ("application/json;q=0.5, application/json;as=Table;v=v1;g=meta.k8s.io", True),
        ("application/yaml;as=Table;v=v1;g=meta.k8s.io", False),
        ("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", False),
    ],
)
def test_wants_table(accept: str | None, expected: bool) -> None:
    assert wants_table(accept) is expected


@pytest.mark.parametrize(
    ("value", "parsed"),
    [(None, "Metadata"), ("", "Metadata"), ("None", "None"), ("Metadata", "Metadata"), ("Object", "Object")],
)
def test_parse_include_object(value: str | None, parsed: str) -> None:
    assert parse_include_object(value) == parsed


@pytest.mark.parametrize("value", ["object", "All", "metadata"])
def test_parse_include_object_rejects_unknown_values(value: str) -> None:
    with pytest.raises(BadRequest, match="includeObject"):
        parse_include_object(value)


# ---------------------------------------------------------------------------------------------
# The Table envelope


def running_pod(name: str = "web") -> core_v1.Pod:
    return core_v1.Pod(
        metadata=meta(name, 300, labels={"app": "web"}),
        spec=m.PodSpec(containers=[m.Container(name="app", image="nginx")], nodeName="n1"),
        status=m.PodStatus(
            phase="Running",
            podIP="10.0.0.5",
            podIPs=[m.PodIP(ip="10.0.0.5")],
            conditions=[m.PodCondition(type="Ready", status="True")],
            containerStatuses=[
                m.ContainerStatus(
                    name="app",
                    image="nginx",
                    imageID="",
                    ready=True,
                    restartCount=0,
                    state=m.ContainerState(running=m.ContainerStateRunning(startedAt=ago(290))),
                )
            ],
        ),
    )


class TestEnvelope:
    def test_shape(self) -> None:
        out = table(KINDS[core_v1.Pod], [running_pod()], now=NOW, wide=True, resource_version="42", continue_token="c1")
        assert out["kind"] == "Table"
        assert out["apiVersion"] == "meta.k8s.io/v1"
        assert out["metadata"] == {"resourceVersion": "42", "continue": "c1"}
        assert [set(c) for c in out["columnDefinitions"]] == [
            {"name", "type", "format", "description", "priority"}
        ] * len(out["columnDefinitions"])
        assert out["columnDefinitions"][0] == {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": out["columnDefinitions"][0]["description"],
            "priority": 0,
        }
        assert len(out["rows"]) == 1

    def test_no_continue_when_unset(self) -> None:
        out = table(KINDS[core_v1.Pod], [], now=NOW, wide=True, resource_version="7")
        assert out["metadata"] == {"resourceVersion": "7"}
        assert out["rows"] == []

    def test_remaining_item_count(self) -> None:
        out = table(KINDS[core_v1.Pod], [], now=NOW, wide=True, continue_token="x", remaining_item_count=3)
        assert out["metadata"] == {"resourceVersion": "", "continue": "x", "remainingItemCount": 3}

    def test_include_metadata_by_default(self) -> None:
        [row] = table(KINDS[core_v1.Pod], [running_pod()], now=NOW, wide=True)["rows"]
        obj = row["object"]
        assert obj["kind"] == "PartialObjectMetadata"
        assert obj["apiVersion"] == "meta.k8s.io/v1"
        assert obj["metadata"]["name"] == "web"
        assert obj["metadata"]["labels"] == {"app": "web"}
        assert obj["metadata"]["creationTimestamp"].endswith("Z")
        assert "spec" not in obj

    def test_include_object(self) -> None:
        [row] = table(KINDS[core_v1.Pod], [running_pod()], now=NOW, wide=True, include_object="Object")["rows"]
        assert row["object"]["kind"] == "Pod"
        assert row["object"]["apiVersion"] == "v1"
        assert row["object"]["spec"]["nodeName"] == "n1"

    def test_include_object_for_grouped_kind(self) -> None:
        pdb = policy_v1.PodDisruptionBudget(metadata=meta("pdb"), spec=pm.PodDisruptionBudgetSpec(minAvailable=1))
        [row] = table(KINDS[policy_v1.PodDisruptionBudget], [pdb], now=NOW, wide=True, include_object="Object")["rows"]
        assert row["object"]["apiVersion"] == "policy/v1"
        assert row["object"]["kind"] == "PodDisruptionBudget"

    def test_include_none(self) -> None:
        [row] = table(KINDS[core_v1.Pod], [running_pod()], now=NOW, wide=True, include_object="None")["rows"]
        assert row["object"] is None

    def test_bad_include_object(self) -> None:
        with pytest.raises(BadRequest):
            table(KINDS[core_v1.Pod], [running_pod()], now=NOW, wide=True, include_object="everything")

    def test_rows_keep_order(self) -> None:
        rows = cells(core_v1.Pod, running_pod("b"), running_pod("a"), running_pod("c"))
        assert [r[0] for r in rows] == ["b", "a", "c"]

    def test_json_serialisable(self) -> None:
        out = table(KINDS[core_v1.Pod], [running_pod()], now=NOW, wide=True, include_object="Object")
        assert msgspec.json.decode(msgspec.json.encode(out)) == out

    def test_narrow_drops_priority_columns_and_cells(self) -> None:
        out = table(KINDS[core_v1.Pod], [running_pod()], now=NOW, wide=False)
        assert [c["name"] for c in out["columnDefinitions"]] == ["Name", "Ready", "Status", "Restarts", "Age"]
        assert out["rows"][0]["cells"] == ["web", "1/1", "Running", "0", "5m"]

    def test_wide_is_what_the_server_sends(self) -> None:
        out = table(KINDS[core_v1.Pod], [running_pod()], now=NOW, wide=True)
        assert [c["priority"] for c in out["columnDefinitions"]] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
        assert len(out["rows"][0]["cells"]) == 9


# ---------------------------------------------------------------------------------------------
# Pods


POD_COLUMNS = ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]


def cstatus(
    name: str = "app",
    *,
    ready: bool = False,
    restarts: int = 0,
    running: bool = False,
    waiting: str | None = None,
    terminated: tuple[int, str | None, int | None] | None = None,
    last_finished: float | None = None,
    started: bool | None = None,
) -> m.ContainerStatus:
    state = m.ContainerState(
        running=m.ContainerStateRunning(startedAt=ago(60)) if running else None,
        waiting=m.ContainerStateWaiting(reason=waiting) if waiting is not None else None,
        terminated=(
            m.ContainerStateTerminated(exitCode=terminated[0], reason=terminated[1], signal=terminated[2])
            if terminated
            else None
        ),
    )
    last = None
    if last_finished is not None:
        last = m.ContainerState(terminated=m.ContainerStateTerminated(exitCode=1, finishedAt=ago(last_finished)))
    return m.ContainerStatus(
        name=name,
        image="img",
        imageID="",
        ready=ready,
        restartCount=restarts,
        state=state,
        lastState=last,
        started=started,
    )


def pod(
    *,
    phase: str | None = "Pending",
    reason: str | None = None,
    containers: int = 1,
    init: int = 0,
    sidecars: int = 0,
    statuses: list[m.ContainerStatus] | None = None,
    init_statuses: list[m.ContainerStatus] | None = None,
    conditions: Sequence[tuple[str, str, str | None]] = (),
    node: str | None = None,
    nominated: str | None = None,
    ip: str | None = None,
    gates: tuple[str, ...] = (),
    deleting: bool = False,
    age: float = 10,
) -> core_v1.Pod:
    init_containers = [m.Container(name=f"init{i}", image="busybox") for i in range(init)]
    init_containers += [m.Container(name=f"side{i}", image="envoy", restartPolicy="Always") for i in range(sidecars)]
    return core_v1.Pod(
        metadata=meta("p", age, deletionTimestamp=ago(1) if deleting else None),
        spec=m.PodSpec(
            containers=[m.Container(name=f"c{i}" if i else "app", image="nginx") for i in range(containers)],
            initContainers=init_containers or None,
            nodeName=node,
            readinessGates=[m.PodReadinessGate(conditionType=g) for g in gates] or None,
        ),
        status=m.PodStatus(
            phase=phase,
            reason=reason,
            podIPs=[m.PodIP(ip=ip)] if ip else None,
            nominatedNodeName=nominated,
            conditions=[m.PodCondition(type=t, status=s, reason=r) for t, s, r in conditions] or None,
            containerStatuses=statuses,
            initContainerStatuses=init_statuses,
        ),
    )


POD_CASES: list[tuple[str, core_v1.Pod, list[Any]]] = [
    (
        "pending unscheduled",
        pod(),
        ["p", "0/1", "Pending", "0", "10s", "<none>", "<none>", "<none>", "<none>"],
    ),
    (
        "pending with nomination",
        pod(nominated="n2"),
        ["p", "0/1", "Pending", "0", "10s", "<none>", "<none>", "n2", "<none>"],
    ),
    (
        "scheduling gated",
        pod(conditions=[("PodScheduled", "False", "SchedulingGated")]),
        ["p", "0/1", "SchedulingGated", "0", "10s", "<none>", "<none>", "<none>", "<none>"],
    ),
    (
        "unschedulable stays pending",
        pod(conditions=[("PodScheduled", "False", "Unschedulable")]),
        ["p", "0/1", "Pending", "0", "10s", "<none>", "<none>", "<none>", "<none>"],
    ),
    (
        "bound, container creating",
        pod(node="n1", statuses=[cstatus(waiting="ContainerCreating")]),
        ["p", "0/1", "ContainerCreating", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "running and ready",
        pod(phase="Running", node="n1", ip="10.1.2.3", age=200, statuses=[cstatus(ready=True, running=True)]),
        ["p", "1/1", "Running", "0", "3m20s", "10.1.2.3", "n1", "<none>", "<none>"],
    ),
    (
        "running, one of two ready",
        pod(
            phase="Running",
            node="n1",
            containers=2,
            statuses=[cstatus(ready=True, running=True), cstatus("c1", running=True)],
        ),
        ["p", "1/2", "Running", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "terminating",
        pod(phase="Running", node="n1", deleting=True, statuses=[cstatus(ready=True, running=True)]),
        ["p", "1/1", "Terminating", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "deleted on a lost node",
        pod(phase="Running", reason="NodeLost", node="n1", deleting=True),
        ["p", "0/1", "Unknown", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "succeeded pod being deleted is not terminating",
        pod(phase="Succeeded", node="n1", deleting=True, statuses=[cstatus(terminated=(0, "Completed", None))]),
        ["p", "0/1", "Completed", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "rejected by the kubelet",
        pod(phase="Failed", reason="OutOfcpu", node="n1"),
        ["p", "0/1", "OutOfcpu", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "crash loop with restarts",
        pod(
            phase="Running",
            node="n1",
            age=3600,
            statuses=[cstatus(restarts=5, waiting="CrashLoopBackOff", last_finished=300)],
        ),
        ["p", "0/1", "CrashLoopBackOff", "5 (5m ago)", "60m", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "restarted and running again",
        pod(
            phase="Running",
            node="n1",
            statuses=[cstatus(ready=True, running=True, restarts=2, last_finished=90)],
        ),
        ["p", "1/1", "Running", "2 (90s ago)", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "restarts without a termination time",
        pod(phase="Running", node="n1", statuses=[cstatus(ready=True, running=True, restarts=3)]),
        ["p", "1/1", "Running", "3", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "terminated with exit code only",
        pod(phase="Failed", node="n1", statuses=[cstatus(terminated=(137, None, None))]),
        ["p", "0/1", "ExitCode:137", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "terminated by signal",
        pod(phase="Failed", node="n1", statuses=[cstatus(terminated=(0, None, 9))]),
        ["p", "0/1", "Signal:9", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "first container's state wins",
        pod(
            phase="Running",
            node="n1",
            containers=2,
            statuses=[cstatus(waiting="ImagePullBackOff"), cstatus("c1", waiting="ErrImagePull")],
        ),
        ["p", "0/2", "ImagePullBackOff", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "completed container while another still runs, pod not ready",
        pod(
            phase="Running",
            node="n1",
            containers=2,
            statuses=[cstatus(terminated=(0, "Completed", None)), cstatus("c1", ready=True, running=True)],
        ),
        ["p", "1/2", "NotReady", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "completed container while another still runs, pod ready",
        pod(
            phase="Running",
            node="n1",
            containers=2,
            conditions=[("Ready", "True", None)],
            statuses=[cstatus(terminated=(0, "Completed", None)), cstatus("c1", ready=True, running=True)],
        ),
        ["p", "1/2", "Running", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "init container not started",
        pod(node="n1", init=2, init_statuses=[cstatus("init0", waiting="PodInitializing")]),
        ["p", "0/1", "Init:0/2", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "second init container running",
        pod(
            node="n1",
            init=2,
            init_statuses=[cstatus("init0", terminated=(0, "Completed", None)), cstatus("init1", running=True)],
        ),
        ["p", "0/1", "Init:1/2", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "init container waiting on an image",
        pod(node="n1", init=1, init_statuses=[cstatus("init0", waiting="ImagePullBackOff")]),
        ["p", "0/1", "Init:ImagePullBackOff", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "init container crash looping",
        pod(
            node="n1",
            init=1,
            init_statuses=[cstatus("init0", waiting="CrashLoopBackOff", restarts=4, last_finished=30)],
            statuses=[cstatus(waiting="PodInitializing")],
        ),
        ["p", "0/1", "Init:CrashLoopBackOff", "4 (30s ago)", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "init container failed with a reason",
        pod(phase="Failed", node="n1", init=1, init_statuses=[cstatus("init0", terminated=(1, "Error", None))]),
        ["p", "0/1", "Init:Error", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "init container failed with exit code",
        pod(node="n1", init=1, init_statuses=[cstatus("init0", terminated=(2, None, None))]),
        ["p", "0/1", "Init:ExitCode:2", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "init container killed by signal",
        pod(node="n1", init=1, init_statuses=[cstatus("init0", terminated=(1, None, 15))]),
        ["p", "0/1", "Init:Signal:15", "0", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "sidecar counted among containers",
        pod(
            phase="Running",
            node="n1",
            sidecars=1,
            conditions=[("Initialized", "True", None)],
            init_statuses=[cstatus("side0", ready=True, running=True, started=True, restarts=1, last_finished=120)],
            statuses=[cstatus(ready=True, running=True)],
        ),
        ["p", "2/2", "Running", "1 (2m ago)", "10s", "<none>", "n1", "<none>", "<none>"],
    ),
    (
        "readiness gates",
        pod(
            phase="Running",
            node="n1",
            gates=("example.com/lb", "example.com/dns"),
            conditions=[("example.com/lb", "True", None), ("example.com/dns", "False", None)],
            statuses=[cstatus(ready=True, running=True)],
        ),
        ["p", "1/1", "Running", "0", "10s", "<none>", "n1", "<none>", "1/2"],
    ),
    (
        "no status at all",
        core_v1.Pod(metadata=meta("p"), spec=m.PodSpec(containers=[m.Container(name="a")])),
        ["p", "0/1", "", "0", "10s", "<none>", "<none>", "<none>", "<none>"],
    ),
]


class TestPods:
    def test_columns(self) -> None:
        assert names(core_v1.Pod) == POD_COLUMNS
        assert [c["priority"] for c in columns(KINDS[core_v1.Pod])] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
        assert [c["type"] for c in columns(KINDS[core_v1.Pod])] == ["string"] * 9

    @pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in POD_CASES], ids=[c[0] for c in POD_CASES])
    def test_cells(self, obj: core_v1.Pod, expected: list[Any]) -> None:
        assert one_row(obj) == expected

    def test_ip_falls_back_to_pod_ip(self) -> None:
        p = pod(phase="Running", node="n1")
        assert p.status is not None
        p.status.podIP = "10.9.9.9"
        assert one_row(p)[5] == "10.9.9.9"

    @pytest.mark.parametrize(
        ("phase", "conditions"),
        [
            ("Running", None),
            ("Pending", None),
            (
                "Succeeded",
                [
                    {
                        "type": "Completed",
                        "status": "True",
                        "reason": "Succeeded",
                        "message": "The pod has completed successfully.",
                    }
                ],
            ),
            ("Failed", [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]),
        ],
    )
    def test_row_conditions(self, phase: str, conditions: list[dict[str, str]] | None) -> None:
        [row] = table(KINDS[core_v1.Pod], [pod(phase=phase)], now=NOW, wide=True)["rows"]
        assert row.get("conditions") == conditions


# ---------------------------------------------------------------------------------------------
# Nodes and namespaces


def node(
    name: str = "n1",
    *,
    ready: str | None = "True",
    unschedulable: bool = False,
    labels: dict[str, str] | None = None,
    addresses: Sequence[tuple[str, str]] = (),
    info: bool = True,
) -> core_v1.Node:
    return core_v1.Node(
        metadata=meta(name, 2 * 86400, namespace=None, labels=labels),
        spec=m.NodeSpec(unschedulable=unschedulable or None),
        status=m.NodeStatus(
            conditions=[
                m.NodeCondition(type="MemoryPressure", status="False"),
                *([m.NodeCondition(type="Ready", status=ready)] if ready else []),
            ],
            addresses=[m.NodeAddress(type=t, address=a) for t, a in addresses] or None,
            nodeInfo=(
                m.NodeSystemInfo(
                    architecture="amd64",
                    bootID="",
                    containerRuntimeVersion="containerd://2.0.0",
                    kernelVersion="6.8.0",
                    kubeProxyVersion="",
                    kubeletVersion="v1.33.0",
                    machineID="",
                    operatingSystem="linux",
                    osImage="Ubuntu 24.04",
                    systemUUID="",
                )
                if info
                else None
            ),
        ),
    )


NODE_WIDE = ["<none>", "<none>", "Ubuntu 24.04", "6.8.0", "containerd://2.0.0"]
NODE_CASES: list[tuple[str, core_v1.Node, list[Any]]] = [
    ("ready", node(), ["n1", "Ready", "<none>", "2d", "v1.33.0", *NODE_WIDE]),
    ("not ready", node(ready="False"), ["n1", "NotReady", "<none>", "2d", "v1.33.0", *NODE_WIDE]),
    ("ready unknown", node(ready="Unknown"), ["n1", "NotReady", "<none>", "2d", "v1.33.0", *NODE_WIDE]),
    ("no ready condition", node(ready=None), ["n1", "Unknown", "<none>", "2d", "v1.33.0", *NODE_WIDE]),
    (
        "cordoned",
        node(unschedulable=True),
        ["n1", "Ready,SchedulingDisabled", "<none>", "2d", "v1.33.0", *NODE_WIDE],
    ),
    (
        "cordoned and not ready",
        node(ready="False", unschedulable=True),
        ["n1", "NotReady,SchedulingDisabled", "<none>", "2d", "v1.33.0", *NODE_WIDE],
    ),
    (
        "roles",
        node(
            labels={
                "node-role.kubernetes.io/control-plane": "",
                "node-role.kubernetes.io/": "",
                "kubernetes.io/role": "worker",
                "kubernetes.io/hostname": "n1",
            }
        ),
        ["n1", "Ready", "control-plane,worker", "2d", "v1.33.0", *NODE_WIDE],
    ),
    (
        "addresses",
        node(addresses=[("Hostname", "n1"), ("InternalIP", "192.168.0.4"), ("ExternalIP", "1.2.3.4")]),
        ["n1", "Ready", "<none>", "2d", "v1.33.0", "192.168.0.4", "1.2.3.4", *NODE_WIDE[2:]],
    ),
    (
        "no node info",
        node(info=False),
        ["n1", "Ready", "<none>", "2d", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"],
    ),
]


class TestNodes:
    def test_columns(self) -> None:
        assert names(core_v1.Node) == [
            "Name",
            "Status",
            "Roles",
            "Age",
            "Version",
            "Internal-IP",
            "External-IP",
            "OS-Image",
            "Kernel-Version",
            "Container-Runtime",
        ]
        assert [c["priority"] for c in columns(KINDS[core_v1.Node])] == [0] * 5 + [1] * 5

    @pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in NODE_CASES], ids=[c[0] for c in NODE_CASES])
    def test_cells(self, obj: core_v1.Node, expected: list[Any]) -> None:
        assert one_row(obj) == expected


def test_namespace() -> None:
    ns = core_v1.Namespace(metadata=meta("team-a", 90, namespace=None), status=m.NamespaceStatus(phase="Active"))
    assert names(core_v1.Namespace) == ["Name", "Status", "Age"]
    assert one_row(ns) == ["team-a", "Active", "90s"]


# ---------------------------------------------------------------------------------------------
# Events

EVENT_COLUMNS = [
    "Last Seen",
    "Type",
    "Reason",
    "Object",
    "Subobject",
    "Source",
    "Message",
    "First Seen",
    "Count",
    "Name",
]


def core_event(**kw: Any) -> core_v1.Event:
    return core_v1.Event(
        metadata=meta("p.17a", 600),
        involvedObject=kw.pop("involved", m.ObjectReference(kind="Pod", name="p", namespace="default")),
        **{"type": "Normal", "reason": "Scheduled", "message": "Successfully assigned default/p to n1\n", **kw},
    )


EVENT_CASES: list[tuple[str, Any, list[Any]]] = [
    (
        "legacy timestamps and source",
        core_event(
            firstTimestamp=ago(600),
            lastTimestamp=ago(30),
            count=4,
            source=m.EventSource(component="default-scheduler"),
        ),
        [
            "30s",
            "Normal",
            "Scheduled",
            "pod/p",
            "",
            "default-scheduler",
            "Successfully assigned default/p to n1",
            "10m",
            4,
            "p.17a",
        ],
    ),
    (
        "source with host",
        core_event(
            type="Warning",
            reason="BackOff",
            message="Back-off restarting failed container",
            firstTimestamp=ago(120),
            lastTimestamp=ago(5),
            count=7,
            involved=m.ObjectReference(kind="Pod", name="p", fieldPath="spec.containers{app}"),
            source=m.EventSource(component="kubelet", host="n1"),
        ),
        [
            "5s",
            "Warning",
            "BackOff",
            "pod/p",
            "spec.containers{app}",
            "kubelet, n1",
            "Back-off restarting failed container",
            "2m",
            7,
            "p.17a",
        ],
    ),
    (
        "new-style event through the core API",
        core_event(
            eventTime=ago(45),
            reportingComponent="default-scheduler",
            reportingInstance="default-scheduler-host",
            involved=m.ObjectReference(kind="Node", name="n1"),
            reason="NodeNotReady",
            message="  Node n1 status is now: NodeNotReady  ",
        ),
        [
            "45s",
            "Normal",
            "NodeNotReady",
            "node/n1",
            "",
            "default-scheduler, default-scheduler-host",
            "Node n1 status is now: NodeNotReady",
            "45s",
            1,
            "p.17a",
        ],
    ),
    (
        "series",
        core_event(
            eventTime=ago(3600),
            series=m.EventSeries(count=12, lastObservedTime=ago(20)),
            reportingComponent="default-scheduler",
            type="Warning",
            reason="FailedScheduling",
            message="0/3 nodes are available",
        ),
        [
            "20s",
            "Warning",
            "FailedScheduling",
            "pod/p",
            "",
            "default-scheduler",
            "0/3 nodes are available",
            "60m",
            12,
            "p.17a",
        ],
    ),
    (
        "object without a name",
        core_event(involved=m.ObjectReference(kind="Cluster"), firstTimestamp=ago(10), count=1),
        ["10s", "Normal", "Scheduled", "cluster", "", "", "Successfully assigned default/p to n1", "10s", 1, "p.17a"],
    ),
    (
        "no timestamps at all",
        core_event(),
        [
            "<unknown>",
            "Normal",
            "Scheduled",
            "pod/p",
            "",
            "",
            "Successfully assigned default/p to n1",
            "<unknown>",
            1,
            "p.17a",
        ],
    ),
    (
        "events.k8s.io/v1",
        events_v1.Event(
            metadata=meta("p.17b", 600),
            eventTime=ago(300),
            regarding=m.ObjectReference(kind="Pod", name="p", namespace="default"),
            reportingController="default-scheduler",
            reportingInstance="sched-0",
            type="Normal",
            reason="Scheduled",
            action="Binding",
            note="Successfully assigned default/p to n1",
        ),
        [
            "5m",
            "Normal",
            "Scheduled",
            "pod/p",
            "",
            "default-scheduler, sched-0",
            "Successfully assigned default/p to n1",
            "5m",
            1,
            "p.17b",
        ],
    ),
]


class TestEvents:
    @pytest.mark.parametrize("cls", [core_v1.Event, events_v1.Event])
    def test_columns(self, cls: type[Any]) -> None:
        assert names(cls) == EVENT_COLUMNS
        assert [c["priority"] for c in columns(KINDS[cls])] == [0, 0, 0, 0, 1, 1, 0, 1, 1, 1]
        assert columns(KINDS[cls])[-1]["format"] == "name"

    @pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in EVENT_CASES], ids=[c[0] for c in EVENT_CASES])
    def test_cells(self, obj: Any, expected: list[Any]) -> None:
        assert one_row(obj) == expected

    def test_kubectl_default_view(self) -> None:
        out = table(KINDS[core_v1.Event], [EVENT_CASES[0][1]], now=NOW, wide=False)
        assert [c["name"] for c in out["columnDefinitions"]] == ["Last Seen", "Type", "Reason", "Object", "Message"]
        assert out["rows"][0]["cells"] == [
            "30s",
            "Normal",
            "Scheduled",
            "pod/p",
            "Successfully assigned default/p to n1",
        ]


# ---------------------------------------------------------------------------------------------
# Scheduling, policy, coordination


@pytest.mark.parametrize(
    ("spec", "allowed", "expected"),
    [
        (pm.PodDisruptionBudgetSpec(minAvailable=2), 1, ["pdb", "2", "N/A", 1, "10s"]),
        (pm.PodDisruptionBudgetSpec(maxUnavailable="50%"), 0, ["pdb", "N/A", "50%", 0, "10s"]),
        (pm.PodDisruptionBudgetSpec(minAvailable="100%"), None, ["pdb", "100%", "N/A", 0, "10s"]),
    ],
)
def test_pdb(spec: pm.PodDisruptionBudgetSpec, allowed: int | None, expected: list[Any]) -> None:
    status = None
    if allowed is not None:
        status = pm.PodDisruptionBudgetStatus(
            currentHealthy=3, desiredHealthy=2, disruptionsAllowed=allowed, expectedPods=3
        )
    pdb = policy_v1.PodDisruptionBudget(metadata=meta("pdb"), spec=spec, status=status)
    assert names(policy_v1.PodDisruptionBudget) == [
        "Name",
        "Min Available",
        "Max Unavailable",
        "Allowed Disruptions",
        "Age",
    ]
    assert one_row(pdb) == expected


@pytest.mark.parametrize(
    ("value", "default", "policy", "expected"),
    [
        (1000, True, "PreemptLowerPriority", ["high", 1000, True, "10s", "PreemptLowerPriority"]),
        (-5, None, "Never", ["high", -5, False, "10s", "Never"]),
        (0, False, None, ["high", 0, False, "10s", ""]),
    ],
)
def test_priority_class(value: int, default: bool | None, policy: str | None, expected: list[Any]) -> None:
    pc = scheduling_v1.PriorityClass(
        metadata=meta("high", namespace=None), value=value, globalDefault=default, preemptionPolicy=policy
    )
    cols = columns(KINDS[scheduling_v1.PriorityClass])
    assert [c["name"] for c in cols] == ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"]
    assert [c["type"] for c in cols] == ["string", "integer", "boolean", "string", "string"]
    assert one_row(pc) == expected


@pytest.mark.parametrize(("holder", "expected"), [("kube-scheduler-1_abc", "kube-scheduler-1_abc"), (None, "")])
def test_lease(holder: str | None, expected: str) -> None:
    lease = coordination_v1.Lease(
        metadata=meta("kube-scheduler", 4000, namespace="kube-system"), spec=cm.LeaseSpec(holderIdentity=holder)
    )
    assert names(coordination_v1.Lease) == ["Name", "Holder", "Age"]
    assert one_row(lease) == ["kube-scheduler", expected, "66m"]


# ---------------------------------------------------------------------------------------------
# Workloads and services


def template(*containers: tuple[str, str]) -> m.PodTemplateSpec:
    return m.PodTemplateSpec(spec=m.PodSpec(containers=[m.Container(name=n, image=i) for n, i in containers]))


SELECTOR = meta_v1.LabelSelector(
    matchLabels={"tier": "web", "app": "shop"},
    matchExpressions=[
        meta_v1.LabelSelectorRequirement(key="env", operator="In", values=["prod", "canary"]),
        meta_v1.LabelSelectorRequirement(key="legacy", operator="DoesNotExist"),
    ],
)
SELECTOR_TEXT = "app=shop,env in (canary,prod),!legacy,tier=web"


class TestWorkloads:
    def test_deployment(self) -> None:
        d = apps_v1.Deployment(
            metadata=meta("shop", 7200),
            spec=am.DeploymentSpec(
                selector=SELECTOR, template=template(("app", "shop:1"), ("proxy", "envoy:1")), replicas=3
            ),
            status=am.DeploymentStatus(readyReplicas=2, updatedReplicas=3, availableReplicas=2),
        )
        assert names(apps_v1.Deployment) == [
            "Name",
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector",
        ]
        assert one_row(d) == ["shop", "2/3", 3, 2, "120m", "app,proxy", "shop:1,envoy:1", SELECTOR_TEXT]

    def test_deployment_defaults(self) -> None:
        d = apps_v1.Deployment(
            metadata=meta("shop"), spec=am.DeploymentSpec(selector=meta_v1.LabelSelector(), template=template())
        )
        assert one_row(d) == ["shop", "0/1", 0, 0, "10s", "", "", ""]

    def test_replica_set(self) -> None:
        rs = apps_v1.ReplicaSet(
            metadata=meta("shop-7d9"),
            spec=am.ReplicaSetSpec(selector=SELECTOR, replicas=3, template=template(("app", "shop:1"))),
            status=am.ReplicaSetStatus(replicas=3, readyReplicas=1),
        )
        assert names(apps_v1.ReplicaSet) == [
            "Name",
            "Desired",
            "Current",
            "Ready",
            "Age",
            "Containers",
            "Images",
            "Selector",
        ]
        assert one_row(rs) == ["shop-7d9", 3, 3, 1, "10s", "app", "shop:1", SELECTOR_TEXT]

    def test_replica_set_with_empty_selector(self) -> None:
        rs = apps_v1.ReplicaSet(
            metadata=meta("x"), spec=am.ReplicaSetSpec(selector=meta_v1.LabelSelector(), replicas=0)
        )
        assert one_row(rs) == ["x", 0, 0, 0, "10s", "", "", "<none>"]

    def test_stateful_set(self) -> None:
        sts = apps_v1.StatefulSet(
            metadata=meta("db"),
            spec=am.StatefulSetSpec(selector=SELECTOR, template=template(("pg", "postgres:17")), replicas=3),
            status=am.StatefulSetStatus(replicas=3, readyReplicas=3),
        )
        assert names(apps_v1.StatefulSet) == ["Name", "Ready", "Age", "Containers", "Images"]
        assert one_row(sts) == ["db", "3/3", "10s", "pg", "postgres:17"]

    def test_replication_controller(self) -> None:
        rc = core_v1.ReplicationController(
            metadata=meta("old"),
            spec=m.ReplicationControllerSpec(selector={"b": "2", "a": "1"}, template=template(("c", "i"))),
        )
        assert one_row(rc) == ["old", 1, 0, 0, "10s", "c", "i", "a=1,b=2"]


def service(type_: str | None, **spec: Any) -> core_v1.Service:
    status = spec.pop("status", None)
    return core_v1.Service(metadata=meta("svc"), spec=m.ServiceSpec(type=type_, **spec), status=status)


SERVICE_CASES: list[tuple[str, core_v1.Service, list[Any]]] = [
    (
        "cluster ip",
        service(
            "ClusterIP",
            clusterIP="10.96.0.10",
            clusterIPs=["10.96.0.10"],
            ports=[m.ServicePort(port=53, protocol="UDP"), m.ServicePort(port=53, protocol="TCP")],
            selector={"k8s-app": "kube-dns"},
        ),
        ["svc", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "10s", "k8s-app=kube-dns"],
    ),
    (
        "headless without ports",
        service("ClusterIP", clusterIP="None", clusterIPs=["None"]),
        ["svc", "ClusterIP", "None", "<none>", "<none>", "10s", "<none>"],
    ),
    (
        "node port with external ips",
        service(
            "NodePort",
            clusterIPs=["10.96.1.1"],
            externalIPs=["1.1.1.1", "2.2.2.2"],
            ports=[m.ServicePort(port=80, nodePort=30080)],
        ),
        ["svc", "NodePort", "10.96.1.1", "1.1.1.1,2.2.2.2", "80:30080/TCP", "10s", "<none>"],
    ),
    (
        "pending load balancer",
        service("LoadBalancer", clusterIPs=["10.96.1.2"], ports=[m.ServicePort(port=443, protocol="TCP")]),
        ["svc", "LoadBalancer", "10.96.1.2", "<pending>", "443/TCP", "10s", "<none>"],
    ),
    (
        "load balancer with ingress",
        service(
            "LoadBalancer",
            clusterIPs=["10.96.1.3"],
            status=m.ServiceStatus(
                loadBalancer=m.LoadBalancerStatus(
                    ingress=[m.LoadBalancerIngress(ip="5.5.5.5"), m.LoadBalancerIngress(hostname="lb.example.com")]
                )
            ),
        ),
        ["svc", "LoadBalancer", "10.96.1.3", "5.5.5.5,lb.example.com", "<none>", "10s", "<none>"],
    ),
    (
        "external name",
        service("ExternalName", externalName="db.example.com"),
        ["svc", "ExternalName", "<none>", "db.example.com", "<none>", "10s", "<none>"],
    ),
]


class TestServices:
    def test_columns(self) -> None:
        assert names(core_v1.Service) == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]

    @pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in SERVICE_CASES], ids=[c[0] for c in SERVICE_CASES])
    def test_cells(self, obj: core_v1.Service, expected: list[Any]) -> None:
        assert one_row(obj) == expected


# ---------------------------------------------------------------------------------------------
# Storage


class TestStorage:
    def test_persistent_volume(self) -> None:
        pv = core_v1.PersistentVolume(
            metadata=meta("pv1", namespace=None),
            spec=m.PersistentVolumeSpec(
                capacity={"storage": "10Gi"},
                accessModes=["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"],
                persistentVolumeReclaimPolicy="Retain",
                claimRef=m.ObjectReference(namespace="default", name="data"),
                storageClassName="fast",
                volumeMode="Filesystem",
            ),
            status=m.PersistentVolumeStatus(phase="Bound"),
        )
        assert names(core_v1.PersistentVolume) == [
            "Name",
            "Capacity",
            "Access Modes",
            "Reclaim Policy",
            "Status",
            "Claim",
            "StorageClass",
            "VolumeAttributesClass",
            "Reason",
            "Age",
            "VolumeMode",
        ]
        assert one_row(pv) == [
            "pv1",
            "10Gi",
            "RWO,RWX",
            "Retain",
            "Bound",
            "default/data",
            "fast",
            "<unset>",
            "",
            "10s",
            "Filesystem",
        ]

    def test_persistent_volume_terminating_with_annotation_class(self) -> None:
        pv = core_v1.PersistentVolume(
            metadata=meta(
                "pv2",
                namespace=None,
                deletionTimestamp=ago(1),
                annotations={"volume.beta.kubernetes.io/storage-class": "legacy"},
            ),
            spec=m.PersistentVolumeSpec(storageClassName="fast"),
            status=m.PersistentVolumeStatus(phase="Released"),
        )
        assert one_row(pv) == ["pv2", "0", "", "", "Terminating", "", "legacy", "<unset>", "", "10s", "<unset>"]

    @pytest.mark.parametrize(
        ("volume", "expected"),
        [
            ("pv1", ["data", "Bound", "pv1", "10Gi", "RWO", "fast", "<unset>", "10s", "<unset>"]),
            (None, ["data", "Bound", "", "", "", "fast", "<unset>", "10s", "<unset>"]),
        ],
    )
    def test_persistent_volume_claim(self, volume: str | None, expected: list[Any]) -> None:
        pvc = core_v1.PersistentVolumeClaim(
            metadata=meta("data"),
            spec=m.PersistentVolumeClaimSpec(
                volumeName=volume,
                storageClassName="fast",
                resources=m.VolumeResourceRequirements(requests={"storage": "5Gi"}),
            ),
            status=m.PersistentVolumeClaimStatus(
                phase="Bound", capacity={"storage": "10Gi"}, accessModes=["ReadWriteOnce"]
            ),
        )
        assert names(core_v1.PersistentVolumeClaim) == [
            "Name",
            "Status",
            "Volume",
            "Capacity",
            "Access Modes",
            "StorageClass",
            "VolumeAttributesClass",
            "Age",
            "VolumeMode",
        ]
        assert one_row(pvc) == expected

    def test_storage_class(self) -> None:
        default = storage_v1.StorageClass(
            metadata=meta(
                "standard", namespace=None, annotations={"storageclass.kubernetes.io/is-default-class": "true"}
            ),
            provisioner="rancher.io/local-path",
            volumeBindingMode="WaitForFirstConsumer",
        )
        other = storage_v1.StorageClass(
            metadata=meta("fast", namespace=None),
            provisioner="csi.example.com",
            reclaimPolicy="Retain",
            allowVolumeExpansion=True,
        )
        assert cells(storage_v1.StorageClass, default, other) == [
            ["standard (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", False, "10s"],
            ["fast", "csi.example.com", "Retain", "Immediate", True, "10s"],
        ]

    def test_csi_driver(self) -> None:
        d = storage_v1.CSIDriver(metadata=meta("csi.example.com", namespace=None), spec=sm.CSIDriverSpec())
        assert one_row(d) == ["csi.example.com", True, False, False, "<unset>", False, "<none>", "10s"]


# ---------------------------------------------------------------------------------------------
# Every served kind, and the generic table


MINIMAL: dict[str, dict[str, Any]] = {
    "Event": {"involvedObject": {}},
    "events.k8s.io/Event": {"eventTime": "2026-01-01T00:00:00.000000Z"},
    "ReplicaSet": {"spec": {"selector": {}}},
    "StatefulSet": {"spec": {"selector": {}, "template": {}}},
    "Deployment": {"spec": {"selector": {}, "template": {}}},
    "DaemonSet": {"spec": {"selector": {}, "template": {}}},
    "Job": {"spec": {"template": {}}},
    "StorageClass": {"provisioner": "p"},
    "CSINode": {"spec": {"drivers": []}},
    "CSIDriver": {"spec": {}},
    "CSIStorageCapacity": {"storageClassName": "sc"},
    "VolumeAttachment": {"spec": {"attacher": "a", "nodeName": "n", "source": {}}},
    "ResourceSlice": {"spec": {"driver": "d", "pool": {"generation": 0, "name": "p", "resourceSliceCount": 1}}},
    "CustomResourceDefinition": {
        "spec": {"group": "g", "names": {"kind": "K", "plural": "ks"}, "scope": "Namespaced", "versions": []}
    },
    "RoleBinding": {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}},
    "ClusterRoleBinding": {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}},
}


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=lambda k: k.qualified)
def test_every_served_kind_fills_every_column(kind: Kind) -> None:
    key = f"{kind.group}/{kind.kind}" if kind.group and f"{kind.group}/{kind.kind}" in MINIMAL else kind.kind
    body = {"metadata": {"name": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}, **MINIMAL.get(key, {})}
    obj = msgspec.convert(body, kind.cls)
    for wide in (True, False):
        out = table(kind, [obj], now=NOW, wide=wide)
        assert len(out["rows"][0]["cells"]) == len(out["columnDefinitions"])
        assert all(isinstance(c, str | int | bool) for c in out["rows"][0]["cells"])
    assert msgspec.json.decode(msgspec.json.encode(out)) == out


def test_generic_table() -> None:
    kind = KINDS[rbac_authorization_v1.Role]  # printed as upstream prints it: name and creation time
    cm_ = rbac_authorization_v1.Role(metadata=meta("cfg", 3600))
    unstamped = rbac_authorization_v1.Role(metadata=meta_v1.ObjectMeta(name="raw"))
    out = table(kind, [cm_, unstamped], now=NOW, wide=True)
    assert out["columnDefinitions"][0]["name"] == "Name"
    assert out["columnDefinitions"][0]["format"] == "name"
    assert out["columnDefinitions"][1]["name"] == "Created At"
    assert out["columnDefinitions"][1]["type"] == "date"
    assert [r["cells"] for r in out["rows"]] == [
        ["cfg", "2026-01-01T23:00:00Z"],
        ["raw", "0001-01-01T00:00:00Z"],
    ]


# ---------------------------------------------------------------------------------------------
# Objects as the store keeps them


def test_objects_from_the_memory_store() -> None:
    clock = VirtualClock()
    try:
        store = MemoryStore(clock=clock, watch_latency=0.0)
        created = store.create(make_pod("a").obj)
        node_obj = store.create(make_node("n1").obj)
        clock.advance(125)
        pods = table(KINDS[core_v1.Pod], [created], now=clock.now(), wide=True)
        nodes = table(KINDS[core_v1.Node], [node_obj], now=clock.now(), wide=True)
    finally:
        clock.close()
    assert pods["rows"][0]["cells"] == ["a", "0/1", "Pending", "0", "2m5s", "<none>", "<none>", "<none>", "<none>"]
    assert nodes["rows"][0]["cells"][:4] == ["n1", "Unknown", "<none>", "2m5s"]
