"""Golden cases: the compact input format to cluster objects, defaulted as the recording's API
server and admission plugins did (see the corpus README)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import msgspec
import yaml
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.models import policy_v1 as pm
from lightkube.resources import core_v1, policy_v1, scheduling_v1

from kubesched.api.objects import namespace_of
from kubesched.api.tolerations import tolerates
from kubesched.golden.formats import (
    BudgetInput,
    CaseInput,
    CaseResult,
    NodeInput,
    PodInput,
    PriorityClassInput,
)

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
BUILTIN_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
DEFAULT_TOLERATIONS = (
    m.Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute", tolerationSeconds=300),
    m.Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute", tolerationSeconds=300),
)


@dataclass
class Case:
    name: str
    data: CaseInput
    expected: CaseResult
    namespaces: list[core_v1.Namespace] = field(default_factory=list)
    priority_classes: list[scheduling_v1.PriorityClass] = field(default_factory=list)
    pdbs: list[policy_v1.PodDisruptionBudget] = field(default_factory=list)
    nodes: list[core_v1.Node] = field(default_factory=list)
    pods: list[core_v1.Pod] = field(default_factory=list)
    pod: core_v1.Pod | None = None


def load_case(directory: Path, name: str) -> Case:
    # The files are in the corpus's forms (its README): the compact input, the expected outcome.
    data = cast(CaseInput, yaml.safe_load((directory / f"{name}.input.yaml").read_text()))
    expected_path = directory / f"{name}.expected.json"
    expected = cast(CaseResult, msgspec.json.decode(expected_path.read_bytes()) if expected_path.exists() else {})
    case = Case(name, data, expected)
    classes = {pc["name"]: pc for pc in data.get("priorityClasses") or []}
    case.priority_classes = [_priority_class(pc) for pc in classes.values()]
    case.pdbs = [_pdb(p) for p in data.get("podDisruptionBudgets") or []]
    case.nodes = [_node(n) for n in data.get("nodes") or []]
    existing = data.get("pods") or []
    case.pods = [_pod(p, classes, offset=i + 1, running=True) for i, p in enumerate(existing)]
    if data.get("pod"):
        case.pod = _pod(data["pod"], classes, offset=len(existing) + 1, running=False)
    namespaces = {ns["name"]: ns.get("labels") or {} for ns in data.get("namespaces") or []}
    for pod in [*case.pods, *([case.pod] if case.pod else [])]:
        namespaces.setdefault(namespace_of(pod), {})
    for p in case.pdbs:
        namespaces.setdefault(namespace_of(p), {})
    case.namespaces = [
        core_v1.Namespace(
            metadata=meta_v1.ObjectMeta(
                name=ns, labels={**labels, "kubernetes.io/metadata.name": ns}, creationTimestamp=EPOCH
            ),
            status=m.NamespaceStatus(phase="Active"),
        )
        for ns, labels in namespaces.items()
    ]
    return case


def case_names(directory: Path) -> list[str]:
    return sorted(p.name.removesuffix(".input.yaml") for p in directory.glob("*.input.yaml"))


def _priority_class(pc: PriorityClassInput) -> scheduling_v1.PriorityClass:
    return scheduling_v1.PriorityClass(
        metadata=meta_v1.ObjectMeta(name=pc["name"]),
        value=pc["value"],
        globalDefault=pc.get("globalDefault", False),
        preemptionPolicy=pc.get("preemptionPolicy", "PreemptLowerPriority"),
        description=pc.get("description"),
    )


def _pdb(p: BudgetInput) -> policy_v1.PodDisruptionBudget:
    return policy_v1.PodDisruptionBudget(
        metadata=meta_v1.ObjectMeta(name=p["name"], namespace=p.get("namespace", "default"), creationTimestamp=EPOCH),
        spec=pm.PodDisruptionBudgetSpec(
            selector=msgspec.convert(p["selector"], meta_v1.LabelSelector) if p.get("selector") else None,
            minAvailable=p.get("minAvailable"),
            maxUnavailable=p.get("maxUnavailable"),
        ),
        status=pm.PodDisruptionBudgetStatus(
            disruptionsAllowed=p.get("disruptionsAllowed", 0), currentHealthy=0, desiredHealthy=0, expectedPods=0
        ),
    )


def _node(n: NodeInput) -> core_v1.Node:
    name = n["name"]
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    labels.update(n.get("labels") or {})
    allocatable = {str(k): str(v) for k, v in (n.get("allocatable") or {}).items()}
    allocatable.setdefault("pods", "110")
    capacity = {str(k): str(v) for k, v in (n.get("capacity") or allocatable).items()}
    return core_v1.Node(
        metadata=meta_v1.ObjectMeta(
            name=name, labels=labels, annotations=n.get("annotations"), creationTimestamp=EPOCH
        ),
        spec=m.NodeSpec(
            taints=[msgspec.convert(t, m.Taint) for t in n.get("taints") or []] or None,
            unschedulable=n.get("unschedulable") or None,
        ),
        status=m.NodeStatus(
            capacity=capacity,
            allocatable=allocatable,
            conditions=[m.NodeCondition(type="Ready", status="True")],
            images=[msgspec.convert(i, m.ContainerImage) for i in n.get("images") or []] or None,
        ),
    )


def _pod_spec(p: PodInput) -> m.PodSpec:
    """The case's pod spec: its containers (one by default) with the requests, limits and host
    ports the case lists, defaulted as the API server defaults them (requests from limits, TCP)."""
    spec = msgspec.convert(p["spec"], m.PodSpec) if p.get("spec") else m.PodSpec(containers=[])
    if not spec.containers:
        spec.containers = [m.Container(name="c", image=p.get("image", "registry.k8s.io/pause:3.10"))]
    first = spec.containers[0]
    if p.get("requests") or p.get("limits"):
        res = first.resources or m.ResourceRequirements()
        first.resources = m.ResourceRequirements(
            requests={**(res.requests or {}), **{k: str(v) for k, v in (p.get("requests") or {}).items()}} or None,
            limits={**(res.limits or {}), **{k: str(v) for k, v in (p.get("limits") or {}).items()}} or None,
        )
    for port in p.get("hostPorts") or []:
        first.ports = [*(first.ports or []), m.ContainerPort(containerPort=port, hostPort=port, protocol="TCP")]
    for c in [*(spec.initContainers or []), *spec.containers]:
        given = c.resources
        if given is not None and given.limits:
            given.requests = {**given.limits, **(given.requests or {})}
        for declared in c.ports or []:
            declared.protocol = declared.protocol or "TCP"
    return spec


def _tolerations(p: PodInput) -> list[m.Toleration]:
    """The case's tolerations and the defaults admission adds (not-ready, unreachable)."""
    tolerations = [msgspec.convert(t, m.Toleration) for t in p.get("tolerations") or []]
    for default in DEFAULT_TOLERATIONS:
        taint = m.Taint(key=default.key or "", effect=default.effect or "")
        if not any(tolerates(t, taint) for t in tolerations):
            tolerations.append(default)
    return tolerations


