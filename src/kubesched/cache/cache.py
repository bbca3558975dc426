"""The scheduler cache: nodes and the pods on them, including pods assumed but not yet bound.

Pods arrive from the cluster's watch (`add_pod`, `update_pod`, `remove_pod`) and from the
scheduler itself (`assume_pod` right after a decision, `forget_pod` when binding fails). An
assumed pod counts against its node at once, so the next scheduling cycle sees the node as
occupied before the API server has even received the Binding; the watch's later ADDED/MODIFIED
for the bound pod confirms the assumption instead of counting the pod twice.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

import msgspec
from lightkube.models import core_v1

from kubesched.cache.node_tree import NodeTree, zone_key
from kubesched.cache.nodeinfo import ImageState, NodeInfo, next_generation
from kubesched.cache.podinfo import PodInfo
from kubesched.cache.snapshot import Snapshot


class CacheError(Exception):
    """An operation that contradicts what the cache holds (a caller bug or a lost event)."""


@dataclass
class _PodState:
    info: PodInfo
    assumed: bool
    binding_finished: bool = False


class Cache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._tree = NodeTree()
        self._pods: dict[str, _PodState] = {}
        self._uids: dict[str, str] = {}  # namespace/name -> uid
        self._images: dict[str, ImageState] = {}
        self._dirty: dict[str, None] = {}  # node names changed since the last snapshot, in order

    # -- pods -----------------------------------------------------------------------------------

    def assume_pod(self, pod: PodInfo) -> None:
        """Count `pod` (already carrying its chosen node) on that node before it is bound."""
        if pod.uid in self._pods:
            raise CacheError(f"pod {pod.uid}({pod.key}) is in the cache, so can't be assumed")
        self._add(pod, assumed=True)

    def finish_binding(self, uid: str) -> None:
        """Record that the Binding for an assumed pod was accepted (it stays assumed until the watch confirms it)."""
        state = self._pods.get(uid)
        if state is not None and state.assumed:
            state.binding_finished = True

    def forget_pod(self, pod: PodInfo) -> None:
        """Undo `assume_pod` (the binding failed): the node gets the pod's resources back."""
        state = self._pods.get(pod.uid)
        if state is None:
            return
        if state.info.node_name != pod.node_name:
            raise CacheError(
                f"pod {pod.uid}({pod.key}) was assumed on {pod.node_name} but assigned to {state.info.node_name}"
            )
        if not state.assumed:
            raise CacheError(f"pod {pod.uid}({pod.key}) is not assumed, so it cannot be removed or forgotten")
        self._remove(state.info)

    def is_assumed(self, uid: str) -> bool:
        state = self._pods.get(uid)
        return state is not None and state.assumed

    # Any: a served pod (metadata and spec set), read without checks on the cache's per-pod path
    def add_pod(self, pod: Any) -> None:
        """A bound pod from the watch: confirms an assumed pod, or adds one we did not know."""
        state = self._pods.get(pod.metadata.uid)
        if state is not None and state.assumed:
            same_labels = state.info.pod.metadata.labels == pod.metadata.labels
            if same_labels and state.info.pod.spec == msgspec.structs.replace(pod.spec, nodeName=state.info.node_name):
                # Confirmed as assumed: the node's accounting stands; keep the parsed pod, take the object.
                state.info.pod = pod
                state.assumed = False
                return
            self._remove(state.info)
            self._add(PodInfo(pod), assumed=False)
            return
        info = PodInfo(pod)
        if state is not None:
            raise CacheError(f"pod {info.uid}({info.key}) was already in added state")
        self._add(info, assumed=False)

    def update_pod(self, old: object, new: object) -> None:
        info = PodInfo(new)
        state = self._pods.get(info.uid)
        if state is None or state.assumed:
            raise CacheError(f"pod {info.uid}({info.key}) is not added to scheduler cache, so cannot be updated")
        if state.info.node_name != info.node_name:
            raise CacheError(f"pod {info.key} moved from {state.info.node_name} to {info.node_name}")
        self._replace(state.info, info)

    # Any: a served pod (metadata set), read without checks on the cache's per-pod path
    def remove_pod(self, pod: Any) -> None:
        uid = pod.metadata.uid
        state = self._pods.get(uid)
        if state is None:
            return
        self._remove(state.info)

    def pods(self) -> list[PodInfo]:
        """Every pod the cache holds, assumed ones included."""
        return [state.info for state in self._pods.values()]

    def pod(self, uid: str) -> PodInfo | None:
        state = self._pods.get(uid)
        return state.info if state is not None else None

    def pod_by_key(self, key: str) -> PodInfo | None:
        """The pod named `namespace/name`, if the cache holds it."""
        uid = self._uids.get(key)
        return self.pod(uid) if uid is not None else None

    def _add(self, info: PodInfo, *, assumed: bool) -> None:
        node = self.nodes.get(info.node_name)
        if node is None:
            node = self.nodes[info.node_name] = NodeInfo(name=info.node_name)
        node.add_pod(info)
        self._pods[info.uid] = _PodState(info, assumed)
        self._uids[info.key] = info.uid
        self._touch(info.node_name)

    def _replace(self, old: PodInfo, new: PodInfo) -> None:
        node = self.nodes[old.node_name]
        node.remove_pod(old.uid)
        node.add_pod(new)
        self._pods[new.uid] = _PodState(new, False)
        self._touch(new.node_name)

    def _remove(self, info: PodInfo) -> None:
        node = self.nodes.get(info.node_name)
        if node is not None:
            node.remove_pod(info.uid)
            if node.node is None and not node.pods:
                del self.nodes[info.node_name]
            self._touch(info.node_name)
        del self._pods[info.uid]
        if self._uids.get(info.key) == info.uid:
            del self._uids[info.key]

    # -- nodes ----------------------------------------------------------------------------------

    # Any: a served Node (metadata set), read without checks on the cache's per-node path
    def add_node(self, node: Any) -> NodeInfo:
        name = node.metadata.name
        info = self.nodes.get(name)
        if info is None:
            info = self.nodes[name] = NodeInfo(node)
        else:
            self._drop_images(info)
            info.set_node(node)
        self._tree.add(name, zone_key(node))
        self._add_images(node, info)
        self._touch(name)
        return info

    # Any: a served Node (metadata set), read without checks on the cache's per-node path
    def update_node(self, old: object, new: Any) -> NodeInfo:
        name = new.metadata.name
        info = self.nodes.get(name)
        if info is None or info.node is None:
            return self.add_node(new)
        self._tree.update(name, zone_key(old), zone_key(new))
        self._drop_images(info)
        info.set_node(new)
        self._add_images(new, info)
        self._touch(name)
        return info

    # Any: a served Node (metadata set), read without checks on the cache's per-node path
    def remove_node(self, node: Any) -> None:
        name = node.metadata.name
        info = self.nodes.get(name)
        if info is None:
            return
        self._drop_images(info)
        if info.pods:
            info.node = None  # pods may still be reported; keep their accounting
            info.generation = next_generation()
        else:
            del self.nodes[name]
        self._tree.remove(name, zone_key(node))
        self._touch(name)

    def _add_images(self, node: core_v1.Node, info: NodeInfo) -> None:
        for image in (node.status.images if node.status else None) or []:
            for name in image.names or []:
                state = self._images.get(name)
                if state is None:
                    state = self._images[name] = ImageState(image.sizeBytes or 0)
                state.nodes.add(info.name)
                info.image_states[name] = state

    def _drop_images(self, info: NodeInfo) -> None:
        for name, state in info.image_states.items():
            state.nodes.discard(info.name)
            if not state.nodes:
                self._images.pop(name, None)
        info.image_states = {}

    def _touch(self, name: str) -> None:
        self._dirty.pop(name, None)
        self._dirty[name] = None

    # -- snapshot -------------------------------------------------------------------------------

    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Bring `snapshot` up to date: copy the nodes changed since its last update (in place, so
        lists holding them stay valid) and rebuild the ordered lists when nodes came or went."""
        rebuild = False
        flipped: list[tuple[NodeInfo, bool, bool]] = []  # (node, affinity flipped, anti-affinity flipped)
        changed: list[NodeInfo] = []
        for name in self._dirty:
            info = self.nodes.get(name)
            existing = snapshot.node_info_map.get(name)
            if info is None or info.node is None:
                if existing is not None:
                    del snapshot.node_info_map[name]
                    rebuild = True
                continue
            clone = info.clone()
            if existing is None:
                snapshot.node_info_map[name] = clone
                rebuild = True
                continue
            affinity = bool(existing.pods_with_affinity) != bool(clone.pods_with_affinity)
            anti = bool(existing.pods_with_required_anti_affinity) != bool(clone.pods_with_required_anti_affinity)
            if affinity or anti:
                flipped.append((existing, affinity, anti))
            _copy_into(existing, clone)
            changed.append(existing)
        self._dirty.clear()
        snapshot.generation = next_generation()
        if rebuild:
            snapshot.node_info_list = [
                snapshot.node_info_map[n] for n in self._tree.names() if n in snapshot.node_info_map
            ]
            snapshot.table.rebuild(snapshot.node_info_list)
        else:
            for info in changed:
                snapshot.table.update(info)
        if rebuild:
            snapshot.have_pods_with_affinity = [n for n in snapshot.node_info_list if n.pods_with_affinity]
            snapshot.have_pods_with_required_anti_affinity = [
                n for n in snapshot.node_info_list if n.pods_with_required_anti_affinity
            ]
            return
        # A node that gained or lost its first pod with (anti-)affinity joins or leaves that list
        # at its node-tree position: no scan of every node.
        position = snapshot.table.index
        for info, affinity, anti in flipped:
            if affinity:
                _place(snapshot.have_pods_with_affinity, info, bool(info.pods_with_affinity), position)
            if anti:
                _place(
                    snapshot.have_pods_with_required_anti_affinity,
                    info,
                    bool(info.pods_with_required_anti_affinity),
                    position,
                )

    @property
    def node_count(self) -> int:
        return self._tree.count

    @property
    def pod_count(self) -> int:
        return len(self._pods)

    def sizes(self) -> dict[str, int]:
        """As `scheduler_cache_size` counts: nodes, pods, assumed pods."""
        assumed = sum(1 for state in self._pods.values() if state.assumed)
        return {"nodes": self.node_count, "pods": len(self._pods), "assumed_pods": assumed}


def _place(nodes: list[NodeInfo], info: NodeInfo, member: bool, position: dict[str, int]) -> None:
    """Put `info` in (or take it out of) `nodes`, a list kept in node-tree order."""
    where = bisect.bisect_left(nodes, position[info.name], key=lambda n: position[n.name])
    present = where < len(nodes) and nodes[where] is info
    if member and not present:
        nodes.insert(where, info)
    elif not member and present:
        del nodes[where]


def _copy_into(target: NodeInfo, source: NodeInfo) -> None:
    for slot in NodeInfo.__slots__:
        setattr(target, slot, getattr(source, slot))
