"""`Snapshot`: the node infos one scheduling cycle works on, refreshed incrementally from the cache."""

from __future__ import annotations

from kubesched.cache.nodeinfo import NodeInfo
from kubesched.cache.table import NodeTable


class Snapshot:
    """Node infos in node-tree order, as of the start of a cycle. Plugins read it; nothing in it
    changes during the cycle."""

    def __init__(self) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self.have_pods_with_affinity: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity: list[NodeInfo] = []
        self.generation = 0
        self.table = NodeTable()

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def __len__(self) -> int:
        return len(self.node_info_list)
