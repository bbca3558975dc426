"""A point's simulation, read from its document: the cluster it starts from, the pods that arrive
and when, the scheduler that places them, and the metrics to take at the end.

    seed: 3
    cluster:
      nodes: [{name: node, count: 500, capacity: {cpu: "8", memory: 32Gi, pods: "110"}}]
      snapshot: cluster.json         # and/or: a saved cluster (kubesched snapshot save)
      bench: SchedulingBasic/500Nodes # or: a workload of the bench catalogue (its nodes and pods)
      objects: []                    # PriorityClasses, budgets, namespaces
      kubelets: true                 # fake kubelets run the bound pods (victims then go away)
      controllers: ""                # kube-controller-manager's --controllers ("" runs none)
    workload:
      horizon: 60s                   # virtual time the run may take at most
      objects: []
      pods: [{count: 100, name: "web-{i}", at: 0, every: 0.01, template: {metadata: ..., spec: ...}}]
    scheduler: {config: {...KubeSchedulerConfiguration...}, plugins: ["rest_day.py:NoSundays"]}
    metrics: ["metrics.py:GANGS"]    # metrics of your own (see `metrics`)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kubesched.config.types import API_VERSION, KIND
from kubesched.whatif.scenario.fields import ScenarioError, boolean, duration, each, integer, mapping, only, text
from kubesched.whatif.scenario.spec import NodeGroup, plugin_ref, read_node_group

DEFAULT_HORIZON = 60.0

_CLUSTER = {"nodes", "snapshot", "bench", "objects", "kubelets", "controllers"}
_WORKLOAD = {"horizon", "objects", "pods"}
_PODS = {"count", "name", "namespace", "at", "every", "template"}
_SCHEDULER = {"config", "plugins"}
_TOP = {"seed", "cluster", "workload", "scheduler", "metrics"}  # a point's document


@dataclass(frozen=True)
class Pods:
    """`count` pods named from `name` (`{i}` the index), the first at `at` seconds, one every
    `every` seconds, made from `template` (a Pod's metadata and spec)."""

    count: int
    name: str
    namespace: str
    at: float
    every: float
    template: dict[str, object]


@dataclass(frozen=True)
class Bench:
    workload: str  # TestCase/Workload of the bench catalogue
    params: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    root: Path  # where the file's relative paths start
    seed: int
    nodes: tuple[NodeGroup, ...]
    pods: tuple[Pods, ...]
    config: dict[str, object]
    snapshot: Path | None = None
    bench: Bench | None = None
    objects: tuple[dict[str, object], ...] = ()
    kubelets: bool = True
    controllers: str = ""
    horizon: float = DEFAULT_HORIZON
    plugins: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()

    def arrivals(self) -> list[tuple[float, int, int]]:
        """(seconds from the start, index within its entry, entry) of each pod, in order of time
        and then round-robin over the entries."""
        return sorted((p.at + j * p.every, j, i) for i, p in enumerate(self.pods) for j in range(p.count))


def read(document: dict[str, object], root: Path) -> Plan:
    """The plan in a point's document; ScenarioError naming the field when it cannot be one."""
    only(document, _TOP, "the sweep")
    cluster = mapping(document.get("cluster") or {}, "cluster")
    only(cluster, _CLUSTER, "cluster")
    workload = mapping(document.get("workload") or {}, "workload")
    only(workload, _WORKLOAD, "workload")
    scheduler = mapping(document.get("scheduler") or {}, "scheduler")
    only(scheduler, _SCHEDULER, "scheduler")
    config = mapping(scheduler.get("config") or {}, "scheduler.config")
    config = {"apiVersion": API_VERSION, "kind": KIND, **config}
    nodes = tuple(each(cluster.get("nodes", []), "cluster.nodes", read_node_group))
    names = [g.name for g in nodes]
    if len(set(names)) != len(names):
        raise ScenarioError("cluster.nodes: each group needs a name of its own (the nodes are named <name>-<i>)")
    bench = _bench(cluster["bench"]) if "bench" in cluster else None
    pods = tuple(each(workload.get("pods", []), "workload.pods", _pods))
    if not pods and bench is None:
        raise ScenarioError("workload.pods: a workload needs pods (or cluster.bench, whose pods they are)")
    if not nodes and bench is None and "snapshot" not in cluster:
        raise ScenarioError("cluster: needs nodes, a snapshot or a bench workload")
    controllers = cluster.get("controllers", "")
    if not isinstance(controllers, str):
        raise ScenarioError(
            f"cluster.controllers: expected a list such as 'replicaset,job' in a string, got {controllers!r}"
        )
    return Plan(
        root=root,
        seed=integer(document.get("seed", 0), "seed"),
        nodes=nodes,
        pods=pods,
        config=config,
        snapshot=root / text(cluster["snapshot"], "cluster.snapshot") if "snapshot" in cluster else None,
        bench=bench,
        objects=tuple(
            each(cluster.get("objects", []), "cluster.objects", _manifest)
            + each(workload.get("objects", []), "workload.objects", _manifest)
        ),
        kubelets=boolean(cluster.get("kubelets", True), "cluster.kubelets"),
        controllers=controllers,
        horizon=duration(workload.get("horizon", DEFAULT_HORIZON), "workload.horizon"),
        plugins=tuple(each(scheduler.get("plugins", []), "scheduler.plugins", lambda p, at: plugin_ref(p, root, at))),
        metrics=tuple(each(document.get("metrics", []), "metrics", lambda p, at: plugin_ref(p, root, at))),
    )


def _bench(value: object) -> Bench:
    if isinstance(value, str):
        return Bench(text(value, "cluster.bench"))
    body = mapping(value, "cluster.bench")
    only(body, {"workload", "params"}, "cluster.bench")
    params = mapping(body.get("params") or {}, "cluster.bench.params")
    return Bench(
        text(body.get("workload"), "cluster.bench.workload"),
        {k: integer(v, f"cluster.bench.params.{k}") for k, v in params.items()},
    )


def _pods(value: object, where: str) -> Pods:
    body = mapping(value, where)
    only(body, _PODS, where)
    template = mapping(body.get("template") or {}, f"{where}.template")
    for key in template:
        if key not in ("apiVersion", "kind", "metadata", "spec"):
            raise ScenarioError(f"{where}.template: unknown field {key!r} (a Pod's metadata and spec)")
    name = text(body.get("name", "pod-{i}"), f"{where}.name")
    count = integer(body.get("count", 1), f"{where}.count")
    if count > 1 and "{i}" not in name:
        raise ScenarioError(f"{where}.name: {count} pods need {{i}} in their name ({name!r} would repeat)")
    return Pods(
        count=count,
        name=name,
        namespace=text(body.get("namespace", "default"), f"{where}.namespace"),
        at=duration(body.get("at", 0), f"{where}.at"),
        every=duration(body.get("every", 0), f"{where}.every"),
        template=template,
    )


def _manifest(value: object, where: str) -> dict[str, object]:
    doc = mapping(value, where)
    for key in ("apiVersion", "kind"):
        text(doc.get(key), f"{where}.{key}")
    text(mapping(doc.get("metadata"), f"{where}.metadata").get("name"), f"{where}.metadata.name")
    return doc
