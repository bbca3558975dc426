"""`NodeTable`: the snapshot's nodes as NumPy columns, one row per node in snapshot order.

Batch plugin methods (`filter_batch`, `score_batch`) read these columns instead of walking
NodeInfo objects; rows are refreshed from the same incremental updates as the snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kubesched.cache.nodeinfo import NodeInfo

Int = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]
_HARD_EFFECTS = ("NoSchedule", "NoExecute")


class NodeTable:
    """Per-node columns. `nodes[i]` is the NodeInfo of row i (for per-node fallbacks)."""

    def __init__(self) -> None:
        self.nodes: list[NodeInfo] = []
        self.index: dict[str, int] = {}
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

    def __len__(self) -> int:
        return len(self.nodes)

    def rebuild(self, nodes: Sequence[NodeInfo]) -> None:
        self.nodes = list(nodes)
        self.index = {n.name: i for i, n in enumerate(self.nodes)}
        self._resize(len(self.nodes))
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
        for name in set(alloc.scalar) | set(req.scalar) | set(self.scalar_alloc):
            if name not in self.scalar_alloc:
                self.scalar_alloc[name] = np.zeros(len(self.nodes), dtype=np.int64)
                self.scalar_req[name] = np.zeros(len(self.nodes), dtype=np.int64)
            self.scalar_alloc[name][i] = alloc.scalar.get(name, 0)
            self.scalar_req[name][i] = req.scalar.get(name, 0)
        spec = node.node.spec if node.node is not None else None
        taints = (spec.taints if spec else None) or []
        self.unschedulable[i] = bool(spec and spec.unschedulable)
        self.hard_taints[i] = any(t.effect in _HARD_EFFECTS for t in taints)
        self.soft_taints[i] = any(t.effect == "PreferNoSchedule" for t in taints)
        self.used_ports[i] = bool(node.used_ports)
        self.images[i] = bool(node.image_states)
