"""`kubesched compare`: one workload under several scheduler configurations, each on an identical
fake cluster (virtual clock, same seed), and what differs.

A workload file (YAML) says what to create and when:

    name: gang-contention
    description: ...
    horizon: 60                    # virtual seconds to run
    crds: [crd-podgroups.yaml]     # CustomResourceDefinitions to install first (paths relative to the file)
    nodes:                         # fake nodes, from Node-manifest-like templates
    - {count: 3, prefix: small-, template: {status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}}}
    objects: [...]                 # any objects the cluster serves (Namespaces, PodGroups, ElasticQuotas...)
    pods:                          # pods from templates; `{i}` in names is the index
    - {count: 6, name: "g1-{i}", at: 0, every: 0.1, template: {metadata: {labels: {...}}, spec: {...}}}

Every pod's `schedulerName` becomes the configuration's first profile's, so the same pods meet
each configuration. The report: per node the pods and requested/allocatable CPU and memory; the
pods left pending and the counts of their last FailedScheduling messages; for PodGroups (pods
labelled `scheduling.x-k8s.io/pod-group`), the groups fully, partly and not placed; for
ElasticQuotas, each namespace's used CPU against its min and max; the spread (nodes used, the
standard deviation of CPU utilisation).
"""

from __future__ import annotations

import asyncio
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from lightkube.resources import apiextensions_v1, core_v1, events_v1

from kubesched.api import yamlfile
from kubesched.api.objects import Served, meta_of, present
from kubesched.api.quantity import int_value, milli_value
from kubesched.api.resources import pod_requests
from kubesched.clock import VirtualClock
from kubesched.cluster.codec import decoder
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.scheduler import Scheduler
from kubesched.sim import FakeKubelets, KubeletConfig, NodeTemplate
from kubesched.storage import MemoryCluster, MemoryStore

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
ATTEMPT_SECONDS = 0.001  # each scheduling attempt takes a virtual millisecond


class WorkloadError(ValueError):
    """A workload file that cannot be used; the message names the file and the field."""


class NodeSpec(msgspec.Struct, forbid_unknown_fields=True):
    count: int = 1
    prefix: str = "node-"
    template: dict[str, Any] = {}  # Any: a Node manifest as the file has it, read by NodeTemplate.from_node


class PodSpec(msgspec.Struct, forbid_unknown_fields=True):
    count: int = 1
    name: str = "pod-{i}"
    at: float = 0.0  # when the first is created
    every: float = 0.0  # seconds between two of them (entries with the same times interleave)
    template: dict[str, object] = {}


