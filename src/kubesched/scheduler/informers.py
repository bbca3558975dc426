"""The scheduler's informers: Nodes, Pods, Namespaces and PodDisruptionBudgets, listed and watched into its cache."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from lightkube.models import core_v1 as m
from lightkube.resources import core_v1, policy_v1

from kubesched.api.objects import Served, key_of, meta_of, name_of
from kubesched.api.resources import pod_requests
from kubesched.cache import PodInfo
from kubesched.cluster import DELETED, NotFound, WatchEvent
from kubesched.framework.events import (
    ASSIGNED_POD,
    NODE,
    UNSCHEDULED_POD,
    ActionType,
    ClusterEvent,
    node_update_events,
    pod_update_events,
)
from kubesched.scheduler.reflector import list_until_listed, reflect

if TYPE_CHECKING:
    from kubesched.cache import Cache
    from kubesched.cluster import Cluster
    from kubesched.framework.handle import Listers
    from kubesched.framework.runtime import Framework
    from kubesched.queue import SchedulingQueue
    from kubesched.scheduler.shared_informers import SharedInformers
    from kubesched.trace import Tracer

NOT_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"
S = TypeVar("S", bound=Served)


def _requests(pod: m.Pod) -> dict[str, int]:
    try:
        return pod_requests(pod)
    except ValueError:
        return {}


class Informers:
    """A scheduler's informers: what they list and watch goes into its cache, its queue, the
    plugins' listers and the informers plugins asked for."""

    def __init__(
        self,
        *,
        cluster: Cluster,
        trace: Tracer,
        cache: Cache,
        queue: SchedulingQueue,
        listers: Listers,
        namespace_labels: dict[str, dict[str, str]],
        shared_informers: SharedInformers,
        profiles: dict[str, Framework],
    ) -> None:
        self.cluster = cluster
        self.trace = trace
        self.cache = cache
        self.queue = queue
        self.listers = listers
        self.namespace_labels = namespace_labels
        self.shared_informers = shared_informers
        self.profiles = profiles
        self._nodes: dict[str, core_v1.Node] = {}
        self._pdbs: dict[tuple[str, str], policy_v1.PodDisruptionBudget] = {}
        # uid -> latest unassigned pod the scheduler is responsible for.
        # Any: served pods (their metadata and spec are set), read unchecked per event
        self._unscheduled: dict[str, Any] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.synced = False  # everything listed once
        self.failure: str | None = None  # why an informer stopped, when one did
        self.failed = asyncio.Event()  # set then
        # Called with every Pod and Node the informers see (and whether it is gone), after the
        # cache and queue heard of it: a view of the whole cluster (`kubesched.ui`) listens here.
        self.observers: list[Callable[[core_v1.Pod | core_v1.Node, bool], None]] = []

    def _observe(self, obj: core_v1.Pod | core_v1.Node, deleted: bool) -> None:
        for observer in self.observers:
            observer(obj, deleted)

    def unscheduled(self, uid: str) -> core_v1.Pod | None:
        """The latest version of an unassigned pod of this scheduler's, None once gone or bound."""
        return self._unscheduled.get(uid)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def start(self) -> None:
        """List every watched kind into the cache and queue (and the informers plugins asked
        for), then keep watching. An optional kind the server does not serve (PodDisruptionBudgets on an old
        cluster, say) is traced once and left out."""
        await self._start(policy_v1.PodDisruptionBudget, self._relist_pdbs, self._on_pdb_event, optional=True)
        await self._start(core_v1.Namespace, self._relist_namespaces, self._on_namespace_event, optional=True)
        await self._start(core_v1.Node, self._relist_nodes, self._on_node_event, optional=False)
        await self._start(core_v1.Pod, self._relist_pods, self._on_pod_event, optional=False)
        self._tasks += await self.shared_informers.start()
        for task in self._tasks:
            task.add_done_callback(self._ended)
        self.synced = True

    async def _start(
        self,
        kind: type[S],
        relist: Callable[[], Awaitable[str]],
        handle: Callable[[WatchEvent[S]], None],
        *,
        optional: bool,
    ) -> None:
        """List `kind`, then watch it in a task of its own (a kind not served: traced, when optional)."""
        try:
            rv = await list_until_listed(relist, kind, trace=self.trace)
        except NotFound:
            if not optional:
                raise
            self.trace.emit("informer.not_served", resource=kind.__name__)
            return
        selector = NOT_TERMINAL if kind is core_v1.Pod else ""
        watch = reflect(
            self.cluster,
            kind,
            resource_version=rv,
            relist=relist,
            handle=handle,
            trace=self.trace,
            field_selector=selector,
        )
        self._tasks.append(asyncio.get_running_loop().create_task(watch, name=kind.__name__))

    def _ended(self, task: asyncio.Task[None]) -> None:
        """An informer never ends but by being cancelled: one that raised leaves the scheduler
        blind, so the queue closes and `failure` says why (the scheduler then stops with it)."""
        error = None if task.cancelled() else task.exception()
        if error is None or self.failure is not None:
            return
        self.failure = f"the {task.get_name()} informer stopped: {type(error).__name__}: {error}"
        self.trace.emit("informer.failed", error=self.failure)
        self.queue.close()
        self.failed.set()

    async def _relist_pdbs(self) -> str:
        listed = await self.cluster.list(policy_v1.PodDisruptionBudget)
        self._pdbs = {key_of(p): p for p in listed.items}
        self.listers.set_pdbs(list(self._pdbs.values()))
        return listed.resource_version

    def _on_pdb_event(self, event: WatchEvent[policy_v1.PodDisruptionBudget]) -> None:
        if event.type == DELETED:
            self._pdbs.pop(key_of(event.object), None)
        else:
            self._pdbs[key_of(event.object)] = event.object
        self.listers.set_pdbs(list(self._pdbs.values()))

    async def _relist_namespaces(self) -> str:
        listed = await self.cluster.list(core_v1.Namespace)
        namespaces = self.namespace_labels
        namespaces.clear()
        for ns in listed.items:
            namespaces[name_of(ns)] = dict(meta_of(ns).labels or {})
        return listed.resource_version

    def _on_namespace_event(self, event: WatchEvent[core_v1.Namespace]) -> None:
        if event.type == DELETED:
            self.namespace_labels.pop(name_of(event.object), None)
        else:
            self.namespace_labels[name_of(event.object)] = dict(meta_of(event.object).labels or {})

    async def _relist_nodes(self) -> str:
        listed = await self.cluster.list(core_v1.Node)
        names = {name_of(n) for n in listed.items}
        for name in [n for n in self._nodes if n not in names]:
            gone = self._nodes.pop(name)
            self._on_node_delete(gone)
            self._observe(gone, True)
        for node in listed.items:
            name = name_of(node)
            old = self._nodes.get(name)
            if old is None or meta_of(old).resourceVersion != meta_of(node).resourceVersion:
                self._on_node(name, node, old)
                self._observe(node, False)
        return listed.resource_version

    async def _relist_pods(self) -> str:
        listed = await self.cluster.list(core_v1.Pod, field_selector=NOT_TERMINAL)
        # known by uid and name: a store replaced under the scheduler may reuse a uid for another pod
        ids = {_identity(p) for p in listed.items}
        gone = [p for p in self._unscheduled.values() if _identity(p) not in ids]
        gone += [
            info.pod
            for info in self.cache.pods()
            if _identity(info.pod) not in ids and not self.cache.is_assumed(info.uid)
        ]
        for pod in gone:
            self._on_pod_delete(pod)
            self._observe(pod, True)
        for pod in listed.items:
            self._on_pod_upsert(pod)
            self._observe(pod, False)
        fed = self.shared_informers.fed(core_v1.Pod)
        if fed is not None:
            for pod in [p for p in fed.list() if _identity(p) not in ids]:
                self.shared_informers.feed(fed, pod, deleted=True)
            for pod in listed.items:
                self.shared_informers.feed(fed, pod)
        return listed.resource_version

    def _on_node_event(self, event: WatchEvent[core_v1.Node]) -> None:
        node = event.object
        name = name_of(node)
        if event.type == DELETED:
            self._nodes.pop(name, None)
            self._on_node_delete(node)
        else:
            self._on_node(name, node, self._nodes.get(name))
        self._observe(node, event.type == DELETED)

    def _on_node_delete(self, node: object) -> None:
        """A node gone: the pods whose plugins registered Node/Delete may now fit (a lower skew,
        say), so the queue hears of it before the cache forgets the node, as upstream's
        `deleteNodeFromCache` does."""
        self.queue.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.DELETE), node, None)
        self.cache.remove_node(node)

    def _on_node(self, name: str, node: core_v1.Node, old: core_v1.Node | None) -> None:
        self._nodes[name] = node
        if old is None:
            self.cache.add_node(node)
            self.queue.move_all_to_active_or_backoff(ClusterEvent(NODE, ActionType.ADD), None, node)
            return
        self.cache.update_node(old, node)
        for event in node_update_events(old, node):
            self.queue.move_all_to_active_or_backoff(event, old, node)

    def _on_pod_event(self, event: WatchEvent[core_v1.Pod]) -> None:
        if event.type == DELETED:
            self._on_pod_delete(event.object)
        else:
            self._on_pod_upsert(event.object)
        self._observe(event.object, event.type == DELETED)
        fed = self.shared_informers.fed(core_v1.Pod)
        if fed is not None:
            self.shared_informers.feed(fed, event.object, deleted=event.type == DELETED)

    def _responsible(self, pod: Any) -> bool:  # Any: as `_unscheduled`'s
        return (pod.spec.schedulerName or "") in self.profiles

    def _on_pod_upsert(self, pod: Any) -> None:  # Any: as `_unscheduled`'s
        uid = pod.metadata.uid
        if pod.spec.nodeName:
            was_unscheduled = self._unscheduled.pop(uid, None)
            if was_unscheduled is not None:
                self.queue.delete(was_unscheduled)
            known = self.cache.pod(uid)
            if (
                known is not None
                and not self.cache.is_assumed(uid)
                and (known.pod.metadata.resourceVersion == pod.metadata.resourceVersion)
            ):
                return  # already known at this version (a relist)
            if known is None or self.cache.is_assumed(uid):
                self.cache.add_pod(pod)
                self.queue.move_all_to_active_or_backoff(ClusterEvent(ASSIGNED_POD, ActionType.ADD), None, pod)
            else:
                old = known.pod
                self.cache.update_pod(old, pod)
                for event in pod_update_events(ASSIGNED_POD, old, pod, requests=_requests):
                    self.queue.move_all_to_active_or_backoff(event, old, pod)
            return
        if not self._responsible(pod):
            return
        old = self._unscheduled.get(uid)
        self._unscheduled[uid] = pod
        if old is None:
            self.queue.add(pod)
        elif old.metadata.resourceVersion != pod.metadata.resourceVersion:
            if self.cache.is_assumed(uid):
                if pod.metadata.deletionTimestamp is not None and old.metadata.deletionTimestamp is None:
                    self._assumed_pod_deleted(uid)
                return  # being bound: its own binding will tell the queue
            self.queue.update(old, pod, pod_update_events(UNSCHEDULED_POD, old, pod, requests=_requests))
            if _nomination_moved(old, pod):
                # The room held on the old node is free again for the pods the nomination kept out
                # (upstream's hasNominatedNodeNameChanged): as if an assigned pod had gone.
                self._free_nominated_room(old)

    def _free_nominated_room(self, pod: object) -> None:
        """Requeue the waiting pods of lower or equal priority than `pod`, whose nomination is gone."""
        priority = PodInfo(pod).priority
        self.queue.move_all_to_active_or_backoff(
            ClusterEvent(ASSIGNED_POD, ActionType.DELETE), pod, None, pre_check=lambda q: q.priority <= priority
        )

    def _on_pod_delete(self, pod: Any) -> None:  # Any: as `_unscheduled`'s
        uid = pod.metadata.uid
        if pod.spec.nodeName:  # an assigned pod: its room is free (upstream's deleteAssignedPodFromCache)
            known = self.cache.pod(uid)
            if known is not None:
                self.cache.remove_pod(known.pod)
                self.queue.move_all_to_active_or_backoff(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), known.pod, None)
            return
        if self._unscheduled.pop(uid, None) is None:
            return  # not this scheduler's
        nominated = self.queue.nominator.node_of(uid) is not None
        self.queue.delete(pod)
        if self.cache.is_assumed(uid):
            self._assumed_pod_deleted(uid)
        elif nominated:  # the room kept for it is free again, for pods it outranked
            self._free_nominated_room(pod)

    def _assumed_pod_deleted(self, uid: str) -> None:
        """A pod deleted (or being deleted) while it is assumed, as upstream's
        `handleAssumedPodDeletion`: one waiting at Permit is rejected (its binding cycle then
        cleans up), any other is forgotten at once, and the room it held wakes the waiting pods."""
        known = self.cache.pod(uid)
        if known is None:
            return
        waiting = next((w for f in self.profiles.values() if (w := f.waiting_pods.get(uid)) is not None), None)
        if waiting is not None:
            waiting.reject("", "removed")
        else:
            self.cache.forget_pod(known)
        self.queue.move_all_to_active_or_backoff(ClusterEvent(ASSIGNED_POD, ActionType.DELETE), known.pod, None)


def _nomination_moved(old: m.Pod, new: m.Pod) -> bool:
    """A nomination that existed and was changed or cleared (a new one frees no room)."""
    before = old.status.nominatedNodeName if old.status is not None else None
    after = new.status.nominatedNodeName if new.status is not None else None
    return bool(before) and before != after


def _identity(pod: Any) -> tuple[str, str, str]:  # Any: a served pod (its metadata is set), read unchecked
    meta = pod.metadata
    return meta.uid, meta.namespace or "", meta.name
