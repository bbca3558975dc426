"""The objects kube-apiserver makes for itself when it starts: the system PriorityClasses."""

from __future__ import annotations

from lightkube.models import meta_v1
from lightkube.resources import scheduling_v1

from kubesched.storage.store import MemoryStore

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000  # twice the highest priority a user may define
# The classes kube-apiserver creates at start (name, value, description).
SYSTEM_PRIORITY_CLASSES = (
    (
        "system-node-critical",
        SYSTEM_CRITICAL_PRIORITY + 1000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        SYSTEM_CRITICAL_PRIORITY,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
)


def create_system_priority_classes(store: MemoryStore) -> None:
    """The system PriorityClasses stored, as a new kube-apiserver stores them."""
    for name, value, description in SYSTEM_PRIORITY_CLASSES:
        store.create(
            scheduling_v1.PriorityClass(
                metadata=meta_v1.ObjectMeta(name=name),
                value=value,
                description=description,
                preemptionPolicy="PreemptLowerPriority",
            )
        )
