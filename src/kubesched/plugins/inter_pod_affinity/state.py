"""The CycleState entries: PreFilter's terms and counts (Filter reads them, AddPod/RemovePod update
them, cloned per cycle state), PreScore's scores; the error when one is missing."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.plugins.inter_pod_affinity.counts import _Counts, _Index
from kubesched.plugins.inter_pod_affinity.terms import _Term


@dataclass
class _PreFilterState:
    index: _Index
    pod: object
    namespace_labels: Mapping[str, str] | None
    affinity_terms: tuple[_Term, ...]  # the pod's required terms, namespaceSelector resolved
    anti_affinity_terms: tuple[_Term, ...]
    matches_own_affinity: bool
    existing: _Counts  # existing pods' required anti-affinity terms matching the pod
    affinity: _Counts  # pods matching every required affinity term of the pod (once per term)
    anti_affinity: _Counts  # pods matching each required anti-affinity term of the pod

    def clone(self) -> _PreFilterState:
        return dataclasses.replace(
            self,
            existing=self.existing.clone(),
            affinity=self.affinity.clone(),
            anti_affinity=self.anti_affinity.clone(),
        )

    def satisfies_affinity(self, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for t in self.affinity_terms:
            value = labels.get(t.topology_key)
            if value is None:
                return False
            if self.affinity.get(t.topology_key, value) <= 0:
                pods_exist = False
        # The first pod of a group with affinity to itself may go anywhere its keys exist.
        return pods_exist or (not self.affinity.nonzero and self.matches_own_affinity)

    def satisfies_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        if not self.anti_affinity.nonzero:
            return True
        for t in self.anti_affinity_terms:
            value = labels.get(t.topology_key)
            if value is not None and self.anti_affinity.get(t.topology_key, value) > 0:
                return False
        return True

    def satisfies_existing(self, labels: Mapping[str, str]) -> bool:
        if not self.existing.nonzero:
            return True
        for key in self.existing.arrays:
            value = labels.get(key)
            if value is not None and self.existing.get(key, value) > 0:
                return False
        return True


@dataclass(frozen=True)
class _PreScoreState:
    index: _Index
    scores: _Counts  # per domain, what a node in it scores

    def clone(self) -> _PreScoreState:
        return self


def _not_found(template: str, key: str) -> str:
    return template.format(f'"{key}"') + " from cycleState: not found"
