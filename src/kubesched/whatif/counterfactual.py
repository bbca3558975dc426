"""What would make it fit: the smallest changes, in a stated space, after which a pod that the
scheduler cannot place is placed — each one verified by scheduling the pod again, with the same
configuration, on a copy of the cluster with the change applied.

The space searched, and what each change costs:

- `add-nodes`: k nodes like a given one, or like the most common shape among the cluster's nodes
  (its allocatable, labels and taints); the fewest k up to a bound. Cost: k nodes.
- `remove-taint`: one taint off one node (found by lifting it off every node that has it, then
  off the node the pod went to alone). Cost: one node changed.
- `tolerate`: a toleration for such a taint added to the pod. Cost: one field of the pod.
- `relax`: one placement constraint of the pod loosened: a nodeSelector key or the required node
  affinity dropped, a required pod (anti-)affinity term dropped, a DoNotSchedule spread
  constraint's maxSkew raised (up to 5) or made ScheduleAnyway, the host ports dropped. Cost: one
  field of the pod.
- `lower-requests`: every container's cpu and memory requests scaled down to the largest
  fraction, in steps of 1/64, that fits. Cost: the fraction kept.
- `evict`: on one node, the fewest bound pods of lower priority, lowest priority and largest
  first, removed — only pods the eviction API would let go, their PodDisruptionBudgets allowing
  each disruption (`status.disruptionsAllowed`). Cost: the pods moved.

A change is proposed only when the pod, scheduled again after it, is bound; `Proposal.node` is
where. The proposals come cheapest first, by kind; none at all means nothing in the space helps.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from lightkube.models import meta_v1

from kubesched.api.quantity import format_bytes, format_milli_cpu, parse_quantity, to_milli, to_units
from kubesched.api.selectors import LabelSelectorMatcher, compile_label_selector
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.whatif.capacity import Template, simulate
from kubesched.whatif.documents import document_name, mapping, mappings, metadata, section, string
from kubesched.whatif.snapshot import Snapshot

# Any: a pod or node document, read and loosened at any depth (each variant a deep copy)
Document = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
MAX_SKEW_TRIED = 5
STEPS = 64  # lower-requests searches fractions k/64


@dataclass(frozen=True)
class Proposal:
    """One change found to make the pod fit: its `kind`, what it is in words, its cost in the
    kind's unit, the node the pod was bound to after it, and the cluster and pod as changed."""

    kind: str
    change: str
    cost: float
    node: str
    cluster: Snapshot
    pod: Document

    def to_json(self) -> dict[str, object]:
        """The proposal, the changed pod with it (the cluster is left out: it is the input's size)."""
        return {"kind": self.kind, "change": self.change, "cost": self.cost, "node": self.node, "pod": self.pod}


@dataclass(frozen=True)
class Search:
    """What a search needs: the cluster, the scheduler's configuration and plugins."""

    snapshot: Snapshot
    config: SchedulerConfig
    registry: Registry
    node_template: Document | None = None  # the node add-nodes copies (None: the most common shape)
    max_nodes: int = 10
    exclude_nodes: tuple[str, ...] = ()  # nodes (and their pods) left out of every copy

    def placed(self, snapshot: Snapshot, pod: Document) -> str | None:
        """The node `pod` is bound to when scheduled on `snapshot`, None when it is not."""
        [result] = simulate(
            snapshot, [Template(pod, 1)], config=self.config, registry=self.registry, exclude_nodes=self.exclude_nodes
        )
        return result.nodes[0] if result.nodes else None


def pending_pod(snapshot: Snapshot, key: str) -> tuple[Snapshot, Document]:
    """The pod `namespace/name` of `snapshot` as a template to place, and the snapshot without it;
    KeyError when there is none."""
    namespace, _, name = key.rpartition("/")
    namespace = namespace or "default"
    for item in snapshot.items:
        meta = section(item, "metadata")
        if item.get("kind") == "Pod" and meta.get("name") == name and meta.get("namespace", "default") == namespace:
            pod: Document = copy.deepcopy(item)
            pod.pop("status", None)
            (pod.get("spec") or {}).pop("nodeName", None)
            return Snapshot(tuple(i for i in snapshot.items if i is not item)), pod
    raise KeyError(key)


