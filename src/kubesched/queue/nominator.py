"""The nominator: pods nominated to a node (`status.nominatedNodeName`, or a preemption's
choice), which lower- or equal-priority pods must leave room for on that node."""

from __future__ import annotations

from lightkube.models import core_v1

from kubesched.cache import PodInfo


def _nominated(pod: core_v1.Pod | None) -> str:
    status = pod.status if pod is not None else None
    return (status.nominatedNodeName if status is not None else None) or ""


class Nominator:
    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}  # pod uid -> node

    def add(self, pod: PodInfo, node: str = "") -> None:
        """Nominate `pod` to `node` (default: its own `status.nominatedNodeName`); a pod already
        bound, or without a node to go to, is not nominated."""
        self.delete(pod.uid)
        status = pod.pod.status
        node = node or (status.nominatedNodeName if status else None) or ""
        if not node or pod.pod.spec.nodeName:
            return
        self._node_of[pod.uid] = node
        self._by_node.setdefault(node, {})[pod.uid] = pod

    def update(self, old: core_v1.Pod | None, new: PodInfo) -> None:
        """A queued pod changed (`old`: its previous object). When neither version names a node,
        a nomination held in memory stays (this scheduler made it and has not written it yet);
        otherwise the new version decides."""
        node = _nominated(new.pod)
        if not node and not _nominated(old) and new.uid in self._node_of:
            node = self._node_of[new.uid]
        self.add(new, node)

    def delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        pods = self._by_node[node]
        del pods[uid]
        if not pods:
            del self._by_node[node]

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def pods_for_node(self, node: str) -> list[PodInfo]:
        return list(self._by_node.get(node, {}).values())

    def any_at_or_above(self, priority: int, *, excluding: str = "") -> bool:
        """Whether some pod other than `excluding` is nominated with at least `priority`."""
        return any(
            p.priority >= priority and uid != excluding for pods in self._by_node.values() for uid, p in pods.items()
        )

    def nodes_at_or_above(self, priority: int, *, excluding: str = "") -> list[str]:
        """The nodes some pod other than `excluding` is nominated to with at least `priority`."""
        return [
            node
            for node, pods in self._by_node.items()
            if any(p.priority >= priority and uid != excluding for uid, p in pods.items())
        ]

    def __len__(self) -> int:
        return len(self._node_of)
