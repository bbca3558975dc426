"""The `pods/eviction` subresource: delete a pod unless that would break its disruption budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lightkube.resources import core_v1, policy_v1

from kubesched.api.disruption import budget, covers
from kubesched.cluster.errors import InternalError, TooManyRequests

if TYPE_CHECKING:
    from kubesched.storage.store import MemoryStore

PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


def _bypasses_budget(pod: Any) -> bool:
    phase = pod.status.phase if pod.status else None
    return phase in ("Succeeded", "Failed", "Pending") or pod.metadata.deletionTimestamp is not None


def dry_run_of(eviction: Any) -> list[str] | None:
    """The dryRun an Eviction's own deleteOptions ask for."""
    return eviction.deleteOptions.dryRun if eviction.deleteOptions else None


def evict(store: MemoryStore, eviction: Any, namespace: str | None) -> Any:
    """Evict the pod named by `eviction`; raise TooManyRequests when its budget allows no disruption."""
    meta = eviction.metadata
    ns = namespace or meta.namespace or "default"
    pod: Any = store.get(core_v1.Pod, meta.name, namespace=ns)
    options = eviction.deleteOptions
    grace = options.gracePeriodSeconds if options else None
    preconditions = options.preconditions if options else None
    uid = preconditions.uid if preconditions else None
    rv = preconditions.resourceVersion if preconditions else None
    if not _bypasses_budget(pod):
        pdbs = [p for p in store.list(policy_v1.PodDisruptionBudget, namespace=ns).items if covers(p, pod)]
        if len(pdbs) > 1:
            raise InternalError(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
            )
        if pdbs:
            pdb = pdbs[0]
            state = budget(pdb, store.list(core_v1.Pod, namespace=ns).items)
            healthy = any(c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))
            policy = pdb.spec.unhealthyPodEvictionPolicy or "IfHealthyBudget"
            unhealthy_ok = not healthy and (policy == "AlwaysAllow" or state.current_healthy >= state.desired_healthy)
            if state.disruptions_allowed <= 0 and not unhealthy_ok:
                detail = (
                    f"The disruption budget {pdb.metadata.name} needs {state.desired_healthy} healthy pods "
                    f"and has {state.current_healthy} currently"
                )
                raise TooManyRequests(
                    PDB_VIOLATION,
                    causes=[{"reason": "DisruptionBudget", "message": detail}],
                    kind="pods",
                    name=pod.metadata.name,
                )
    return store.delete(
        core_v1.Pod, pod.metadata.name, namespace=ns, grace_period_seconds=grace, uid=uid, resource_version=rv
    )
