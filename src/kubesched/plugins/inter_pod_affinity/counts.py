"""Per-domain numbers: the ids of domains, terms and term multisets (`_Index`) and int64 counts by
domain id, copied on write (`_Counts`)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from kubesched.plugin.batch import Int
from kubesched.plugins.inter_pod_affinity.terms import _Term


class _Index:
    """Ids shared by one plugin's memo columns and states: per topology key its domains (label
    values), the existing pods' terms, and multisets of terms ("signatures", 0 for none)."""

    def __init__(self) -> None:
        self.token = object()  # names the memo columns holding these ids
        self.domains: dict[str, dict[str, int]] = {}
        self.term_ids: dict[Hashable, int] = {}
        self.terms: list[_Term] = []
        self.signature_ids: dict[Hashable, int] = {(): 0}
        # Any: a multiset's entries, (term id, count) or ((kind, weight, term id), count) as its user keeps them
        self.signatures: list[tuple[Any, ...]] = [()]

    def domain_id(self, key: str, value: str) -> int:
        ids = self.domains.setdefault(key, {})
        return ids.setdefault(value, len(ids))

    def find(self, key: str, value: str) -> int | None:
        ids = self.domains.get(key)
        return ids.get(value) if ids is not None else None

    def size(self, key: str) -> int:
        ids = self.domains.get(key)
        return len(ids) if ids is not None else 0

    def term_id(self, term: _Term) -> int:
        found = self.term_ids.get(term.key)
        if found is None:
            found = self.term_ids[term.key] = len(self.terms)
            self.terms.append(term)
        return found

    def signature_id(self, entries: tuple[object, ...]) -> int:
        found = self.signature_ids.get(entries)
        if found is None:
            found = self.signature_ids[entries] = len(self.signatures)
            self.signatures.append(entries)
        return found

    def total(self) -> int:
        return sum(len(ids) for ids in self.domains.values()) + len(self.terms) + len(self.signatures)


class _Counts:
    """Numbers per topology domain: for each topology key an int64 array by domain id. Clones share
    arrays until one of them writes (copy on write); `nonzero` counts the non-zero entries, the
    entries of upstream's map."""

    __slots__ = ("_owned", "arrays", "index", "nonzero")

    def __init__(self, index: _Index) -> None:
        self.index = index
        self.arrays: dict[str, Int] = {}
        self._owned: set[str] = set()
        self.nonzero = 0

    def get(self, key: str, value: str) -> int:
        array = self.arrays.get(key)
        if array is None:
            return 0
        i = self.index.find(key, value)
        return int(array[i]) if i is not None and i < len(array) else 0

    def add(self, key: str, value: str, delta: int) -> None:
        i = self.index.domain_id(key, value)
        array = self._writable(key, i + 1)
        before = int(array[i])
        array[i] = before + delta
        self.nonzero += (before + delta != 0) - (before != 0)

    def add_rows(self, key: str, domains: Int, amounts: Int) -> None:
        """Add each row's amount to the row's domain (rows without the key have domain -1)."""
        valid = (domains >= 0) & (amounts != 0)
        if not valid.any():
            return
        size = self.index.size(key)
        sums = np.bincount(domains[valid], weights=amounts[valid], minlength=size).astype(np.int64)
        array = self._writable(key, size)
        self.nonzero -= int(np.count_nonzero(array))
        array[: len(sums)] += sums
        self.nonzero += int(np.count_nonzero(array))

    def padded(self, key: str) -> Int:
        """The numbers by domain id for every id of the key, plus a 0 last (read by domain -1)."""
        size = self.index.size(key)
        out = np.zeros(size + 1, dtype=np.int64)
        array = self.arrays.get(key)
        if array is not None:
            n = min(size, len(array))
            out[:n] = array[:n]
        return out

    def _writable(self, key: str, size: int) -> Int:
        array = self.arrays.get(key)
        if array is None:
            array = np.zeros(max(size, self.index.size(key)), dtype=np.int64)
        elif len(array) < size:
            array = np.concatenate((array, np.zeros(max(size, 2 * len(array)) - len(array), dtype=np.int64)))
        elif key not in self._owned:
            array = array.copy()
        self.arrays[key] = array
        self._owned.add(key)
        return array

    def clone(self) -> _Counts:
        c = _Counts(self.index)
        c.arrays = dict(self.arrays)
        c.nonzero = self.nonzero
        return c


def _bump(counts: _Counts, labels: Mapping[str, str], key: str, delta: int) -> bool:
    """Add `delta` to the node's domain for `key`; False when the node has no such label."""
    value = labels.get(key)
    if value is None:
        return False
    counts.add(key, value, delta)
    return True
