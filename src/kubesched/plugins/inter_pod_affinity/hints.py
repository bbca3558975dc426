"""QueueingHints: the pod and node events the plugin registers and whether each may make a queued
pod schedulable, read from the pod's namespace, labels and required terms."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import msgspec
from lightkube.models import core_v1 as m

from kubesched.api.objects import meta_of
from kubesched.plugin import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.plugins.inter_pod_affinity.base import _Base
from kubesched.plugins.inter_pod_affinity.terms import (
    _NO_LABELS,
    _REQUIRED_AFFINITY,
    _REQUIRED_ANTI_AFFINITY,
    _matches_all,
    _namespace,
    _parse,
    _PodTerms,
)

HINT_CACHE_SIZE = 1024  # queued pods' parsed terms, by hint key


# Any: the event's pod as served (spec set), read without checks in the hint
def _placed(pod: Any) -> bool:
    return bool(pod.spec.nodeName) or bool(pod.status is not None and pod.status.nominatedNodeName)


class _Hints(_Base):
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                hint=self._after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), hint=self._after_node_change
            ),
        ]

    # Any: the queued pod as served (metadata and spec set), read without checks on the queue's per-pod path
    def hint_key(self, pod: Any) -> Hashable:
        """The pod's namespace, labels and required terms: all the hints read of the pod."""
        affinity = pod.spec.affinity
        positive = affinity.podAffinity if affinity is not None else None
        negative = affinity.podAntiAffinity if affinity is not None else None
        return (
            _namespace(pod),
            tuple(sorted((pod.metadata.labels or _NO_LABELS).items())),
            msgspec.json.encode(positive.requiredDuringSchedulingIgnoredDuringExecution) if positive else None,
            msgspec.json.encode(negative.requiredDuringSchedulingIgnoredDuringExecution) if negative else None,
        )

    def _queued_terms(self, pod: object) -> _PodTerms:
        """The queued pod's terms as the hints read them; a ValueError (Queue) if some do not parse."""
        key = self.hint_key(pod)
        terms = self._hint_terms.get(key)
        if terms is None:
            if len(self._hint_terms) >= HINT_CACHE_SIZE:
                self._hint_terms.clear()
            terms = self._hint_terms[key] = _parse(pod)
        if _REQUIRED_AFFINITY in terms.errors or _REQUIRED_ANTI_AFFINITY in terms.errors:
            raise ValueError(terms.error)
        return terms

    # Any: the event's pods as served (metadata set), read without checks in this hint
    def _after_pod_change(self, pod: m.Pod, old: Any, new: Any) -> QueueingHint:
        if (
            old is not None
            and new is not None
            and new.metadata.uid == meta_of(pod).uid
            and (old.metadata.labels or _NO_LABELS) != (new.metadata.labels or _NO_LABELS)
        ):
            return QueueingHint.QUEUE  # the pod's own labels decide its self-affinity and others' anti-affinity
        old = old if old is not None and _placed(old) else None
        new = new if new is not None and _placed(new) else None
        if old is None and new is None:
            return QueueingHint.QUEUE_SKIP
        terms = self._queued_terms(pod)
        affinity, anti_affinity = terms.required_affinity, terms.required_anti_affinity
        if old is not None and new is not None:
            if not _matches_all(affinity, old) and _matches_all(affinity, new):
                return QueueingHint.QUEUE
            if _matches_all(anti_affinity, old) and not _matches_all(anti_affinity, new):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new is not None:
            return QueueingHint.QUEUE if _matches_all(affinity, new) else QueueingHint.QUEUE_SKIP
        if _matches_all(anti_affinity, old):
            return QueueingHint.QUEUE
        deleted = self._terms(old)
        if _REQUIRED_ANTI_AFFINITY in deleted.errors:
            raise ValueError(deleted.errors[_REQUIRED_ANTI_AFFINITY])
        return QueueingHint.QUEUE if _matches_all(deleted.required_anti_affinity, pod) else QueueingHint.QUEUE_SKIP

    # Any: the event's Nodes as served (metadata set), read without checks in this hint
    def _after_node_change(self, pod: m.Pod, old: Any, new: Any) -> QueueingHint:
        terms = self._queued_terms(pod)
        new_labels = new.metadata.labels or _NO_LABELS
        old_labels = (old.metadata.labels or _NO_LABELS) if old is not None else None
        for t in terms.required_affinity:
            value = new_labels.get(t.topology_key)
            if value is None:
                continue
            if old_labels is None or old_labels.get(t.topology_key) != value:
                return QueueingHint.QUEUE  # a new node in some domain, or a node moved into another one
        for t in terms.required_anti_affinity:
            if old_labels is None:
                return QueueingHint.QUEUE  # a node without the key always passes; one with it might
            before = old_labels.get(t.topology_key)
            if before is not None and new_labels.get(t.topology_key) != before:
                return QueueingHint.QUEUE  # the node left its domain
        return QueueingHint.QUEUE_SKIP