class WorkloadFile(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    description: str = ""
    horizon: float = 60.0
    crds: list[str] = []
    nodes: list[NodeSpec] = []
    objects: list[dict[str, Any]] = []  # Any: manifests as the file has them (see `_object`)
    pods: list[PodSpec] = []


@dataclass
class Workload:
    spec: WorkloadFile
    root: Path  # where relative paths start


def load_workload(path: str | Path) -> Workload:
    path = Path(path)
    try:
        data = yamlfile.load(path)
    except yamlfile.YamlError as e:
        raise WorkloadError(str(e)) from None
    try:
        spec = msgspec.convert(data, WorkloadFile)
    except msgspec.ValidationError as e:
        raise WorkloadError(f"{path}: {e}") from None
    return Workload(spec, path.parent)


@dataclass
class NodeReport:
    name: str
    pods: list[str]
    cpu_requested: int  # milli-CPU
    cpu_allocatable: int
    memory_requested: int
    memory_allocatable: int

    @property
    def cpu_utilisation(self) -> float:
        return self.cpu_requested / self.cpu_allocatable if self.cpu_allocatable else 0.0


@dataclass
class Report:
    config: str
    scheduler_name: str
    nodes: list[NodeReport]
    pending: list[str]
    messages: dict[str, int]  # last FailedScheduling message of each pending pod -> pods
    groups: dict[str, dict[str, object]] = field(default_factory=dict)  # namespace/name -> placed, of, min, state
    quotas: dict[str, dict[str, int]] = field(default_factory=dict)  # namespace -> used/min/max CPU (milli)
    attempts: int = 0

    @property
    def bound(self) -> set[str]:
        """The pods bound to some node."""
        return {pod for node in self.nodes for pod in node.pods}

    @property
    def nodes_used(self) -> int:
        return sum(1 for n in self.nodes if n.pods)

    @property
    def spread(self) -> float:
        values = [n.cpu_utilisation for n in self.nodes]
        return statistics.pstdev(values) if len(values) > 1 else 0.0

    def group_counts(self) -> dict[str, int]:
        counts = Counter(g["state"] for g in self.groups.values())
        return {state: counts.get(state, 0) for state in ("placed", "partly placed", "not placed")}

    def to_json(self) -> dict[str, object]:
        return {
            "config": self.config,
            "schedulerName": self.scheduler_name,
            "attempts": self.attempts,
            "nodes": [
                {
                    "name": n.name,
                    "pods": n.pods,
                    "cpu": {"requested": n.cpu_requested, "allocatable": n.cpu_allocatable},
                    "memory": {"requested": n.memory_requested, "allocatable": n.memory_allocatable},
                    "cpuUtilisation": round(n.cpu_utilisation, 4),
                }
                for n in self.nodes
            ],
            "pending": self.pending,
            "messages": self.messages,
            "groups": self.groups,
            "groupCounts": self.group_counts() if self.groups else {},
            "quotas": self.quotas,
            "spread": {"nodesUsed": self.nodes_used, "cpuUtilisationStdDev": round(self.spread, 4)},
        }


def _node_template(data: dict[str, Any]) -> NodeTemplate:  # Any: as NodeSpec.template
    return NodeTemplate.from_node(data, zones=tuple(data.get("zones", ())) or ("zone-a", "zone-b", "zone-c"))


# Any: a manifest as the file has it, converted to its kind's class (its apiVersion read as text)
def _object(data: dict[str, Any], store: MemoryStore, where: str) -> Served:
    api_version, kind = data.get("apiVersion", ""), data.get("kind", "")
    for served in store.kinds():
        if served.api_version == api_version and served.kind == kind:
            return msgspec.convert(data, served.cls)
    group, _, version = api_version.rpartition("/")
    raise WorkloadError(f"{where}: kind {kind} ({group or 'core'}/{version}) is not served (a CRD missing?)")


async def _simulate(
    workload: Workload, config: SchedulerConfig, registry: Registry, *, label: str, seed: int, clock: VirtualClock
) -> Report:
    spec = workload.spec
    store = MemoryStore(clock=clock, seed=seed, watch_latency=0.001)
    for path in spec.crds:
        try:
            data = yamlfile.load(workload.root / path)
        except yamlfile.YamlError as e:
            raise WorkloadError(f"crds: {e}") from None
        store.create(msgspec.convert(data, apiextensions_v1.CustomResourceDefinition))
    for nodes in spec.nodes:
        template = _node_template(nodes.template)
        for j in range(nodes.count):
            store.create(template.make(f"{nodes.prefix}{j}", j))
    for i, data in enumerate(spec.objects):
        store.create(_object(data, store, f"objects[{i}]"))
    name = config.profiles[0].scheduler_name
    cluster = MemoryCluster(store)
    scheduler = Scheduler(
        cluster, clock, config, registry, seed=seed, identity="compare", attempt_seconds=ATTEMPT_SECONDS
    )
    kubelets = FakeKubelets(cluster, clock, config=KubeletConfig(start_seconds=0.5, stop_seconds=0.5))
    tasks = [asyncio.ensure_future(scheduler.run()), asyncio.ensure_future(kubelets.run())]
    start = clock.now()
    schedule = sorted(
        (pods.at + j * pods.every, j, i) for i, pods in enumerate(spec.pods) for j in range(pods.count)
    )  # by time, then round-robin over the entries
    for at, j, i in schedule:
        pods = spec.pods[i]
        await clock.sleep(max(0.0, start + at - clock.now()))
        body = msgspec.json.decode(msgspec.json.encode(pods.template))
        body.setdefault("metadata", {})["name"] = pods.name.format(i=j)
        body.setdefault("spec", {})["schedulerName"] = name
        try:
            pod = decoder(core_v1.Pod).decode(msgspec.json.encode({"apiVersion": "v1", "kind": "Pod", **body}))
        except msgspec.ValidationError as e:
            raise WorkloadError(f"pods[{i}].template: {e}") from None
        store.create(pod)
    await clock.sleep(max(0.0, start + spec.horizon - clock.now()))
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return report_of(store, label, name, scheduler.attempts)


def report_of(store: MemoryStore, label: str, scheduler_name: str, attempts: int) -> Report:
    """The report of a configuration's run from the store it ended with (`compare`, `replay --ui`)."""
    pods: list[core_v1.Pod] = store.list(core_v1.Pod).items
    by_node: dict[str, list[core_v1.Pod]] = {}
    for pod in pods:
        if node_name := _node_of(pod):
            by_node.setdefault(node_name, []).append(pod)
    nodes = []
    for node in store.list(core_v1.Node).items:
        alloc = (node.status.allocatable if node.status else None) or {}
        here = by_node.get(node.metadata.name, [])
        requests = [pod_requests(p) for p in here]
        nodes.append(
            NodeReport(
                node.metadata.name,
                sorted(_pod_key(p) for p in here),
                sum(r.get("cpu", 0) for r in requests),
                milli_value(alloc.get("cpu", "0")),
                sum(r.get("memory", 0) for r in requests),
                int_value(alloc.get("memory", "0")),
            )
        )
    last: dict[str, tuple[float, str]] = {}
    for event in store.list(events_v1.Event).items:
        if event.reason == "FailedScheduling" and event.regarding is not None:
            key = f"{event.regarding.namespace}/{event.regarding.name}"
            when = event.eventTime.timestamp() if event.eventTime else 0.0
            if key not in last or when >= last[key][0]:
                last[key] = (when, event.note or "")
    pending = sorted(_pod_key(p) for p in pods if not _node_of(p))
    messages = Counter(last[p][1] for p in pending if p in last)
    report = Report(label, scheduler_name, nodes, pending, dict(sorted(messages.items())), attempts=attempts)
    report.groups = _groups(store, pods)
    report.quotas = _quotas(store, pods)
    return report


def _node_of(pod: core_v1.Pod) -> str | None:
    return present(pod.spec, "the pod's spec").nodeName


def _pod_key(pod: core_v1.Pod) -> str:
    meta = meta_of(pod)
    return f"{meta.namespace}/{meta.name}"


def _served(store: MemoryStore, group: str, kind: str) -> type[Served] | None:
    for served in store.kinds():
        if served.group == group and served.kind == kind:
            return served.cls
    return None


def _groups(store: MemoryStore, pods: list[core_v1.Pod]) -> dict[str, dict[str, object]]:
    cls = _served(store, "scheduling.x-k8s.io", "PodGroup")
    minimum: dict[str, int] = {}
    if cls is not None:
        for pg in store.list(cls).items:
            spec = msgspec.to_builtins(pg.spec) if pg.spec is not None else {}
            minimum[f"{pg.metadata.namespace}/{pg.metadata.name}"] = int(spec.get("minMember", 0) or 0)
    members: dict[str, list[core_v1.Pod]] = {}
    for pod in pods:
        meta = meta_of(pod)
        label = (meta.labels or {}).get(POD_GROUP_LABEL)
        if label:
            members.setdefault(f"{meta.namespace}/{label}", []).append(pod)
    out: dict[str, dict[str, object]] = {}
    for key, group in sorted(members.items()):
        placed = sum(1 for p in group if _node_of(p))
        need = minimum.get(key, len(group))
        state = "placed" if placed >= need and placed else "partly placed" if placed else "not placed"
        out[key] = {"placed": placed, "pods": len(group), "minMember": need, "state": state}
    return out


def _quotas(store: MemoryStore, pods: list[core_v1.Pod]) -> dict[str, dict[str, int]]:
    cls = _served(store, "scheduling.x-k8s.io", "ElasticQuota")
    if cls is None:
        return {}
    out: dict[str, dict[str, int]] = {}
    for quota in store.list(cls).items:
        spec = msgspec.to_builtins(quota.spec) if quota.spec is not None else {}
        ns = quota.metadata.namespace
        used = sum(pod_requests(p).get("cpu", 0) for p in pods if meta_of(p).namespace == ns and _node_of(p))
        out[ns] = {
            "cpuUsed": used,
            "cpuMin": milli_value((spec.get("min") or {}).get("cpu", 0)),
            "cpuMax": milli_value((spec.get("max") or {}).get("cpu", 0)) if (spec.get("max") or {}).get("cpu") else -1,
        }
    return out


def compare(
    workload: Workload, configs: list[tuple[str, SchedulerConfig]], registry: Registry, *, seed: int = 0
) -> list[Report]:
    """Run `workload` once per configuration (each on a cluster and clock of its own)."""
    reports = []
    for label, config in configs:
        clock = VirtualClock()
        try:
            reports.append(clock.run(_simulate(workload, config, registry, label=label, seed=seed, clock=clock)))
        finally:
            clock.close()
    return reports


def summary(reports: list[Report]) -> list[tuple[str, list[str]]]:
    """The comparison's headline rows: a label and one cell per configuration."""
    rows = [
        ("pods bound", [str(sum(len(n.pods) for n in r.nodes)) for r in reports]),
        ("pods pending", [str(len(r.pending)) for r in reports]),
        ("nodes used", [f"{r.nodes_used}/{len(r.nodes)}" for r in reports]),
        ("cpu utilisation std dev", [f"{r.spread:.3f}" for r in reports]),
        ("scheduling attempts", [str(r.attempts) for r in reports]),
    ]
    if any(r.groups for r in reports):
        for state in ("placed", "partly placed", "not placed"):
            rows.append((f"PodGroups {state}", [str(r.group_counts().get(state, 0)) for r in reports]))
    return rows


def bars(fraction: float, width: int = 20) -> str:
    """A bar of `width` cells, filled by `fraction` (clamped to [0, 1])."""
    filled = max(0, min(width, math.floor(fraction * width + 0.5)))
    return "█" * filled + "·" * (width - filled)


def svg(reports: list[Report]) -> str:
    """Per-node CPU utilisation of each configuration, side by side, as an SVG picture."""
    node_names = [n.name for n in reports[0].nodes] if reports else []
    panel_w, bar_h, gap, left, top = 320, 18, 6, 110, 40
    height = top + len(node_names) * (bar_h + gap) + 40
    width = left + len(reports) * (panel_w + 30)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    for i, name in enumerate(node_names):
        y = top + i * (bar_h + gap)
        parts.append(f'<text x="{left - 8}" y="{y + bar_h - 5}" text-anchor="end">{_escape(name)}</text>')
    for k, report in enumerate(reports):
        x = left + k * (panel_w + 30)
        title = f"{report.config} ({report.nodes_used} nodes used, {len(report.pending)} pending)"
        parts.append(f'<text x="{x}" y="{top - 14}" font-weight="bold">{_escape(title)}</text>')
        for i, node in enumerate(report.nodes):
            y = top + i * (bar_h + gap)
            fill = min(1.0, node.cpu_utilisation) * panel_w
            parts.append(f'<rect x="{x}" y="{y}" width="{panel_w}" height="{bar_h}" fill="#eeeeee"/>')
            parts.append(f'<rect x="{x}" y="{y}" width="{fill:.1f}" height="{bar_h}" fill="#3b7dd8"/>')
            label = f"{node.cpu_utilisation:.0%} cpu, {len(node.pods)} pods"
            parts.append(f'<text x="{x + 4}" y="{y + bar_h - 5}" fill="#111111">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["Report", "Workload", "WorkloadError", "bars", "compare", "load_workload", "summary", "svg"]
