"""PreFilter and PreScore: the per-domain counts Filter reads and the per-domain scores Score reads,
from NodeTable memo columns (bincounts) in large clusters (above FEW_PODS pods, FEW_NODES nodes with
pods with affinity), else walking the pods; AddPod/RemovePod are in `filtering`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.plugin import SKIP, Status
from kubesched.plugin.batch import Bool, Int
from kubesched.plugins.inter_pod_affinity.base import _Base
from kubesched.plugins.inter_pod_affinity.counts import _bump, _Counts, _Index
from kubesched.plugins.inter_pod_affinity.names import PRE_FILTER_STATE_KEY, PRE_SCORE_STATE_KEY
from kubesched.plugins.inter_pod_affinity.state import _PreFilterState, _PreScoreState
from kubesched.plugins.inter_pod_affinity.terms import _labels, _matches_all, _Term

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, NodeInfo, PodInfo, PreFilterResult
    from kubesched.plugin.batch import NodeTable

# Up to this many pods in the cluster, the incoming pod's terms are matched pod by pod; up to this
# many nodes hosting pods with (anti-)affinity, their pods' terms are read pod by pod.
FEW_PODS = 256
FEW_NODES = 32


class _Precompute(_Base):
    # -- PreFilter --------------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        terms = self._terms(pod.pod)
        if terms.errors:
            return None, Status.unresolvable(f"parsing pod: {terms.error}")
        snapshot = self.handle.snapshot
        table = snapshot.table
        required = terms.required_affinity or terms.required_anti_affinity
        if not required and not snapshot.have_pods_with_required_anti_affinity:
            return None, SKIP
        if self._index.total() > 8 * (len(table) + 1024):
            self._index = _Index()
        index = self._index
        namespaces = self._namespaces()
        namespace_labels = namespaces.get(pod.namespace)
        affinity = tuple(t.resolved(namespaces) for t in terms.required_affinity)
        anti_affinity = tuple(t.resolved(namespaces) for t in terms.required_anti_affinity)
        existing = self._existing_anti_affinity(pod.pod, namespace_labels, index)
        affinity_counts, anti_affinity_counts = _Counts(index), _Counts(index)
        if affinity or anti_affinity:
            aligned = nodes is snapshot.node_info_list and len(table) == len(nodes)
            if aligned and int(table.pod_count.sum()) > FEW_PODS:
                self._incoming_by_table(affinity, anti_affinity, table, affinity_counts, anti_affinity_counts)
            else:
                _incoming_by_pods(affinity, anti_affinity, nodes, affinity_counts, anti_affinity_counts)
        elif not existing.nonzero:
            return None, SKIP
        state.write(
            PRE_FILTER_STATE_KEY,
            _PreFilterState(
                index,
                pod.pod,
                namespace_labels,
                affinity,
                anti_affinity,
                _matches_all(affinity, pod.pod),
                existing,
                affinity_counts,
                anti_affinity_counts,
            ),
        )
        return None, None

    def _existing_anti_affinity(
        self, pod: object, namespace_labels: Mapping[str, str] | None, index: _Index
    ) -> _Counts:
        """Per domain, the existing pods' required anti-affinity terms that match the incoming pod."""
        snapshot = self.handle.snapshot
        nodes = snapshot.have_pods_with_required_anti_affinity
        counts = _Counts(index)
        if len(nodes) > FEW_NODES and len(snapshot.table) == len(snapshot.node_info_list):
            table = snapshot.table
            column = self._signature_column(table, index, scoring=False)
            by_key: dict[str, Int] = {}
            matched: dict[int, bool] = {}
            for signature in np.flatnonzero(np.bincount(column)).tolist():  # the ids present, ascending
                for term_id, n in index.signatures[signature]:
                    term = index.terms[term_id]
                    hit = matched.get(term_id)
                    if hit is None:
                        hit = matched[term_id] = term.matches(pod, namespace_labels)
                    if hit:
                        if term.topology_key not in by_key:
                            by_key[term.topology_key] = np.zeros(len(index.signatures), dtype=np.int64)
                        by_key[term.topology_key][signature] += n
            for key, by_signature in by_key.items():
                counts.add_rows(key, self._domain_column(table, index, key), by_signature[column])
            return counts
        for node in nodes:
            labels = _labels(node)
            for p in node.pods_with_required_anti_affinity:
                for t in self._terms(p.pod).required_anti_affinity:
                    if t.matches(pod, namespace_labels):
                        _bump(counts, labels, t.topology_key, 1)
        return counts

    def _incoming_by_table(
        self,
        affinity: tuple[_Term, ...],
        anti_affinity: tuple[_Term, ...],
        table: NodeTable,
        affinity_counts: _Counts,
        anti_affinity_counts: _Counts,
    ) -> None:
        index = affinity_counts.index
        if affinity:
            matching = self._match_column(table, affinity)
            for t in affinity:
                affinity_counts.add_rows(t.topology_key, self._domain_column(table, index, t.topology_key), matching)
        for t in anti_affinity:
            domains = self._domain_column(table, index, t.topology_key)
            anti_affinity_counts.add_rows(t.topology_key, domains, self._match_column(table, (t,)))

    # -- PreScore -----------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity = pod.pod.spec.affinity
        positive = affinity.podAffinity if affinity is not None else None
        negative = affinity.podAntiAffinity if affinity is not None else None
        has_preferred = bool(positive is not None and positive.preferredDuringSchedulingIgnoredDuringExecution) or bool(
            negative is not None and negative.preferredDuringSchedulingIgnoredDuringExecution
        )
        if self.args.ignore_preferred_terms_of_existing_pods and not has_preferred:
            return SKIP
        terms = self._terms(pod.pod)
        if terms.errors:
            return Status.error(f"failed to parse pod: {terms.error}")
        snapshot = self.handle.snapshot
        table = snapshot.table
        index = self._index
        namespaces = self._namespaces()
        preferred = [(w, t.resolved(namespaces)) for w, t in terms.preferred_affinity]
        preferred += [(-w, t.resolved(namespaces)) for w, t in terms.preferred_anti_affinity]
        aligned = len(table) == len(snapshot.node_info_list)
        scores = _Counts(index)
        touched = False  # some term matched a pod on a node with its topology key
        if preferred:
            if aligned and int(table.pod_count.sum()) > FEW_PODS:
                touched = self._preferred_by_table(preferred, table, scores)
            else:
                touched = _preferred_by_pods(preferred, snapshot.node_info_list, scores)
        with_affinity = snapshot.have_pods_with_affinity
        if with_affinity:
            namespace_labels = namespaces.get(pod.namespace)
            if aligned and len(with_affinity) > FEW_NODES:
                touched |= self._existing_by_table(pod.pod, namespace_labels, table, scores)
            else:
                touched |= self._existing_by_pods(pod.pod, namespace_labels, with_affinity, scores)
        if not touched:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(index, scores))
        return None

    def _preferred_by_table(self, preferred: list[tuple[int, _Term]], table: NodeTable, scores: _Counts) -> bool:
        """Add the incoming pod's preferred terms matched by existing pods; whether any matched."""
        touched = False
        for weight, t in preferred:
            matching = self._match_column(table, (t,))
            domains = self._domain_column(table, scores.index, t.topology_key)
            if ((matching > 0) & (domains >= 0)).any():
                touched = True
                scores.add_rows(t.topology_key, domains, matching * weight)
        return touched

    def _existing_by_table(
        self, pod: object, namespace_labels: Mapping[str, str] | None, table: NodeTable, scores: _Counts
    ) -> bool:
        """Add existing pods' affinity terms the incoming pod matches; whether any matched."""
        index = scores.index
        column = self._signature_column(table, index, scoring=True)
        by_key: dict[str, tuple[Int, Bool]] = {}
        matched: dict[int, bool] = {}
        hard = self.args.hard_pod_affinity_weight
        for signature in np.flatnonzero(np.bincount(column)).tolist():  # the ids present, ascending
            for (kind, weight, term_id), n in index.signatures[signature]:
                if kind == 0:
                    if hard <= 0:
                        continue
                    weight = hard
                term = index.terms[term_id]
                hit = matched.get(term_id)
                if hit is None:
                    hit = matched[term_id] = term.matches(pod, namespace_labels)
                if hit:
                    if term.topology_key not in by_key:
                        size = len(index.signatures)
                        by_key[term.topology_key] = (np.zeros(size, np.int64), np.zeros(size, np.bool_))
                    amounts, seen = by_key[term.topology_key]
                    amounts[signature] += weight * n
                    seen[signature] = True
        touched = False
        for key, (amounts, seen) in by_key.items():
            domains = self._domain_column(table, index, key)
            if (seen[column] & (domains >= 0)).any():
                touched = True
                scores.add_rows(key, domains, amounts[column])
        return touched

    def _existing_by_pods(
        self, pod: object, namespace_labels: Mapping[str, str] | None, nodes: Sequence[NodeInfo], scores: _Counts
    ) -> bool:
        hard = self.args.hard_pod_affinity_weight
        touched = False
        for node in nodes:
            labels = _labels(node)
            if not labels:
                continue
            for p in node.pods_with_affinity:
                terms = self._terms(p.pod)
                weighted = [*terms.preferred_affinity, *((-w, t) for w, t in terms.preferred_anti_affinity)]
                if hard > 0:
                    weighted += [(hard, t) for t in terms.required_affinity]
                for weight, t in weighted:
                    if t.matches(pod, namespace_labels) and _bump(scores, labels, t.topology_key, weight):
                        touched = True
        return touched


def _incoming_by_pods(
    affinity: tuple[_Term, ...],
    anti_affinity: tuple[_Term, ...],
    nodes: Sequence[NodeInfo],
    affinity_counts: _Counts,
    anti_affinity_counts: _Counts,
) -> None:
    for node in nodes:
        labels = _labels(node)
        for p in node.pods:
            if _matches_all(affinity, p.pod):
                for t in affinity:
                    _bump(affinity_counts, labels, t.topology_key, 1)
            for t in anti_affinity:
                if t.matches(p.pod, None):
                    _bump(anti_affinity_counts, labels, t.topology_key, 1)


def _preferred_by_pods(preferred: list[tuple[int, _Term]], nodes: Sequence[NodeInfo], scores: _Counts) -> bool:
    touched = False
    for node in nodes:
        labels = _labels(node)
        if not labels:
            continue
        for p in node.pods:
            for weight, t in preferred:
                if t.matches(p.pod, None) and _bump(scores, labels, t.topology_key, weight):
                    touched = True
    return touched
