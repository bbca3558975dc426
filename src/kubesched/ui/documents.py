"""The JSON the UI's pages are drawn from, made from what one scheduler sees: the cluster (nodes
with their gauges and pods, and the pods waiting for a node), one pod (its status, every recorded
attempt explained, its timeline), the queue, and the scheduler's profiles."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec
from lightkube.models import core_v1

from kubesched.api.errors import FieldError
from kubesched.api.objects import meta_of, namespace_of, present
from kubesched.api.resources import cpu_and_memory
from kubesched.api.selectors import parse_label_selector
from kubesched.cache.resource import Resource
from kubesched.clock.base import rfc3339
from kubesched.framework.args import decode_args
from kubesched.framework.interface import ExtensionPoint
from kubesched.scheduler.explain import explain_pod
from kubesched.scheduler.server import queue_document
from kubesched.trace import Record
from kubesched.ui.mirror import Mirror

if TYPE_CHECKING:
    from kubesched.api.selectors import LabelSelectorMatcher
    from kubesched.scheduler import Scheduler

DEFAULT_SCHEDULER = "default-scheduler"

Document = dict[str, object]  # a JSON document a page is drawn from


class BadParameter(ValueError):
    """A query parameter the UI cannot use: its message names the parameter (a 400)."""


@dataclass(frozen=True, slots=True)
class PodFilter:
    """Which pods a page shows: by namespace, label selector and scheduler name (empty: any)."""

    namespace: str = ""
    selector: LabelSelectorMatcher | None = None
    scheduler: str = ""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> PodFilter:
        """From `?namespace=&label=&scheduler=`; BadParameter naming a selector that does not parse."""
        label = query.get("label", "")
        try:
            selector = parse_label_selector(label) if label else None
        except FieldError as e:
            raise BadParameter(f"label: {e.detail}") from None
        return cls(query.get("namespace", ""), selector, query.get("scheduler", ""))

    def admits(self, pod: core_v1.Pod) -> bool:
        return self.admits_fields(
            namespace_of(pod), _spec(pod).schedulerName or DEFAULT_SCHEDULER, meta_of(pod).labels or {}
        )

    def admits_fields(self, namespace: str, scheduler: str, labels: Mapping[str, str] | None) -> bool:
        """Whether a pod of this namespace, scheduler name and labels is shown (labels None: not
        known, as in a recording; then a selector admits none)."""
        if self.namespace and namespace != self.namespace:
            return False
        if self.scheduler and scheduler != self.scheduler:
            return False
        return self.selector is None or (labels is not None and self.selector.matches(labels))


def _spec(pod: core_v1.Pod) -> core_v1.PodSpec:
    return present(pod.spec, "the pod's spec")


def status_chip(pod: core_v1.Pod) -> str:
    """The word a pod's status chip shows: Terminating, the reason it waits for a node
    (Unschedulable, SchedulingGated), or its phase."""
    if meta_of(pod).deletionTimestamp is not None:
        return "Terminating"
    status = pod.status
    phase = (status.phase if status is not None else None) or "Pending"
    if phase == "Pending" and not _spec(pod).nodeName and status is not None:
        for condition in status.conditions or ():
            if condition.type == "PodScheduled" and condition.status == "False" and condition.reason:
                return str(condition.reason)
    if phase == "Failed" and status is not None and status.reason:
        return str(status.reason)
    return str(phase)


def pod_summary(pod: core_v1.Pod) -> Document:
    """A pod as its own page shows it: `pod_brief` and its phase, priority, requests and labels."""
    status = pod.status
    meta = meta_of(pod)
    return {
        **pod_brief(pod),
        "namespace": meta.namespace,
        "name": meta.name,
        "nominatedNode": (status.nominatedNodeName if status is not None else None) or None,
        "phase": (status.phase if status is not None else None) or "Pending",
        "priority": _spec(pod).priority or 0,
        "requests": cpu_and_memory(pod),
        "labels": dict(meta.labels or {}),
    }


def pod_brief(pod: core_v1.Pod) -> Document:
    """A pod as the cluster page and the live stream carry it: only what a node's card draws."""
    status = pod.status
    meta, spec = meta_of(pod), _spec(pod)
    out: Document = {
        "key": f"{meta.namespace}/{meta.name}",
        "node": spec.nodeName or None,
        "chip": status_chip(pod),
        "scheduler": spec.schedulerName or DEFAULT_SCHEDULER,
    }
    nominated = status.nominatedNodeName if status is not None else None
    if nominated:
        out["nominatedNode"] = nominated
    return out