def search(space: Search, pod: Document) -> list[Proposal]:
    """Every change of the space that makes `pod` fit (see the module); empty when the pod fits
    already or nothing helps."""
    if space.placed(space.snapshot, pod) is not None:
        return []
    found: list[Proposal] = []
    for finder in (_add_nodes, _taints, _relaxations, _lower_requests, _evictions):
        found += finder(space, pod)
    return found


# -- add nodes -------------------------------------------------------------------------------


def _shape(node: Document) -> str:
    labels = {k: v for k, v in ((node.get("metadata") or {}).get("labels") or {}).items() if k != HOSTNAME}
    status, spec = node.get("status") or {}, node.get("spec") or {}
    return repr((sorted(labels.items()), sorted((status.get("allocatable") or {}).items()), spec.get("taints")))


def common_node(snapshot: Snapshot) -> Document | None:
    """The first node of the most common shape (allocatable, labels but the hostname, taints)."""
    nodes = snapshot.of_kind("Node")
    if not nodes:
        return None
    shape, _ = Counter(_shape(n) for n in nodes).most_common(1)[0]
    return next(n for n in nodes if _shape(n) == shape)


def _new_nodes(template: Document, count: int) -> list[Document]:
    out = []
    for i in range(count):
        name = f"whatif-node-{i}"
        labels = {**((template.get("metadata") or {}).get("labels") or {}), HOSTNAME: name}
        status = template.get("status") or {}
        spec = {k: v for k, v in (template.get("spec") or {}).items() if k in ("taints", "unschedulable")}
        node: Document = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},  # a new node: none of the template's identity
            "spec": copy.deepcopy(spec),
            "status": {k: copy.deepcopy(status[k]) for k in ("capacity", "allocatable") if k in status},
        }
        out.append(node)
    return out


def _add_nodes(space: Search, pod: Document) -> list[Proposal]:
    template = space.node_template or common_node(space.snapshot)
    if template is None:
        return []
    for count in range(1, space.max_nodes + 1):
        grown = Snapshot((*space.snapshot.items, *_new_nodes(template, count)))
        node = space.placed(grown, pod)
        if node is not None:
            like = (template.get("metadata") or {}).get("name", "the node template")
            return [Proposal("add-nodes", f"add {count} node(s) like {like}", count, node, grown, pod)]
    return []


def nodes_needed(space: Search, templates: Sequence[Template]) -> int | None:
    """The fewest nodes like the space's node template (or the most common shape) to add for every
    template's replica count to be placed, up to `space.max_nodes`; None past it. Found by doubling
    the count, then halving the gap, each count simulated whole."""
    template = space.node_template or common_node(space.snapshot)
    if template is None or any(t.replicas is None for t in templates):
        raise ValueError("nodes needed: every template needs a replica count, and the cluster a node")

    def fits(count: int) -> bool:
        grown = Snapshot((*space.snapshot.items, *_new_nodes(template, count)))
        results = simulate(
            grown, templates, config=space.config, registry=space.registry, exclude_nodes=space.exclude_nodes
        )
        return all(len(r.nodes) == r.template.replicas for r in results)

    if fits(0):
        return 0
    low, high = 0, 1
    while not fits(high):
        if high >= space.max_nodes:
            return None
        low, high = high, min(high * 2, space.max_nodes)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


# -- taints ----------------------------------------------------------------------------------


def _taint_key(taint: Document) -> tuple[str, str, str]:
    return (taint.get("key", ""), taint.get("value", "") or "", taint.get("effect", ""))


def _without_taint(snapshot: Snapshot, taint: tuple[str, str, str], only: str | None = None) -> Snapshot:
    items = []
    for item in snapshot.items:
        if item.get("kind") == "Node" and (only is None or metadata(item)["name"] == only):
            taints = mappings(section(item, "spec"), "taints")
            kept = [t for t in taints if _taint_key(t) != taint]
            if len(kept) != len(taints):
                item = {**item, "spec": {**mapping(item["spec"], "spec"), "taints": kept or None}}
        items.append(item)
    return Snapshot(tuple(items))


