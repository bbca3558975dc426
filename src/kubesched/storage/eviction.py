"""The `pods/eviction` subresource: delete a pod unless that would break its disruption budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lightkube.models import policy_v1 as policy_models
from lightkube.resources import core_v1, policy_v1

from kubesched.api.disruption import budget, covers
from kubesched.api.objects import meta_of, name_of, present
from kubesched.cluster.errors import InternalError, TooManyRequests

if TYPE_CHECKING:
    from kubesched.storage.store import MemoryStore

PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


def _bypasses_budget(pod: core_v1.Pod) -> bool:
    phase = pod.status.phase if pod.status else None
    return phase in ("Succeeded", "Failed", "Pending") or meta_of(pod).deletionTimestamp is not None


def dry_run_of(eviction: policy_models.Eviction) -> list[str] | None:
    """The dryRun an Eviction's own deleteOptions ask for."""
    return eviction.deleteOptions.dryRun if eviction.deleteOptions else None


def evict(store: MemoryStore, eviction: policy_models.Eviction, namespace: str | None) -> core_v1.Pod:
    """Evict the pod named by `eviction`; raise TooManyRequests when its budget allows no disruption."""
    meta = meta_of(eviction)
    ns = namespace or meta.namespace or "default"
    pod = store.get(core_v1.Pod, name_of(eviction), namespace=ns)
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
            conditions = present(pod.status, "the pod's status").conditions
            healthy = any(c.type == "Ready" and c.status == "True" for c in (conditions or []))
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
                    name=name_of(pod),
                )
    return store.delete(
        core_v1.Pod, name_of(pod), namespace=ns, grace_period_seconds=grace, uid=uid, resource_version=rv
    )