def node_summary(mirror: Mirror, name: str) -> Document | None:
    """A node as the cluster page draws it: cordon, taints, labels, and cpu, memory and pods
    requested (assumed pods included) against allocatable, as the scheduler's cache counts them."""
    node = mirror.nodes.get(name)
    if node is None:
        return None
    info = mirror.scheduler.cache.nodes.get(name)
    requested = info.requested if info is not None else None
    allocatable = info.allocatable if info is not None else None
    spec = node.spec
    return {
        "name": name,
        "cordoned": bool(spec is not None and spec.unschedulable),
        "taints": [
            {"key": t.key, "value": t.value or "", "effect": t.effect} for t in ((spec.taints if spec else None) or ())
        ],
        "labels": dict(meta_of(node).labels or {}),
        "allocatable": _amounts(allocatable),
        "requested": {**_amounts(requested), "pods": len(info.pods) if info is not None else 0},
        "pods": sorted(mirror.on_node.get(name, ())),
    }


def _amounts(resource: Resource | None) -> dict[str, int]:
    if resource is None:
        return {"cpu": 0, "memory": 0, "pods": 0}
    return {"cpu": resource.cpu, "memory": resource.memory, "pods": resource.pods}


def cluster_document(mirror: Mirror, where: PodFilter) -> Document:
    """Every node with its gauges and pods, and the pods not bound to a node (with their place in
    the queue when this scheduler holds them), as `where` admits them."""
    pods = {key: pod for key, pod in mirror.pods.items() if where.admits(pod)}
    pending = {p.key: p for p in mirror.scheduler.queue.snapshot()}
    nodes = []
    for name in sorted(mirror.nodes):
        summary = node_summary(mirror, name)
        assert summary is not None
        summary["pods"] = [key for key in sorted(mirror.on_node.get(name, ())) if key in pods]
        nodes.append(summary)
    unscheduled = []
    for key in sorted(pods):
        pod = pods[key]
        if not _spec(pod).nodeName:
            entry = pod_brief(pod)
            waiting = pending.get(key)
            entry["queue"] = waiting.queue if waiting is not None else None
            unscheduled.append(entry)
    return {
        "version": mirror.version,
        "nodes": nodes,
        "pods": [pod_brief(pods[key]) for key in sorted(pods) if _spec(pods[key]).nodeName],
        "unscheduled": unscheduled,
        "pending": mirror.scheduler.queue.pending(),
    }


def pod_document(mirror: Mirror, key: str) -> Document | None:
    """One pod: its summary and conditions, every recorded attempt explained (the document
    `kubesched explain` prints), its place in the queue, and its timeline; None for a pod this
    scheduler has not seen."""
    pod = mirror.pods.get(key)
    if pod is None:
        return None
    status = pod.status
    waiting = next((p for p in mirror.scheduler.queue.snapshot() if p.key == key), None)
    return {
        "pod": pod_summary(pod),
        "conditions": [
            {
                "type": c.type,
                "status": c.status,
                "reason": c.reason or "",
                "message": c.message or "",
                "lastTransitionTime": rfc3339_text(c.lastTransitionTime),
            }
            for c in ((status.conditions if status is not None else None) or ())
        ],
        "queue": queue_document({}, [waiting])["pods"][0] if waiting is not None else None,
        "explain": explain_pod(mirror.scheduler, key),
        "timeline": timeline(mirror, key),
        "tracing": mirror.tracing,
    }


def events_of(events: Iterable[core_v1.Event]) -> list[Document]:
    """Events as a detail page lists them, the latest last: type, reason, message, how many times,
    when last, and who reported them."""
    rows: list[Document] = []
    for event in events:
        last = event.lastTimestamp or event.eventTime or event.firstTimestamp or meta_of(event).creationTimestamp
        source = event.reportingComponent or (event.source.component if event.source else None) or ""
        rows.append(
            {
                "type": event.type or "",
                "reason": event.reason or "",
                "message": event.message or "",
                "count": (event.series.count if event.series else None) or event.count or 1,
                "last": rfc3339_text(last),
                "from": source,
            }
        )
    return sorted(rows, key=lambda r: str(r["last"] or ""))