def _taints(space: Search, pod: Document) -> list[Proposal]:
    out = []
    seen = sorted(
        {
            _taint_key(t)
            for n in space.snapshot.of_kind("Node")
            for t in mappings(section(n, "spec"), "taints")
            if t.get("effect") in ("NoSchedule", "NoExecute")
        }
    )
    for taint in seen:
        words = f"{taint[0]}={taint[1]}:{taint[2]}" if taint[1] else f"{taint[0]}:{taint[2]}"
        node = space.placed(_without_taint(space.snapshot, taint), pod)
        if node is None:
            continue
        lifted = _without_taint(space.snapshot, taint, only=node)
        alone = space.placed(lifted, pod)
        if alone is not None:
            out.append(Proposal("remove-taint", f"remove taint {words} from node {node}", 1, alone, lifted, pod))
        tolerant = copy.deepcopy(pod)
        toleration = {"key": taint[0], "operator": "Equal", "value": taint[1], "effect": taint[2]}
        tolerant["spec"]["tolerations"] = [*(tolerant["spec"].get("tolerations") or []), toleration]
        placed = space.placed(space.snapshot, tolerant)
        if placed is not None:
            out.append(
                Proposal("tolerate", f"add to the pod a toleration of {words}", 1, placed, space.snapshot, tolerant)
            )
    return out


# -- relaxing the pod's constraints ----------------------------------------------------------