def _set_priority(spec: m.PodSpec, p: PodInput, classes: dict[str, PriorityClassInput]) -> None:
    """Priority and preemption policy from the pod, else its PriorityClass (the case's or a built-in one)."""
    class_name = p.get("priorityClassName")
    priority = p.get("priority")
    policy = p.get("preemptionPolicy")
    if class_name:
        spec.priorityClassName = class_name
        cls = classes.get(class_name)
        value = cls["value"] if cls else BUILTIN_PRIORITY_CLASSES.get(class_name, 0)
        priority = value if priority is None else priority
        policy = policy or (cls.get("preemptionPolicy") if cls else None)
    spec.priority = priority if priority is not None else 0
    spec.preemptionPolicy = policy or "PreemptLowerPriority"


def _pod(p: PodInput, classes: dict[str, PriorityClassInput], *, offset: int, running: bool) -> core_v1.Pod:
    name, namespace = p["name"], p.get("namespace", "default")
    spec = _pod_spec(p)
    spec.schedulerName = p.get("schedulerName") or spec.schedulerName or "default-scheduler"
    if p.get("nodeSelector"):
        spec.nodeSelector = p["nodeSelector"]
    if p.get("affinity"):
        spec.affinity = msgspec.convert(p["affinity"], m.Affinity)
    if p.get("topologySpreadConstraints"):
        spec.topologySpreadConstraints = [
            msgspec.convert(t, m.TopologySpreadConstraint) for t in p["topologySpreadConstraints"]
        ]
    spec.tolerations = _tolerations(p)
    _set_priority(spec, p, classes)
    if running:
        spec.nodeName = p.get("nodeName")
    created = EPOCH + timedelta(seconds=offset)
    start = datetime.fromisoformat(p["startTime"].replace("Z", "+00:00")) if p.get("startTime") else created
    status = m.PodStatus(
        phase=p.get("phase") or ("Running" if running else "Pending"),
        startTime=start if running else None,
        nominatedNodeName=p.get("nominatedNodeName"),
    )
    return core_v1.Pod(
        metadata=meta_v1.ObjectMeta(
            name=name,
            namespace=namespace,
            uid=f"pod-uid-{namespace}-{name}",
            labels=p.get("labels"),
            annotations=p.get("annotations"),
            ownerReferences=[msgspec.convert(o, meta_v1.OwnerReference) for o in p["ownerReferences"]]
            if p.get("ownerReferences")
            else None,
            creationTimestamp=created,
        ),
        spec=spec,
        status=status,
    )
