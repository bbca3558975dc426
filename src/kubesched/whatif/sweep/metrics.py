"""What a sweep measures of each point, and how a package adds measures of its own.

Every metric has a name, a sentence saying what it is, and which way is better (`min` or `max`,
for the report's best points and Pareto fronts). The built-in ones are taken from the cluster a
point's run ends with and from what the run saw happen (`Outcome`). A metric of your own is a
`Metric` whose `measure(outcome)` gives a number (or None where it does not apply); a sweep file
names it in `metrics: [file.py:NAME]`, and an installed package declares it under the entry-point
group `kubesched.metrics` (a `Metric` or a list of them) for every sweep.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Literal

from lightkube.resources import core_v1

from kubesched.api.objects import meta_of, present
from kubesched.api.quantity import int_value, milli_value
from kubesched.api.resources import pod_requests
from kubesched.scheduler.discovery import PluginLoadError, load_object

ENTRY_POINT_GROUP = "kubesched.metrics"
ZONE_LABEL = "topology.kubernetes.io/zone"
RESOURCES = ("cpu", "memory")

Better = Literal["min", "max"]


@dataclass
class Outcome:
    """How a point's run ended: the nodes and pods at the end, and what the run saw (seconds are
    virtual, from the run's start)."""

    nodes: Sequence[core_v1.Node]
    pods: Sequence[core_v1.Pod]
    arrived: dict[str, float] = field(default_factory=dict)  # pod key -> when it was first seen pending
    bound: dict[str, float] = field(default_factory=dict)  # pod key -> when it was first seen bound
    preempted: set[str] = field(default_factory=set)  # victims of preemption
    attempts: int = 0  # scheduling attempts
    horizon: float = 0.0
    _nodes: _Nodes | None = field(default=None, init=False, repr=False)

    @property
    def per_node(self) -> _Nodes:
        """Allocatable and requested per node (worked out once)."""
        if self._nodes is None:
            self._nodes = _Nodes(self)
        return self._nodes

    def waits(self) -> list[float]:
        """Seconds from arrival to binding of each pod this run placed (to 10 microseconds: the
        virtual clock's epoch seconds carry no finer)."""
        return sorted(round(self.bound[k] - self.arrived[k], 5) for k in self.bound if k in self.arrived)


@dataclass(frozen=True)
class Metric:
    name: str
    description: str
    better: Better
    measure: Callable[[Outcome], float | int | None]


def _key(pod: core_v1.Pod) -> str:
    meta = meta_of(pod)
    return f"{meta.namespace}/{meta.name}"


def _node_of(pod: core_v1.Pod) -> str | None:
    return present(pod.spec, "the pod's spec").nodeName