def _variants(pod: Document) -> Iterator[tuple[str, str, Document]]:
    """Each single loosening of one of the pod's placement constraints: the constraint, the
    loosening in words, the loosened pod; the loosenings of one constraint mildest first."""
    spec = pod["spec"]
    for key in sorted(spec.get("nodeSelector") or {}):
        loose = copy.deepcopy(pod)
        del loose["spec"]["nodeSelector"][key]
        yield key, f"drop nodeSelector {key}={spec['nodeSelector'][key]}", loose
    affinity = spec.get("affinity") or {}
    if (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"):
        loose = copy.deepcopy(pod)
        del loose["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        yield "nodeAffinity", "drop the required node affinity", loose
    for field in ("podAffinity", "podAntiAffinity"):
        terms = (affinity.get(field) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
        for i, term in enumerate(terms):
            loose = copy.deepcopy(pod)
            del loose["spec"]["affinity"][field]["requiredDuringSchedulingIgnoredDuringExecution"][i]
            yield f"{field}[{i}]", f"drop required {field} term {i} (topologyKey {term.get('topologyKey')})", loose
    for i, constraint in enumerate(spec.get("topologySpreadConstraints") or []):
        if constraint.get("whenUnsatisfiable") != "DoNotSchedule":
            continue
        name = f"topologySpreadConstraints[{i}] ({constraint.get('topologyKey')})"
        for skew in range(int(constraint.get("maxSkew", 1)) + 1, MAX_SKEW_TRIED + 1):
            loose = copy.deepcopy(pod)
            loose["spec"]["topologySpreadConstraints"][i]["maxSkew"] = skew
            yield name, f"raise {name} maxSkew to {skew}", loose
        loose = copy.deepcopy(pod)
        loose["spec"]["topologySpreadConstraints"][i]["whenUnsatisfiable"] = "ScheduleAnyway"
        yield name, f"make {name} ScheduleAnyway", loose
    if any(p.get("hostPort") for c in spec.get("containers") or () for p in c.get("ports") or ()):
        loose = copy.deepcopy(pod)
        for c in loose["spec"]["containers"]:
            for p in c.get("ports") or ():
                p.pop("hostPort", None)
        yield "hostPort", "drop the host ports", loose


def _relaxations(space: Search, pod: Document) -> list[Proposal]:
    out = []
    done: set[str] = set()  # of one constraint, the mildest loosening that fits is enough
    for constraint, words, loose in _variants(pod):
        if constraint in done:
            continue
        node = space.placed(space.snapshot, loose)
        if node is not None:
            out.append(Proposal("relax", words, 1, node, space.snapshot, loose))
            done.add(constraint)
    return out


# -- lower requests --------------------------------------------------------------------------


def _scaled(pod: Document, fraction: float) -> Document:
    out = copy.deepcopy(pod)
    for container in out["spec"].get("containers") or ():
        requests = (container.get("resources") or {}).get("requests") or {}
        if "cpu" in requests:
            requests["cpu"] = format_milli_cpu(int(to_milli(parse_quantity(requests["cpu"])) * fraction))
        if "memory" in requests:
            requests["memory"] = format_bytes(int(to_units(parse_quantity(requests["memory"])) * fraction))
    return out


def _requests(pod: Document) -> str:
    parts = []
    for c in pod["spec"].get("containers") or ():
        requests = (c.get("resources") or {}).get("requests") or {}
        shown = ", ".join(f"{k}={requests[k]}" for k in ("cpu", "memory") if k in requests)
        if shown:
            parts.append(f"{c.get('name')}: {shown}")
    return "; ".join(parts)


def _lower_requests(space: Search, pod: Document) -> list[Proposal]:
    if not _requests(pod) or space.placed(space.snapshot, _scaled(pod, 0)) is None:
        return []
    low, high = 0, STEPS  # low fits (0 did), high does not (the pod as it is)
    node = ""
    while high - low > 1:
        middle = (low + high) // 2
        placed = space.placed(space.snapshot, _scaled(pod, middle / STEPS))
        if placed is not None:
            low, node = middle, placed
        else:
            high = middle
    if not node:
        node = space.placed(space.snapshot, _scaled(pod, low / STEPS)) or ""
    kept = _scaled(pod, low / STEPS)
    words = f"lower requests to {_requests(kept)} ({low}/{STEPS} of now)"
    return [Proposal("lower-requests", words, low / STEPS, node, space.snapshot, kept)]


# -- evictions -------------------------------------------------------------------------------


def _priority(pod: Document, classes: dict[str, int]) -> int:
    spec = pod.get("spec") or {}
    if spec.get("priority") is not None:
        return int(spec["priority"])
    return classes.get(spec.get("priorityClassName") or "", 0)


def _cpu(pod: Document) -> int:
    return sum(
        to_milli(parse_quantity(((c.get("resources") or {}).get("requests") or {}).get("cpu", 0)))
        for c in (pod.get("spec") or {}).get("containers") or ()
    )


@dataclass
class _Budget:
    """A PodDisruptionBudget as the evictions taken so far leave it."""

    namespace: object
    selector: LabelSelectorMatcher
    allowed: int


def _count(value: object) -> int:
    """A count as `int` reads it from a document (a number or its text)."""
    if not isinstance(value, int | float | str):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return int(value)


def _evictable(victims: list[Document], snapshot: Snapshot) -> list[Document]:
    """Of `victims` in order, those the eviction API would let go: each taken only while every
    PodDisruptionBudget over it allows one more disruption (`status.disruptionsAllowed`; a budget
    without a status allows none, as the API refuses an eviction it cannot check)."""
    budgets = []
    for pdb in snapshot.of_kind("PodDisruptionBudget"):
        selector = msgspec.convert(section(pdb, "spec").get("selector"), meta_v1.LabelSelector | None)
        allowed = _count(section(pdb, "status").get("disruptionsAllowed") or 0)
        budgets.append(_Budget(metadata(pdb).get("namespace", "default"), compile_label_selector(selector), allowed))
    taken = []
    for victim in victims:
        meta = victim["metadata"]
        over = [
            b
            for b in budgets
            if b.namespace == meta.get("namespace", "default") and b.selector.matches(meta.get("labels"))
        ]
        if all(b.allowed > 0 for b in over):
            for b in over:
                b.allowed -= 1
            taken.append(victim)
    return taken


def _evictions(space: Search, pod: Document, *, nodes_tried: int = 5) -> list[Proposal]:
    classes = {document_name(c): _count(c.get("value", 0)) for c in space.snapshot.of_kind("PriorityClass")}
    own = _priority(pod, classes)
    lower: dict[str, list[Document]] = {}
    for p in space.snapshot.of_kind("Pod"):
        node = section(p, "spec").get("nodeName")
        if node and _priority(p, classes) < own:
            lower.setdefault(string(node, "spec.nodeName"), []).append(p)
    best: Proposal | None = None
    ranked = sorted(lower, key=lambda n: (-sum(_cpu(p) for p in lower[n]), n))[:nodes_tried]
    for node in ranked:
        ordered = sorted(lower[node], key=lambda p: (_priority(p, classes), -_cpu(p), p["metadata"]["name"]))
        victims = _evictable(ordered, space.snapshot)
        for count in range(1, len(victims) + 1):
            if best is not None and count >= best.cost:
                break
            gone = {id(v) for v in victims[:count]}
            emptied = Snapshot(tuple(i for i in space.snapshot.items if id(i) not in gone))
            placed = space.placed(emptied, pod)
            if placed is not None:
                names = ", ".join(
                    f"{v['metadata'].get('namespace', 'default')}/{v['metadata']['name']}" for v in victims[:count]
                )
                words = f"evict {count} lower-priority pod(s) from {node}: {names}"
                best = Proposal("evict", words, count, placed, emptied, pod)
                break
    return [best] if best is not None else []