def rfc3339_text(value: datetime | str | None) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else rfc3339(value.timestamp())


def timeline(mirror: Mirror, key: str) -> list[Document]:
    """The pod's trace records, oldest first."""
    return [timeline_row(record) for record in mirror.timelines.get(key, ())]


def timeline_row(record: Record) -> Document:
    """A trace record as a pod's timeline shows it: what happened, when, and both code sites."""
    return {
        "time": rfc3339(record.time),
        "seconds": record.time,
        "kind": record.kind,
        "node": record.node,
        "details": record.details,
        "site": record.site,
        "upstream": list(record.upstream),
    }


def queue_page(mirror: Mirror) -> Document:
    """The queue: `scheduler_pending_pods`' counts and every pending pod with what may wake it, and
    for a pod backing off, the seconds left (`backoffSeconds`)."""
    queue = mirror.scheduler.queue
    pods = queue.snapshot()
    document = queue_document(queue.pending(), pods)
    now = mirror.scheduler.clock.now()
    for entry, pod in zip(document["pods"], pods, strict=True):
        if pod.backoff_until is not None:
            entry["backoffSeconds"] = max(0.0, pod.backoff_until - now)
    document["now"] = rfc3339(now)
    return document


GLANCE = (  # the metrics the scheduler page shows, as /metrics names them
    "scheduler_schedule_attempts_total",
    "scheduler_pending_pods",
    "scheduler_unschedulable_pods",
    "scheduler_preemption_attempts_total",
    "scheduler_pod_scheduling_attempts_count",
    "scheduler_pod_scheduling_attempts_sum",
)


def scheduler_document(mirror: Mirror) -> Document:
    """The scheduler's profiles (each extension point's plugins in the order they run, score
    weights, each plugin's arguments as configured and defaulted), and its metrics at a glance."""
    scheduler = mirror.scheduler
    configured = {p.scheduler_name: p for p in scheduler.config.profiles}
    profiles = []
    for name, fwk in scheduler.profiles.items():
        points = {str(point): fwk.names(point) for point in ExtensionPoint if fwk.names(point)}
        profile = configured.get(name)
        given = profile.args if profile else {}
        args: Document = {}
        for plugin in sorted({p for names in points.values() for p in names}):
            entry = scheduler.registry.get(plugin)
            if plugin in given:
                args[plugin] = _plain(given[plugin])
            elif entry is not None and entry.args_type is not None:  # not configured: its defaults
                args[plugin] = _plain(decode_args(None, entry.args_type))
        profiles.append({"name": name, "points": points, "weights": fwk.score_weights(), "args": args})
    return {
        "profiles": profiles,
        "cache": scheduler.cache.sizes(),
        "pending": scheduler.queue.pending(),
        "metrics": metrics_at_a_glance(scheduler),
    }


def metrics_at_a_glance(scheduler: Scheduler) -> list[Document]:
    """The samples of the GLANCE metrics: name, labels, value."""
    samples = [
        sample for family in scheduler.metrics.registry.collect() for sample in family.samples if sample.name in GLANCE
    ]
    samples.sort(key=lambda s: (GLANCE.index(s.name), sorted(s.labels.items())))
    return [{"name": s.name, "labels": dict(s.labels), "value": s.value} for s in samples]


def _plain(value: object) -> object:
    """A plugin's arguments as a configuration spells them (None fields left out)."""
    data = msgspec.to_builtins(value)
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if k not in ("kind", "apiVersion") and v is not None}
    return data


def changed_documents(mirror: Mirror, pods: Iterable[str], nodes: Iterable[str]) -> Document:
    """What the live stream sends for changed pods and nodes: each one's summary, or its key
    among the removed."""
    briefs: list[Document] = []
    summaries: list[Document] = []
    removed_pods: list[str] = []
    removed_nodes: list[str] = []
    for key in pods:
        pod = mirror.pods.get(key)
        if pod is None:
            removed_pods.append(key)
        else:
            briefs.append(pod_brief(pod))
    for name in nodes:
        summary = node_summary(mirror, name)
        if summary is None:
            removed_nodes.append(name)
        else:
            summaries.append(summary)
    return {
        "version": mirror.version,
        "pods": briefs,
        "nodes": summaries,
        "removedPods": removed_pods,
        "removedNodes": removed_nodes,
    }
