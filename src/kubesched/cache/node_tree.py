"""Nodes grouped by zone, listed round-robin across zones (the snapshot's node order)."""

from __future__ import annotations

from typing import Any

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"


# Any: a served Node (metadata set), read without checks on the cache's per-node path
def zone_key(node: Any) -> str:
    """The node's zone key: region and zone, or "" for a node with neither label."""
    labels = node.metadata.labels or {}
    region, zone = labels.get(REGION_LABEL, ""), labels.get(ZONE_LABEL, "")
    return "" if not region and not zone else f"{region}:\x00:{zone}"


class NodeTree:
    """Zones in the order first seen, nodes within a zone in the order added."""

    def __init__(self) -> None:
        self._zones: list[str] = []
        self._tree: dict[str, list[str]] = {}
        self._members: set[str] = set()
        self.count = 0

    def add(self, name: str, zone: str) -> None:
        """Add the node `name` in `zone` (its `zone_key`)."""
        names = self._tree.get(zone)
        if names is None:
            self._zones.append(zone)
            names = self._tree[zone] = []
        if name not in self._members:
            names.append(name)
            self._members.add(name)
            self.count += 1

    def remove(self, name: str, zone: str) -> None:
        names = self._tree.get(zone)
        if names is None or name not in self._members:
            return
        names.remove(name)
        self._members.discard(name)
        self.count -= 1
        if not names:
            del self._tree[zone]
            self._zones.remove(zone)

    def update(self, name: str, old_zone: str, new_zone: str) -> None:
        if old_zone != new_zone:
            self.remove(name, old_zone)
            self.add(name, new_zone)

    def names(self) -> list[str]:
        """All node names: the first node of each zone, then the second of each, and so on."""
        out: list[str] = []
        columns = [self._tree[z] for z in self._zones]
        depth = max((len(c) for c in columns), default=0)
        for i in range(depth):
            out.extend(c[i] for c in columns if i < len(c))
        return out
