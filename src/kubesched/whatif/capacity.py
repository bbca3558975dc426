"""How many more of these fit: cluster-capacity's question, asked of a copy of a cluster.

The cluster's bound pods (those not Succeeded or Failed) and everything a decision reads are put
into a memory store on virtual time, with kubesched's scheduler over it in the configuration
given. Then, one template at a time, copies of the pod are created one by one — `<name>-0`,
`<name>-1`, ..., annotated `cc.kubernetes.io/provisioned-by` as cluster-capacity's are — each
only after the one before is bound, until the template's replica count (or `max_limit`, for a
template without one) is reached or a copy cannot be placed: that copy's PodScheduled condition,
upstream's FailedScheduling message, is the stop reason. Templates after the first see the copies
of those before. The cluster read is never written.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.objects import meta_of, present
from kubesched.clock import VirtualClock
from kubesched.cluster import DELETED
from kubesched.cluster.codec import decoder
from kubesched.cluster.errors import ApiError
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.scheduler import Scheduler
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.whatif.documents import entry, mapping, mappings, metadata, section, string
from kubesched.whatif.snapshot import Snapshot

PROVISIONED_BY = "cc.kubernetes.io/provisioned-by"
LIMIT_REACHED, UNSCHEDULABLE, UNDECIDED = "LimitReached", "Unschedulable", "Undecided"
# How long a copy may wait for the scheduler's word (a Permit plugin holding it, say) before the
# template stops as Undecided: an hour of virtual time, four times upstream's longest Permit wait.
DECISION_SECONDS = 3600.0


@dataclass(frozen=True)
class Template:
    """A pod to place copies of: `pod` a Pod document, `replicas` how many (None: as many as fit)."""

    pod: dict[str, object]
    replicas: int | None = None

    @property
    def name(self) -> str:
        return str(metadata(self.pod)["name"])

    @property
    def namespace(self) -> str:
        """The pod's namespace (a template with defaults has one)."""
        return string(metadata(self.pod)["namespace"], "metadata.namespace")


@dataclass(frozen=True)
class StopReason:
    """Why copies of a template stopped being made: `fail_type` LimitReached, Unschedulable (or
    the PodScheduled condition's other reason), and its message."""

    fail_type: str
    fail_message: str


@dataclass
class Placed:
    """The copies of one template: the node of each, in order, and why no more were made."""

    template: Template
    nodes: list[str] = field(default_factory=list)
    stop: StopReason | None = None

    def on_nodes(self) -> list[tuple[str, int]]:
        """(node, copies) in the order the nodes were first used."""
        return list(Counter(self.nodes).items())


class CapacityError(ValueError):
    """A question capacity cannot answer, in one line naming the input at fault."""


# Any: the pod as its callers go on to read and change it, at any depth
def with_defaults(pod: dict[str, object], scheduler_names: Sequence[str]) -> dict[str, Any]:
    """The template as the simulation uses it, defaulted as cluster-capacity defaults a pod spec
    (namespace `default`, dnsPolicy ClusterFirst, restartPolicy Always, each container's
    terminationMessagePolicy FallbackToLogsOnError), its schedulerName the first profile's when it
    gives none; CapacityError when it names no profile of the configuration."""
    out = copy.deepcopy(pod)
    out.setdefault("apiVersion", "v1")
    out.setdefault("kind", "Pod")
    meta = entry(out, "metadata")
    if not meta.get("name"):
        raise CapacityError("a pod spec needs metadata.name")
    meta.setdefault("namespace", "default")
    spec = entry(out, "spec")
    spec.pop("nodeName", None)
    spec.setdefault("schedulerName", scheduler_names[0])
    if spec["schedulerName"] not in scheduler_names:
        raise CapacityError(
            f"pod {meta['name']}: spec.schedulerName {spec['schedulerName']!r} is no profile of the configuration "
            f"({', '.join(scheduler_names)})"
        )
    if spec.get("schedulingGates"):
        raise CapacityError(f"pod {meta['name']}: spec.schedulingGates: a gated copy is never scheduled")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    for container in mappings(spec, "containers"):
        container.setdefault("terminationMessagePolicy", "FallbackToLogsOnError")
    return out


def _kept(item: dict[str, object], excluded: frozenset[str]) -> bool:
    """What of the cluster the simulation starts from: no excluded node, and of the pods only those
    bound to a node kept and still holding it (not Succeeded or Failed)."""
    if item.get("kind") == "Node" and item.get("apiVersion") == "v1":
        return metadata(item)["name"] not in excluded
    if item.get("kind") == "Pod" and item.get("apiVersion") == "v1":
        node = section(item, "spec").get("nodeName")
        phase = section(item, "status").get("phase")
        return bool(node) and node not in excluded and phase not in ("Succeeded", "Failed")
    return True


