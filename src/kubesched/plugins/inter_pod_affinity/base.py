"""What the plugin's parts share: its args and handle, the parsed terms of pods, the ids behind its
NodeTable memo columns and the columns (domain ids, matching pods, term signatures)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from kubesched.plugin.batch import Int
from kubesched.plugins.inter_pod_affinity.args import InterPodAffinityArgs
from kubesched.plugins.inter_pod_affinity.counts import _Index
from kubesched.plugins.inter_pod_affinity.names import NAME
from kubesched.plugins.inter_pod_affinity.terms import NO_TERMS, _labels, _parse, _PodTerms, _Term

if TYPE_CHECKING:
    from kubesched.plugin import Handle, NodeInfo
    from kubesched.plugin.batch import NodeTable

PARSED_CACHE_SIZE = 1 << 17  # pods whose parsed terms are kept

_DOMAIN_MEMO = NAME + "/domain"
_MATCH_MEMO = NAME + "/match"
_SIGNATURE_MEMO = NAME + "/terms"


class _Base:
    """The plugin's state; its parts (precompute, filtering, scoring, hints) are mixins over it."""

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self._index = _Index()
        self._parsed: dict[int, tuple[object, _PodTerms]] = {}
        self._hint_terms: dict[Hashable, _PodTerms] = {}

    def _terms(self, pod: object) -> _PodTerms:
        """The pod object's parsed terms (kept while the object lives in the cluster's cache)."""
        found = self._parsed.get(id(pod))
        if found is not None and found[0] is pod:
            return found[1]
        terms = _parse(pod)
        if terms is NO_TERMS:
            return terms  # nothing worth keeping the pod alive for
        if len(self._parsed) >= PARSED_CACHE_SIZE:
            self._parsed.clear()
        self._parsed[id(pod)] = (pod, terms)
        return terms

    def _namespaces(self) -> Mapping[str, Mapping[str, str]]:
        return self.handle.listers.namespaces

    # -- memo columns ---------------------------------------------------------------------------

    @staticmethod
    def _column(table: NodeTable, key: Hashable, one: Callable[[NodeInfo], int]) -> Int:
        nodes = table.nodes
        return table.memo(
            key, lambda rows: np.fromiter((one(nodes[r]) for r in rows.tolist()), np.int64, count=len(rows)), one
        )

    def _domain_column(self, table: NodeTable, index: _Index, key: str) -> Int:
        """Per row, the id of the node's value for label `key`, -1 without it."""

        def one(node: NodeInfo) -> int:
            value = _labels(node).get(key)
            return -1 if value is None else index.domain_id(key, value)

        return self._column(table, (_DOMAIN_MEMO, index.token, key), one)

    def _match_column(self, table: NodeTable, terms: tuple[_Term, ...]) -> Int:
        """Per row, the node's pods matching every term (terms of an incoming pod: namespaces resolved)."""

        def one(node: NodeInfo) -> int:
            return sum(1 for p in node.pods if all(t.matches(p.pod, None) for t in terms))

        return self._column(table, (_MATCH_MEMO, tuple(t.match_key for t in terms)), one)

    def _signature_column(self, table: NodeTable, index: _Index, scoring: bool) -> Int:
        """Per row, the signature id of the terms the node's pods carry: their required anti-affinity
        terms, or (`scoring`) their affinity terms as (kind, weight, term id)."""

        def anti(node: NodeInfo) -> int:
            if not node.pods_with_required_anti_affinity:
                return 0
            found = Counter(
                index.term_id(t)
                for p in node.pods_with_required_anti_affinity
                for t in self._terms(p.pod).required_anti_affinity
            )
            return index.signature_id(tuple(sorted(found.items())))

        def scored(node: NodeInfo) -> int:
            if not node.pods_with_affinity:
                return 0
            found: Counter[tuple[int, int, int]] = Counter()
            for p in node.pods_with_affinity:
                terms = self._terms(p.pod)
                found.update((0, 0, index.term_id(t)) for t in terms.required_affinity)
                found.update((1, w, index.term_id(t)) for w, t in terms.preferred_affinity)
                found.update((2, -w, index.term_id(t)) for w, t in terms.preferred_anti_affinity)
            return index.signature_id(tuple(sorted(found.items())))

        return self._column(table, (_SIGNATURE_MEMO, index.token, scoring), scored if scoring else anti)
