"""The events PodTopologySpread registers and their QueueingHints."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import msgspec
from lightkube.models import core_v1
from lightkube.models import core_v1 as m

from kubesched.api.objects import meta_of
from kubesched.plugin import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.plugins.pod_topology_spread.args import DO_NOT_SCHEDULE, HONOR
from kubesched.plugins.pod_topology_spread.base import SpreadBase
from kubesched.plugins.pod_topology_spread.constraints import _NO_LABELS, Constraint, _labels, has_all_keys

_HINT_CACHE_SIZE = 1024


class QueueingHints(SpreadBase):
    """The plugin's events and QueueingHints."""

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pods coming, going or relabelled (and the pod's own new tolerations); nodes coming,
        going, relabelled or retainted."""
        add_delete = ActionType.ADD | ActionType.DELETE
        pod_actions = add_delete | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION
        node_actions = add_delete | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
        return [
            ClusterEventWithHint(ClusterEvent(POD, pod_actions), self._is_schedulable_after_pod),
            ClusterEventWithHint(ClusterEvent(NODE, node_actions), self._is_schedulable_after_node),
        ]

    # Any: the queued pod as served (metadata and spec set), read without checks on the queue's per-pod path
    def hint_key(self, pod: Any) -> Hashable:
        """What the hints read of the pod besides its own identity: its namespace and what its hard
        constraints are made of (its constraints and the labels matchLabelKeys names, or, for
        default constraints, its labels and owners)."""
        namespace = pod.metadata.namespace or "default"
        labels = pod.metadata.labels or _NO_LABELS
        own = pod.spec.topologySpreadConstraints
        if own:
            keys = sorted({k for c in own for k in c.matchLabelKeys or ()})
            return namespace, msgspec.json.encode(own), tuple((k, labels.get(k)) for k in keys)
        if self._workloads is None or not self.default_constraints:
            return (namespace,)
        owners = msgspec.json.encode(pod.metadata.ownerReferences or [])
        return namespace, tuple(sorted(labels.items())), owners

    def _hard_constraints(self, pod: object) -> list[Constraint]:
        """The pod's hard constraints for a hint, cached by `hint_key`; ValueError as `constraints`."""
        key = self.hint_key(pod)
        found = self._hint_constraints.get(key)
        if found is None:
            if len(self._hint_constraints) >= _HINT_CACHE_SIZE:
                self._hint_constraints.clear()
            try:
                found = self.constraints(pod, DO_NOT_SCHEDULE)
            except ValueError as err:
                found = err
            self._hint_constraints[key] = found
        if isinstance(found, ValueError):
            raise found
        return found

    # Any: the event's pods as served (metadata and spec set), read without checks in this hint
    def _is_schedulable_after_pod(self, pod: m.Pod, old: Any, new: Any) -> QueueingHint:
        """Queue for an assigned pod of the namespace that starts or stops matching a hard
        constraint's selector (added, deleted or relabelled), or for the pod itself gaining
        tolerations while a constraint honours taints."""
        for changed in (old, new):
            if changed is not None and not _involved(changed, pod):
                return QueueingHint.QUEUE_SKIP
        constraints = self._hard_constraints(pod)
        if old is not None and new is not None:
            if (
                (new.metadata.uid or "") == (meta_of(pod).uid or "")
                and old.spec.tolerations != new.spec.tolerations
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE
            before, after = old.metadata.labels or _NO_LABELS, new.metadata.labels or _NO_LABELS
            if before == after:
                return QueueingHint.QUEUE_SKIP
            changes = any(c.selector.matches(before) != c.selector.matches(after) for c in constraints)
            return QueueingHint.QUEUE if changes else QueueingHint.QUEUE_SKIP
        labels = (new if new is not None else old).metadata.labels
        matches = any(c.selector.matches(labels) for c in constraints)
        return QueueingHint.QUEUE if matches else QueueingHint.QUEUE_SKIP

    def _is_schedulable_after_node(self, pod: m.Pod, old: m.Node | None, new: m.Node | None) -> QueueingHint:
        """Queue for a node added or deleted that has every hard constraint's key, or updated so that
        it gains or loses one, changes a key's value, or changes its taints while having them all."""
        constraints = self._hard_constraints(pod)
        old_matches = old is not None and has_all_keys(_labels(old), constraints)
        new_matches = new is not None and has_all_keys(_labels(new), constraints)
        if old is not None and new is not None:
            if old_matches != new_matches:
                return QueueingHint.QUEUE
            before, after = _labels(old), _labels(new)
            relabelled = any(before.get(c.topology_key, "") != after.get(c.topology_key, "") for c in constraints)
            if new_matches and (relabelled or _taints(old) != _taints(new)):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if (new_matches if new is not None else old_matches) else QueueingHint.QUEUE_SKIP


# Any: pods as served (metadata and spec set), read without checks in the hint
def _involved(changed: Any, pod: Any) -> bool:
    """Whether a changed pod bears on `pod`'s spreading: it is `pod`, or assigned in its namespace."""
    if (changed.metadata.uid or "") == (pod.metadata.uid or ""):
        return True
    return bool(changed.spec.nodeName) and (changed.metadata.namespace or "default") == (
        pod.metadata.namespace or "default"
    )


def _taints(node: core_v1.Node) -> list[core_v1.Taint] | None:
    return node.spec.taints if node.spec is not None else None
