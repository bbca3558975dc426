"""What PreFilter and PreScore leave in the cycle state: the matching-pod counts of each
constraint's topology domains (updated by AddPod/RemovePod, cloned with the state)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.plugin.batch import Bool, Int
from kubesched.plugins.pod_topology_spread.args import NAME
from kubesched.plugins.pod_topology_spread.constraints import Constraint, has_all_keys

PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
MAX_INT32 = 2**31 - 1  # the global minimum while no domain exists, as upstream


class Domains:
    """Matching-pod counts of one constraint's topology domains, by domain id (`ids`: value → id,
    shared by the plugin for the topology key). `present` marks the domains that exist."""

    __slots__ = ("counts", "ids", "minimum", "present", "size")

    def __init__(self, ids: dict[str, int], counts: Int, present: Bool) -> None:
        self.ids = ids
        self.counts = counts
        self.present = present
        self.size = int(np.count_nonzero(present))
        self.minimum = int(counts[present].min()) if self.size else MAX_INT32

    def count(self, value: str) -> int:
        d = self.ids.get(value)
        return int(self.counts[d]) if d is not None and d < len(self.counts) else 0

    def global_minimum(self, min_domains: int) -> int:
        return 0 if self.size < min_domains else self.minimum

    def as_dict(self) -> dict[str, int]:
        """The counts by domain value (for tests and debugging)."""
        return {v: int(self.counts[d]) for v, d in self.ids.items() if d < len(self.present) and self.present[d]}

    def column(self, ids: Int) -> Int:
        """The counts of the domains `ids` (all >= 0); domains unknown to this state count 0."""
        if len(ids) and int(ids.max()) >= len(self.counts):
            self._grow(int(ids.max()) + 1)
        out: Int = self.counts[ids]
        return out

    def _grow(self, size: int) -> None:
        extra = size - len(self.counts)
        self.counts = np.concatenate((self.counts, np.zeros(extra, dtype=np.int64)))
        self.present = np.concatenate((self.present, np.zeros(extra, dtype=np.bool_)))

    def update(self, value: str, delta: int) -> None:
        """Add `delta` to the count of the domain `value` (which then exists), keeping the minimum exact."""
        d = self.ids.setdefault(value, len(self.ids))
        if d >= len(self.counts):
            self._grow(d + 1)
        old = int(self.counts[d])
        self.counts[d] = old + delta
        if not self.present[d]:
            self.present[d] = True
            self.size += 1
            self.minimum = min(self.minimum, old + delta)
        elif old + delta < self.minimum:
            self.minimum = old + delta
        elif old == self.minimum and delta > 0:
            self.minimum = int(self.counts[self.present].min())

    def clone(self) -> Domains:
        c = Domains.__new__(Domains)
        c.ids, c.counts, c.present = self.ids, self.counts.copy(), self.present.copy()
        c.size, c.minimum = self.size, self.minimum
        return c


class _PreFilterState:
    __slots__ = ("constraints", "domains")

    def __init__(self, constraints: Sequence[Constraint], domains: list[Domains]) -> None:
        self.constraints = tuple(constraints)
        self.domains = domains

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.constraints, [d.clone() for d in self.domains])


@dataclass(frozen=True)
class _PreScoreState:
    """Soft constraints; per constraint its weight and, unless it spreads by hostname, the counts of
    its domains; which of the scored nodes (by position) are ignored."""

    constraints: tuple[Constraint, ...]
    require_all: bool
    weights: tuple[float, ...]
    domains: tuple[Domains | None, ...]
    ignored: Bool
    namespace: str

    def clone(self) -> _PreScoreState:
        return self  # not modified after PreScore

    def is_ignored(self, labels: Mapping[str, str]) -> bool:
        return self.require_all and not has_all_keys(labels, self.constraints)


def _domains_of(ids: dict[str, int], sums: Mapping[int, int]) -> Domains:
    """`Domains` from the counts of the domains that exist, by id."""
    counts = np.zeros(len(ids), dtype=np.int64)
    present = np.zeros(len(ids), dtype=np.bool_)
    for d, count in sums.items():
        counts[d], present[d] = count, True
    return Domains(ids, counts, present)
