"""Pods as the workload controllers see them: active, ready, available; made from a template
under a controller reference; and the order in which a scale-down picks them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.clock.base import epoch_seconds
from kubesched.cluster import ApiError, Cluster, NotFound
from kubesched.cluster.events import NORMAL, WARNING, EventRecorder
from kubesched.controllers.informers import Informer
from kubesched.controllers.owners import controller_reference

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def phase(pod: Any) -> str:
    return (pod.status.phase if pod.status else None) or "Pending"


def is_terminal(pod: object) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def is_active(pod: Any) -> bool:
    """Neither finished nor being deleted (upstream's `IsPodActive`)."""
    return not is_terminal(pod) and pod.metadata.deletionTimestamp is None


def _ready_condition(pod: Any) -> Any | None:
    return next((c for c in (pod.status.conditions if pod.status else None) or () if c.type == "Ready"), None)


def is_ready(pod: object) -> bool:
    condition = _ready_condition(pod)
    return condition is not None and condition.status == "True"


def ready_since(pod: object) -> float | None:
    condition = _ready_condition(pod)
    if condition is None or condition.status != "True" or condition.lastTransitionTime is None:
        return None
    stamp = condition.lastTransitionTime
    return stamp.timestamp() if isinstance(stamp, datetime) else None


def is_available(pod: object, min_ready_seconds: int | None, now: float) -> bool:
    """Ready for at least `min_ready_seconds` (upstream's `IsPodAvailable`)."""
    if not is_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    since = ready_since(pod)
    return since is not None and since + min_ready_seconds <= now


def from_template(
    template: Any,
    owner: Any,
    *,
    name: str | None = None,
    labels: dict[str, str] | None = None,
    finalizers: Sequence[str] = (),
    spec: Any = None,
) -> Any:
    """A pod of `owner`'s `template` (generateName `<owner>-` unless named)."""
    meta = template.metadata or meta_v1.ObjectMeta()
    return core_v1.Pod(
        metadata=meta_v1.ObjectMeta(
            name=name,
            generateName=None if name else f"{owner.metadata.name}-",
            namespace=owner.metadata.namespace,
            labels={**(meta.labels or {}), **(labels or {})} or None,
            annotations=dict(meta.annotations) if meta.annotations else None,
            finalizers=[*(meta.finalizers or ()), *finalizers] or None,
            ownerReferences=[controller_reference(owner)],
        ),
        spec=spec if spec is not None else template.spec,
    )


def _restarts(pod: Any) -> int:
    return sum(c.restartCount or 0 for c in (pod.status.containerStatuses if pod.status else None) or ())


def _cost(pod: Any) -> int:
    try:
        return int((pod.metadata.annotations or {}).get(DELETION_COST, 0))
    except ValueError:
        return 0


def deletion_order(pods: Iterable[Any], related: Iterable[Any]) -> list[Any]:
    """`pods` in the order a scale-down deletes them (upstream's `ActivePodsWithRanks`):
    unassigned first, then Pending before Unknown before Running, not ready before ready, lower
    pod-deletion-cost first, pods on nodes crowded with `related` pods first, ready for less
    time first, more restarts first, newer first."""
    per_node = Counter(p.spec.nodeName for p in related if p.spec.nodeName and is_active(p))

    def rank(pod: Any) -> tuple[Any, ...]:
        node = pod.spec.nodeName
        return (
            bool(node),
            _PHASE_RANK.get(phase(pod), 2),
            is_ready(pod),
            _cost(pod),
            -per_node[node] if node else 0,
            -(ready_since(pod) or 0.0),
            -_restarts(pod),
            -epoch_seconds(pod.metadata.creationTimestamp),
        )

    return sorted(pods, key=rank)


class PodControl:
    """Creates and deletes a controller's pods: the write, what it returned told to the pod
    informer, and the Event upstream's controllers record about the owner."""

    def __init__(self, cluster: Cluster, pods: Informer, recorder: EventRecorder) -> None:
        self._cluster = cluster
        self._pods = pods
        self._recorder = recorder

    async def create(self, pod: Any, owner: Any, *, message: str | None = None) -> Any:
        try:
            created = await self._cluster.create(pod)
        except ApiError as e:
            await self._recorder.record(owner, WARNING, "FailedCreate", f"Error creating: {e}")
            raise
        self._pods.observe(created)
        await self._recorder.record(
            owner, NORMAL, "SuccessfulCreate", message or f"Created pod: {created.metadata.name}"
        )
        return created

    async def delete(self, pod: Any, owner: Any, *, message: str | None = None) -> None:
        name = pod.metadata.name
        try:
            result: Any = await self._cluster.delete(core_v1.Pod, name, namespace=pod.metadata.namespace)
        except NotFound:
            return
        except ApiError as e:
            await self._recorder.record(owner, WARNING, "FailedDelete", f"Error deleting: {e}")
            raise
        if result is not None and result.metadata.deletionTimestamp is not None:
            self._pods.observe(result)
        elif result is not None:
            self._pods.observe_removed(result)
        await self._recorder.record(owner, NORMAL, "SuccessfulDelete", message or f"Deleted pod: {name}")