def _percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile by nearest rank (None for no values)."""
    if not values:
        return None
    rank = max(0, min(len(values) - 1, int(-(-q * len(values) // 100)) - 1))
    return round(values[rank], 6)


class _Nodes:
    """Per node: allocatable and requested (cpu in milli-CPU, memory in bytes, pods)."""

    def __init__(self, outcome: Outcome) -> None:
        self.allocatable: dict[str, dict[str, int]] = {}
        self.requested: dict[str, Counter[str]] = {}
        self.zone: dict[str, str] = {}
        for node in outcome.nodes:
            meta = meta_of(node)
            name = meta.name or ""
            alloc = (node.status.allocatable if node.status else None) or {}
            self.allocatable[name] = {
                "cpu": milli_value(alloc.get("cpu", "0")),
                "memory": int_value(alloc.get("memory", "0")),
                "pods": int_value(alloc.get("pods", "0")),
            }
            self.requested[name] = Counter()
            self.zone[name] = (meta.labels or {}).get(ZONE_LABEL, "")
        self.typical: dict[str, float] = {}
        sizes: dict[str, list[int]] = defaultdict(list)
        for pod in outcome.pods:
            requests = pod_requests(pod)
            for resource in RESOURCES:
                sizes[resource].append(requests.get(resource, 0))
            bound = _node_of(pod)
            if bound in self.requested:
                used = self.requested[bound]
                for resource in RESOURCES:
                    used[resource] += requests.get(resource, 0)
                used["pods"] += 1
        self.typical = {r: statistics.median(v) for r, v in sizes.items() if v}

    def used(self) -> list[str]:
        return [n for n, used in self.requested.items() if used["pods"]]

    def free(self, node: str, resource: str) -> int:
        return max(0, self.allocatable[node][resource] - self.requested[node][resource])

    def fits_typical(self, node: str) -> bool:
        if self.free(node, "pods") < 1:
            return False
        return all(self.free(node, r) >= self.typical.get(r, 0) for r in RESOURCES)


def _utilisation(resource: str) -> Callable[[Outcome], float | None]:
    def measure(outcome: Outcome) -> float | None:
        nodes = outcome.per_node
        used = nodes.used()
        total = sum(nodes.allocatable[n][resource] for n in used)
        return round(sum(nodes.requested[n][resource] for n in used) / total, 6) if total else None

    return measure


def _fragmentation(resource: str) -> Callable[[Outcome], float | None]:
    def measure(outcome: Outcome) -> float | None:
        nodes = outcome.per_node
        free = {n: nodes.free(n, resource) for n in nodes.allocatable}
        total = sum(free.values())
        if not total:
            return None
        stranded = sum(f for n, f in free.items() if not nodes.fits_typical(n))
        return round(stranded / total, 6)

    return measure


def _groups(pods: Iterable[core_v1.Pod]) -> dict[tuple[tuple[str, str], ...], list[core_v1.Pod]]:
    """Bound pods by their labels (pods of one template share them)."""
    out: dict[tuple[tuple[str, str], ...], list[core_v1.Pod]] = defaultdict(list)
    for pod in pods:
        if _node_of(pod):
            out[tuple(sorted((meta_of(pod).labels or {}).items()))].append(pod)
    return out


def _zone_skew(outcome: Outcome) -> int | None:
    zone = outcome.per_node.zone
    zones = sorted(set(zone.values()) - {""})
    if len(zones) < 2:
        return None
    skews = []
    for members in _groups(outcome.pods).values():
        counts = Counter(zone.get(_node_of(p) or "", "") for p in members)
        skews.append(max(counts[z] for z in zones) - min(counts[z] for z in zones))
    return max(skews, default=0)


def _node_skew(outcome: Outcome) -> int | None:
    names = [meta_of(n).name for n in outcome.nodes]
    if len(names) < 2:
        return None
    skews = []
    for members in _groups(outcome.pods).values():
        counts = Counter(_node_of(p) for p in members)
        skews.append(max(counts[n] for n in names) - min(counts[n] for n in names))
    return max(skews, default=0)


def _placed(outcome: Outcome) -> int:
    return sum(1 for p in outcome.pods if _node_of(p) and _key(p) in outcome.bound)


def _unplaced(outcome: Outcome) -> int:
    return sum(1 for p in outcome.pods if not _node_of(p))


BUILTIN: tuple[Metric, ...] = (
    Metric("placed", "pods this run bound that are bound at the end", "max", _placed),
    Metric("unplaced", "pods still pending at the end (the horizon, or all others bound)", "min", _unplaced),
    Metric(
        "waitP50",
        "median virtual seconds from a pod's arrival to its binding (pods this run bound)",
        "min",
        lambda o: _percentile(o.waits(), 50),
    ),
    Metric("waitP99", "99th percentile of the same", "min", lambda o: _percentile(o.waits(), 99)),
    Metric(
        "makespan",
        "virtual seconds from the start to the last binding",
        "min",
        lambda o: round(max(o.bound.values()), 6) if o.bound else None,
    ),
    Metric("preemptions", "pods evicted as preemption victims", "min", lambda o: len(o.preempted)),
    Metric("attempts", "scheduling attempts (each pod's first and every retry)", "min", lambda o: o.attempts),
    Metric("nodesUsed", "nodes with at least one pod at the end", "min", lambda o: len(o.per_node.used())),
    Metric("cpuUtilisation", "CPU requested over allocatable, on the nodes used", "max", _utilisation("cpu")),
    Metric("memoryUtilisation", "memory requested over allocatable, on the nodes used", "max", _utilisation("memory")),
    Metric(
        "cpuFragmentation",
        "share of the free CPU on nodes that cannot take one more median pod (by CPU, memory or pod slots)",
        "min",
        _fragmentation("cpu"),
    ),
    Metric("memoryFragmentation", "the same for memory", "min", _fragmentation("memory")),
    Metric(
        "zoneSkew",
        "the largest difference, over pods of the same labels, between the zones with most and fewest of them",
        "min",
        _zone_skew,
    ),
    Metric("nodeSkew", "the same between nodes", "min", _node_skew),
)
WALL = Metric("wallSeconds", "real seconds the point took to run (not deterministic)", "min", lambda o: None)


def declared(specs: Sequence[str] = (), *, entry_points: bool = True) -> list[Metric]:
    """The metrics installed packages declare (entry points `kubesched.metrics`) and those `specs`
    (`module:attr`, `file.py:attr`) name, each a Metric or a list of them; PluginLoadError naming
    the source of one that is not."""
    found: list[tuple[object, str]] = []
    if entry_points:
        for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            where = f'metric "{ep.name}" ({ep.dist.name if ep.dist else "?"})'
            found.append((load_object(ep.value, where), where))
    found += [(load_object(spec, f"metrics: {spec}"), f"metrics: {spec}") for spec in specs]
    out: list[Metric] = []
    names = {m.name for m in (*BUILTIN, WALL)}
    for obj, where in found:
        for metric in obj if isinstance(obj, list | tuple) else [obj]:
            if not isinstance(metric, Metric):
                raise PluginLoadError(f"{where}: expected a kubesched Metric, got {type(metric).__name__}")
            if metric.better not in ("min", "max"):
                raise PluginLoadError(f"{where}: {metric.name}: better is 'min' or 'max', not {metric.better!r}")
            if metric.name in names:
                raise PluginLoadError(f"{where}: a metric named {metric.name} is already measured")
            names.add(metric.name)
            out.append(metric)
    return out


def measure(outcome: Outcome, metrics: Sequence[Metric]) -> dict[str, object]:
    """Each metric's value for `outcome` (a number, or None where it does not apply)."""
    return {m.name: m.measure(outcome) for m in metrics}
