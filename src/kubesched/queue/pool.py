"""unschedulablePods: pods rejected by plugins (or gated at PreEnqueue), grouped by what decides
their requeueing, so that an event is judged once per group rather than once per pod."""

from __future__ import annotations

from collections.abc import Hashable, Iterator

from kubesched.framework.queued import QueuedPodInfo
from kubesched.queue.hints import QueueProfile


def group_key(profile: QueueProfile | None, qpi: QueuedPodInfo) -> Hashable:
    """Pods with equal keys get the same decision for every event: same profile, gating plugin and
    rejector plugins, and equal hint keys for each rejector (a pod of its own otherwise)."""
    rejectors = sorted(qpi.unschedulable_plugins | qpi.pending_plugins | ({qpi.gating_plugin} - {""}))
    keys: list[Hashable] = []
    for plugin in rejectors:
        key_of = profile.hint_keys.get(plugin) if profile is not None else None
        if key_of is None:
            return ("pod", qpi.uid)
        keys.append(key_of(qpi.pod_info.pod))
    return (
        qpi.pod_info.pod.spec.schedulerName or "",
        qpi.gating_plugin,
        frozenset(qpi.unschedulable_plugins),
        frozenset(qpi.pending_plugins),
        tuple(keys),
    )


class UnschedulablePool:
    def __init__(self) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}
        self._group_of: dict[str, Hashable] = {}
        self.groups: dict[Hashable, dict[str, QueuedPodInfo]] = {}

    def add(self, qpi: QueuedPodInfo, group: Hashable) -> None:
        self.remove(qpi.key)
        self._pods[qpi.key] = qpi
        self._group_of[qpi.key] = group
        self.groups.setdefault(group, {})[qpi.key] = qpi

    def remove(self, key: str) -> QueuedPodInfo | None:
        qpi = self._pods.pop(key, None)
        if qpi is None:
            return None
        group = self._group_of.pop(key)
        members = self.groups[group]
        del members[key]
        if not members:
            del self.groups[group]
        return qpi

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._pods.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return iter(list(self._pods.values()))
