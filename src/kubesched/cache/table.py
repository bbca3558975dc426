"""`NodeTable`: the snapshot's nodes as NumPy columns, one row per node in snapshot order.

Batch plugin methods (`filter_batch`, `score_batch`) read these columns instead of walking
NodeInfo objects; rows are refreshed from the same incremental updates as the snapshot.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
import numpy.typing as npt

from kubesched.cache.nodeinfo import NodeInfo

Int = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]
_HARD_EFFECTS = ("NoSchedule", "NoExecute")
# Amounts below this bound, plus a request below it, stay below 2**56: array formulas that
# multiply them by 100 and by score weights cannot overflow int64.
EXACT_BOUND = 1 << 55
FLAGS = ("unschedulable", "hard_taints", "soft_taints", "used_ports", "images")
MEMO_LIMIT = 64  # memo columns kept, least recently used dropped first


@dataclass
class _Memo:
    column: Int
    seen: int  # how much of the change log the column reflects
    epoch: int


class NodeTable:
    """Per-node columns. `nodes[i]` is the NodeInfo of row i (for per-node fallbacks)."""

    def __init__(self) -> None:
        self.nodes: list[NodeInfo] = []
        self.names: list[str] = []  # of the nodes, by row
        self.index: dict[str, int] = {}
        self.ring: Int = np.zeros(0, dtype=np.int64)  # row numbers 0..n-1, twice
        # Rows updated since the last rebuild, in order; memo columns catch up from it.
        self._log: list[int] = []
        self._epoch = 0
        self._memos: OrderedDict[Hashable, _Memo] = OrderedDict()
        self._resize(0)

    def _resize(self, n: int) -> None:
        def zeros() -> Int:
            return np.zeros(n, dtype=np.int64)

        self.alloc_cpu, self.alloc_mem, self.alloc_eph, self.alloc_pods = zeros(), zeros(), zeros(), zeros()
        self.req_cpu, self.req_mem, self.req_eph, self.pod_count = zeros(), zeros(), zeros(), zeros()
        self.free_cpu, self.free_mem, self.free_eph, self.free_pods = zeros(), zeros(), zeros(), zeros()  # alloc - req
        self.nz_cpu, self.nz_mem = zeros(), zeros()
        # Flags, and how many rows have each (batch methods skip a flag no row has).
        self.unschedulable: Bool = np.zeros(n, dtype=bool)
        self.hard_taints: Bool = np.zeros(n, dtype=bool)  # a NoSchedule or NoExecute taint
        self.soft_taints: Bool = np.zeros(n, dtype=bool)  # a PreferNoSchedule taint
        self.used_ports: Bool = np.zeros(n, dtype=bool)
        self.images: Bool = np.zeros(n, dtype=bool)
        self.flag_counts = dict.fromkeys(FLAGS, 0)
        self.scalar_alloc: dict[str, Int] = {}
        self.scalar_req: dict[str, Int] = {}
        # Rows with an amount outside [0, EXACT_BOUND), and rows offering no cpu or no memory:
        # when there are none, batch methods skip their per-call range checks.
        self._inexact: Bool = np.zeros(n, dtype=bool)
        self._no_cpu_memory: Bool = np.zeros(n, dtype=bool)
        self.inexact_rows = 0
        self.rows_without_cpu_memory = 0

    def __len__(self) -> int:
        return len(self.nodes)

    def names_of(self, rows: Int) -> list[str]:
        """The node names of `rows`."""
        if len(rows) < 2:
            return [self.names[r] for r in rows.tolist()]
        return list(operator.itemgetter(*rows.tolist())(self.names))

    def memo(self, key: Hashable, every: Callable[[Int], Int], one: Callable[[NodeInfo], int]) -> Int:
        """A column holding a per-node quantity for every row, kept across scheduling cycles
        under `key` (which must name everything the quantity depends on besides the node):
        computed by `every(rows)` over all rows on first use, then refreshed by `one(node)` for
        just the rows updated since. `every` and `one` must agree row for row."""
        memo = self._memos.get(key)
        if memo is None or memo.epoch != self._epoch:
            memo = _Memo(every(self.ring[: len(self.nodes)]), len(self._log), self._epoch)
            self._memos[key] = memo
            if len(self._memos) > MEMO_LIMIT:
                self._memos.popitem(last=False)
        elif memo.seen < len(self._log):
            nodes, column = self.nodes, memo.column
            for i in set(self._log[memo.seen :]):
                column[i] = one(nodes[i])
            memo.seen = len(self._log)
        self._memos.move_to_end(key)
        return memo.column

    def exact(self, *requests: int) -> bool:
        """Whether every amount in the table and every one of `requests` is in [0, EXACT_BOUND)."""
        return not self.inexact_rows and all(0 <= r < EXACT_BOUND for r in requests)

    def rebuild(self, nodes: Sequence[NodeInfo]) -> None:
        self.nodes = list(nodes)
        self.names = [n.name for n in self.nodes]
        self.index = {name: i for i, name in enumerate(self.names)}
        self._resize(len(self.nodes))
        self.ring = np.tile(np.arange(len(self.nodes), dtype=np.int64), 2)
        for i, node in enumerate(self.nodes):
            self.update_row(i, node)
        self._new_epoch()

    def _new_epoch(self) -> None:
        """Every memo column is recomputed on its next use."""
        self._log.clear()
        self._epoch += 1

    def update(self, node: NodeInfo) -> None:
        """Refresh the row of a node already in the table."""
        i = self.index.get(node.name)
        if i is not None:
            self.nodes[i] = node
            self.update_row(i, node)
            self._log.append(i)
            if len(self._log) > 4 * len(self.nodes) + 1024:
                self._new_epoch()

    def update_row(self, i: int, node: NodeInfo) -> None:
        alloc, req = node.allocatable, node.requested
        self.alloc_cpu[i], self.alloc_mem[i], self.alloc_eph[i] = alloc.cpu, alloc.memory, alloc.ephemeral
        self.req_cpu[i], self.req_mem[i], self.req_eph[i] = req.cpu, req.memory, req.ephemeral
        self.free_cpu[i], self.free_mem[i] = alloc.cpu - req.cpu, alloc.memory - req.memory
        self.free_eph[i] = alloc.ephemeral - req.ephemeral
        self.alloc_pods[i], self.pod_count[i] = alloc.pods, len(node.pods)
        self.free_pods[i] = alloc.pods - len(node.pods)
        self.nz_cpu[i], self.nz_mem[i] = node.non_zero_cpu, node.non_zero_memory
        amounts = [alloc.cpu, alloc.memory, alloc.ephemeral, req.cpu, req.memory, req.ephemeral]
        amounts += (node.non_zero_cpu, node.non_zero_memory)
        for name in set(alloc.scalar) | set(req.scalar) | set(self.scalar_alloc):
            if name not in self.scalar_alloc:
                self.scalar_alloc[name] = np.zeros(len(self.nodes), dtype=np.int64)
                self.scalar_req[name] = np.zeros(len(self.nodes), dtype=np.int64)
            have, taken = alloc.scalar.get(name, 0), req.scalar.get(name, 0)
            self.scalar_alloc[name][i], self.scalar_req[name][i] = have, taken
            amounts += (have, taken)
        inexact = min(amounts) < 0 or max(amounts) >= EXACT_BOUND
        if inexact != self._inexact[i]:
            self._inexact[i] = inexact
            self.inexact_rows += 1 if inexact else -1
        missing = alloc.cpu <= 0 or alloc.memory <= 0
        if missing != self._no_cpu_memory[i]:
            self._no_cpu_memory[i] = missing
            self.rows_without_cpu_memory += 1 if missing else -1
        spec = node.node.spec if node.node is not None else None
        taints = (spec.taints if spec else None) or []
        self._flag(self.unschedulable, "unschedulable", i, bool(spec and spec.unschedulable))
        self._flag(self.hard_taints, "hard_taints", i, any(t.effect in _HARD_EFFECTS for t in taints))
        self._flag(self.soft_taints, "soft_taints", i, any(t.effect == "PreferNoSchedule" for t in taints))
        self._flag(self.used_ports, "used_ports", i, bool(node.used_ports))
        self._flag(self.images, "images", i, bool(node.image_states))

    def _flag(self, column: Bool, name: str, i: int, value: bool) -> None:
        if column[i] != value:
            column[i] = value
            self.flag_counts[name] += 1 if value else -1

    def flagged(self, name: str, rows: Int) -> Bool | None:
        """The flag column `name` at `rows`; None when no row of the table has the flag."""
        if not self.flag_counts[name]:
            return None
        column: Bool = getattr(self, name)
        return column[rows]


class RowNodes(Sequence[NodeInfo]):
    """The NodeInfo of some table rows, in the rows' order, looked up only when read."""

    __slots__ = ("_names", "_nodes", "rows")

    def __init__(self, table: NodeTable, rows: Int) -> None:
        self._nodes = table.nodes
        self._names = table.names
        self.rows = rows

    def names(self) -> tuple[str, ...]:
        """The nodes' names, without looking the nodes up."""
        rows = self.rows.tolist()
        if len(rows) < 2:
            return tuple(self._names[r] for r in rows)
        return operator.itemgetter(*rows)(self._names)  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...
    @overload
    def __getitem__(self, i: slice) -> list[NodeInfo]: ...
    def __getitem__(self, i: int | slice) -> NodeInfo | list[NodeInfo]:
        if isinstance(i, slice):
            return [self._nodes[r] for r in self.rows[i].tolist()]
        return self._nodes[int(self.rows[i])]

    def __iter__(self) -> Iterator[NodeInfo]:
        nodes = self._nodes
        return (nodes[r] for r in self.rows.tolist())
