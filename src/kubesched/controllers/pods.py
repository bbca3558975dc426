"""Pods as the workload controllers see them: active, ready, available; made from a template
under a controller reference; and the order in which a scale-down picks them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TypeVar

from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.objects import meta_of, name_of, present
from kubesched.clock.base import epoch_seconds
from kubesched.cluster import ApiError, Cluster, NotFound
from kubesched.cluster.events import NORMAL, WARNING, EventRecorder, Referent
from kubesched.controllers.informers import Informer
from kubesched.controllers.owners import controller_reference

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}

P = TypeVar("P", bound=m.Pod)


def phase(pod: m.Pod) -> str:
    return (pod.status.phase if pod.status else None) or "Pending"


def is_terminal(pod: m.Pod) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def is_active(pod: m.Pod) -> bool:
    """Neither finished nor being deleted (upstream's `IsPodActive`)."""
    return not is_terminal(pod) and meta_of(pod).deletionTimestamp is None


def node_of(pod: m.Pod) -> str | None:
    """The node the pod is bound to (None while it is not)."""
    return present(pod.spec, "the pod's spec").nodeName


def _ready_condition(pod: m.Pod) -> m.PodCondition | None:
    return next((c for c in (pod.status.conditions if pod.status else None) or () if c.type == "Ready"), None)


def is_ready(pod: m.Pod) -> bool:
    condition = _ready_condition(pod)
    return condition is not None and condition.status == "True"


def ready_since(pod: m.Pod) -> float | None:
    condition = _ready_condition(pod)
    if condition is None or condition.status != "True" or condition.lastTransitionTime is None:
        return None
    stamp = condition.lastTransitionTime
    return stamp.timestamp() if isinstance(stamp, datetime) else None


def is_available(pod: m.Pod, min_ready_seconds: int | None, now: float) -> bool:
    """Ready for at least `min_ready_seconds` (upstream's `IsPodAvailable`)."""
    if not is_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    since = ready_since(pod)
    return since is not None and since + min_ready_seconds <= now


def from_template(
    template: m.PodTemplateSpec,
    owner: Referent,
    *,
    name: str | None = None,
    labels: dict[str, str] | None = None,
    finalizers: Sequence[str] = (),
    spec: m.PodSpec | None = None,
) -> core_v1.Pod:
    """A pod of `owner`'s `template` (generateName `<owner>-` unless named)."""
    meta = template.metadata or meta_v1.ObjectMeta()
    owner_meta = meta_of(owner)
    return core_v1.Pod(
        metadata=meta_v1.ObjectMeta(
            name=name,
            generateName=None if name else f"{owner_meta.name}-",
            namespace=owner_meta.namespace,
            labels={**(meta.labels or {}), **(labels or {})} or None,
            annotations=dict(meta.annotations) if meta.annotations else None,
            finalizers=[*(meta.finalizers or ()), *finalizers] or None,
            ownerReferences=[controller_reference(owner)],
        ),
        spec=spec if spec is not None else template.spec,
    )


def _restarts(pod: m.Pod) -> int:
    return sum(c.restartCount or 0 for c in (pod.status.containerStatuses if pod.status else None) or ())


def _cost(pod: m.Pod) -> int:
    try:
        return int((meta_of(pod).annotations or {}).get(DELETION_COST, 0))
    except ValueError:
        return 0


def deletion_order(pods: Iterable[P], related: Iterable[m.Pod]) -> list[P]:
    """`pods` in the order a scale-down deletes them (upstream's `ActivePodsWithRanks`):
    unassigned first, then Pending before Unknown before Running, not ready before ready, lower
    pod-deletion-cost first, pods on nodes crowded with `related` pods first, ready for less
    time first, more restarts first, newer first."""
    per_node = Counter(node for p in related if (node := node_of(p)) and is_active(p))

    def rank(pod: P) -> tuple[bool, int, bool, int, int, float, int, float]:
        node = node_of(pod)
        return (
            bool(node),
            _PHASE_RANK.get(phase(pod), 2),
            is_ready(pod),
            _cost(pod),
            -per_node[node] if node else 0,
            -(ready_since(pod) or 0.0),
            -_restarts(pod),
            -epoch_seconds(meta_of(pod).creationTimestamp),
        )

    return sorted(pods, key=rank)


class PodControl:
    """Creates and deletes a controller's pods: the write, what it returned told to the pod
    informer, and the Event upstream's controllers record about the owner."""

    def __init__(self, cluster: Cluster, pods: Informer[core_v1.Pod], recorder: EventRecorder) -> None:
        self._cluster = cluster
        self._pods = pods
        self._recorder = recorder

    async def create(self, pod: core_v1.Pod, owner: Referent, *, message: str | None = None) -> core_v1.Pod:
        try:
            created = await self._cluster.create(pod)
        except ApiError as e:
            await self._recorder.record(owner, WARNING, "FailedCreate", f"Error creating: {e}")
            raise
        self._pods.observe(created)
        await self._recorder.record(
            owner, NORMAL, "SuccessfulCreate", message or f"Created pod: {meta_of(created).name}"
        )
        return created

    async def delete(self, pod: m.Pod, owner: Referent, *, message: str | None = None) -> None:
        meta = meta_of(pod)
        name = name_of(pod)
        try:
            result = await self._cluster.delete(core_v1.Pod, name, namespace=meta.namespace)
        except NotFound:
            return
        except ApiError as e:
            await self._recorder.record(owner, WARNING, "FailedDelete", f"Error deleting: {e}")
            raise
        if result is not None and meta_of(result).deletionTimestamp is not None:
            self._pods.observe(result)
        elif result is not None:
            self._pods.observe_removed(result)
        await self._recorder.record(owner, NORMAL, "SuccessfulDelete", message or f"Deleted pod: {name}")