def _namespaces(store: MemoryStore) -> set[str]:
    return {n.metadata.name for n in store.list(core_v1.Namespace).items}


def _copy(template: dict[str, object], index: int) -> core_v1.Pod:
    pod = copy.deepcopy(template)
    meta = metadata(pod)
    meta["name"] = f"{meta['name']}-{index}"  # as _place names it
    meta["annotations"] = {
        **section(meta, "annotations"),
        PROVISIONED_BY: mapping(pod["spec"], "spec")["schedulerName"],
    }
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        meta.pop(key, None)
    pod.pop("status", None)
    obj: core_v1.Pod = decoder(core_v1.Pod).decode(json.dumps(pod).encode())
    return obj


def _outcome(pod: core_v1.Pod) -> tuple[str, str] | None:
    """('', node) once bound, (reason, message) once the scheduler said it could not, else None."""
    node = present(pod.spec, "the pod's spec").nodeName
    if node:
        return "", node
    for c in (pod.status.conditions if pod.status else None) or ():
        if c.type == "PodScheduled" and c.status == "False" and c.reason:
            return c.reason, c.message or ""
    return None


def simulate(
    snapshot: Snapshot,
    templates: Sequence[Template],
    *,
    config: SchedulerConfig,
    registry: Registry,
    max_limit: int = 0,
    exclude_nodes: Iterable[str] = (),
    seed: int = 0,
) -> list[Placed]:
    """Each template's copies placed on a copy of `snapshot`'s cluster (see the module)."""
    names = [p.scheduler_name for p in config.profiles]
    prepared = [Template(with_defaults(t.pod, names), t.replicas) for t in templates]
    seen = Counter((t.namespace, t.name) for t in prepared)
    for (namespace, name), count in seen.items():
        if count > 1:
            raise CapacityError(f"pod {namespace}/{name}: given {count} times; each template needs a name of its own")
    excluded = frozenset(exclude_nodes)
    clock = VirtualClock()
    store = MemoryStore(clock=clock, seed=seed, watch_latency=0.0)
    Snapshot(tuple(i for i in snapshot.items if _kept(i, excluded))).restore(store)
    for namespace in sorted({t.namespace for t in prepared} - _namespaces(store)):
        store.create(core_v1.Namespace(metadata=meta_v1.ObjectMeta(name=namespace)))
    cluster = MemoryCluster(store)
    scheduler = Scheduler(cluster, clock, config, registry, seed=seed, identity="capacity")
    results = [Placed(t) for t in prepared]

    waiting: dict[str, asyncio.Future[tuple[str, str]]] = {}

    async def watch() -> None:
        async for event in cluster.watch(core_v1.Pod):
            if event.type == DELETED:
                continue
            pod = event.object
            meta = meta_of(pod)
            key = f"{meta.namespace}/{meta.name}"
            future = waiting.get(key)
            if future is not None and not future.done() and (outcome := _outcome(pod)) is not None:
                future.set_result(outcome)

    async def main() -> None:
        for placed in results:
            await _place(placed, cluster, waiting, max_limit)

    clock.run_alongside(main(), [scheduler.run, watch])
    return results


async def _place(
    placed: Placed, cluster: MemoryCluster, waiting: dict[str, asyncio.Future[tuple[str, str]]], max_limit: int
) -> None:
    template = placed.template
    limit = template.replicas if template.replicas is not None else max_limit if max_limit > 0 else None
    namespace = template.namespace
    index = 0
    while True:
        if limit is not None and index >= limit:
            placed.stop = StopReason(LIMIT_REACHED, f"Maximum number of pods simulated: {limit}")
            return
        name = f"{template.name}-{index}"
        key = f"{namespace}/{name}"
        decided = waiting[key] = asyncio.get_running_loop().create_future()
        try:
            await cluster.create(_copy(template.pod, index))
        except ApiError as e:
            raise CapacityError(f"pod {template.name}: {e}") from None
        try:
            reason, said = await asyncio.wait_for(decided, DECISION_SECONDS)
        except TimeoutError:
            reason, said = UNDECIDED, f"no decision on pod {key} in {DECISION_SECONDS:.0f}s of simulated time"
        finally:
            del waiting[key]
        if reason:
            placed.stop = StopReason(reason, said)
            await cluster.delete(core_v1.Pod, name, namespace=namespace)  # no later retry takes room
            return
        placed.nodes.append(said)
        index += 1
