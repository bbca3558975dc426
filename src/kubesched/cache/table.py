"""`NodeTable`: the snapshot's nodes as NumPy columns, one row per node in snapshot order.

Batch plugin methods (`filter_batch`, `score_batch`) read these columns instead of walking
NodeInfo objects; rows are refreshed from the same incremental updates as the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from kubesched.cache.nodeinfo import NodeInfo

Int = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]
_HARD_EFFECTS = ("NoSchedule", "NoExecute")
# Amounts below this bound, plus a request below it, stay below 2**56: array formulas that
# multiply them by 100 and by score weights cannot overflow int64.
EXACT_BOUND = 1 << 55


class NodeTable:
    """Per-node columns. `nodes[i]` is the NodeInfo of row i (for per-node fallbacks)."""

    def __init__(self) -> None:
        self.nodes: list[NodeInfo] = []
        self.index: dict[str, int] = {}
        self.ring: Int = np.zeros(0, dtype=np.int64)  # row numbers 0..n-1, twice
        self._derivations: dict[str, Callable[[NodeInfo], int]] = {}
        self._resize(0)

    def _resize(self, n: int) -> None:
        def zeros() -> Int:
            return np.zeros(n, dtype=np.int64)

        self.alloc_cpu, self.alloc_mem, self.alloc_eph, self.alloc_pods = zeros(), zeros(), zeros(), zeros()
        self.req_cpu, self.req_mem, self.req_eph, self.pod_count = zeros(), zeros(), zeros(), zeros()
        self.nz_cpu, self.nz_mem = zeros(), zeros()
        self.unschedulable: Bool = np.zeros(n, dtype=bool)
        self.hard_taints: Bool = np.zeros(n, dtype=bool)
        self.soft_taints: Bool = np.zeros(n, dtype=bool)
        self.used_ports: Bool = np.zeros(n, dtype=bool)
        self.images: Bool = np.zeros(n, dtype=bool)
        self.scalar_alloc: dict[str, Int] = {}
        self.scalar_req: dict[str, Int] = {}
        # Rows with an amount outside [0, EXACT_BOUND), and rows offering no cpu or no memory:
        # when there are none, batch methods skip their per-call range checks.
        self._inexact: Bool = np.zeros(n, dtype=bool)
        self._no_cpu_memory: Bool = np.zeros(n, dtype=bool)
        self.inexact_rows = 0
        self.rows_without_cpu_memory = 0
        self._derived: dict[str, Int] = {name: np.zeros(n, dtype=np.int64) for name in self._derivations}

    def __len__(self) -> int:
        return len(self.nodes)

    def derived(self, name: str, fn: Callable[[NodeInfo], int]) -> Int:
        """A column of `fn(node)` per row, registered under `name` on first use and kept up to
        date with every row update from then on: a plugin's per-node quantity that does not
        depend on the pod being scheduled."""
        column = self._derived.get(name)
        if column is None:
            self._derivations[name] = fn
            column = self._derived[name] = np.fromiter((fn(n) for n in self.nodes), np.int64, len(self.nodes))
        return column

    def exact(self, *requests: int) -> bool:
        """Whether every amount in the table and every one of `requests` is in [0, EXACT_BOUND)."""
        return not self.inexact_rows and all(0 <= r < EXACT_BOUND for r in requests)

    def rebuild(self, nodes: Sequence[NodeInfo]) -> None:
        self.nodes = list(nodes)
        self.index = {n.name: i for i, n in enumerate(self.nodes)}
        self._resize(len(self.nodes))
        self.ring = np.tile(np.arange(len(self.nodes), dtype=np.int64), 2)
        for i, node in enumerate(self.nodes):
            self.update_row(i, node)

    def update(self, node: NodeInfo) -> None:
        """Refresh the row of a node already in the table."""
        i = self.index.get(node.name)
        if i is not None:
            self.nodes[i] = node
            self.update_row(i, node)

    def update_row(self, i: int, node: NodeInfo) -> None:
        alloc, req = node.allocatable, node.requested
        self.alloc_cpu[i], self.alloc_mem[i], self.alloc_eph[i], self.alloc_pods[i] = (
            alloc.cpu,
            alloc.memory,
            alloc.ephemeral,
            alloc.pods,
        )
        self.req_cpu[i], self.req_mem[i], self.req_eph[i] = req.cpu, req.memory, req.ephemeral
        self.pod_count[i] = len(node.pods)
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
        self.unschedulable[i] = bool(spec and spec.unschedulable)
        self.hard_taints[i] = any(t.effect in _HARD_EFFECTS for t in taints)
        self.soft_taints[i] = any(t.effect == "PreferNoSchedule" for t in taints)
        self.used_ports[i] = bool(node.used_ports)
        self.images[i] = bool(node.image_states)
        for name, fn in self._derivations.items():
            self._derived[name][i] = fn(node)
