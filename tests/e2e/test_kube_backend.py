"""`KubeCluster` against `cluster up`: the same answers as the memory backend, watches that survive an
API server restart, and kubesched's scheduler running over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import re
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1, events_v1

from builders import make_node, make_pod
from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.client import ClientConfig, KubeCluster
from kubesched.clock import RealClock
from kubesched.cluster.errors import ApiError, Conflict, Gone
from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.sim import KubeletConfig, make_nodes
from kubesched.storage import MemoryCluster, MemoryStore
from restartable import Restartable

TIMEOUT = 20.0
UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@pytest.fixture(scope="module", params=["http", "https+token"])
def served(request, tmp_path_factory):
    """`cluster up` in a thread, plain or with TLS and a bearer token, and a kubeconfig for it."""
    token = "t0ken" if request.param == "https+token" else None
    spec = ClusterSpec(
        nodes=3,
        port=0,
        token=token,
        kubelet=KubeletConfig(start_seconds=0.2, stop_seconds=0.3),
        bookmark_interval=0.2,
    )
    with ClusterThread(spec) as running:
        path = tmp_path_factory.mktemp("kube") / "config"
        running.kubeconfig = write_kubeconfig(path, running.url, token=token, ca_pem=running.ca_pem)
        yield running


def run(main):
    return asyncio.run(asyncio.wait_for(main, TIMEOUT))


# -- the same answers as the memory backend ------------------------------------------------------


def _pod_view(pod: Any) -> tuple[Any, ...]:
    status = pod.status
    return (
        pod.metadata.name,
        pod.metadata.namespace,
        pod.metadata.labels,
        pod.spec.nodeName,
        status.phase if status else None,
        sorted((c.type, c.status, c.reason) for c in (status.conditions or [])) if status else None,
        pod.metadata.deletionTimestamp is not None,
    )


async def _scenario(cluster: Any, suite: str) -> list[Any]:
    """Every kind of call, recorded as what came back or the error raised (type and message)."""
    out: list[Any] = []

    async def record(call, view=lambda r: r):
        try:
            out.append(("ok", view(await call)))
        except ApiError as e:
            out.append((type(e).__name__, UID.sub("<uid>", str(e)), e.kind, e.name))

    pods = [make_pod(f"{suite}-{i}").labels(suite=suite).req(cpu="100m").obj for i in range(5)]
    for pod in pods:
        await record(cluster.create(pod), _pod_view)
    await record(cluster.create(pods[0]), _pod_view)
    await record(
        cluster.create(core_v1.Pod(metadata=meta_v1.ObjectMeta(name=f"{suite}-bad"), spec=m.PodSpec(containers=[])))
    )
    await record(cluster.create(make_pod("x", namespace="nope").obj))
    await record(cluster.get(core_v1.Pod, f"{suite}-0"), _pod_view)
    await record(cluster.get(core_v1.Pod, "missing"))
    token = None
    while True:
        page = await cluster.list(core_v1.Pod, label_selector=f"suite={suite}", limit=2, continue_token=token)
        out.append(([p.metadata.name for p in page.items], page.remaining, page.continue_token is None))
        if not (token := page.continue_token):
            break
    await record(cluster.list(core_v1.Pod, field_selector="spec.bogus=1"))
    await record(cluster.patch(core_v1.Pod, f"{suite}-1", {"metadata": {"labels": {"a": "1"}}}), _pod_view)
    patch = [{"op": "add", "path": "/metadata/labels/b", "value": "2"}]
    await record(cluster.patch(core_v1.Pod, f"{suite}-1", patch, patch_type="json"), _pod_view)
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "no"}
    await record(
        cluster.patch(
            core_v1.Pod,
            f"{suite}-2",
            {"status": {"conditions": [condition]}},
            subresource="status",
            patch_type="strategic",
        ),
        _pod_view,
    )
    await record(cluster.patch(core_v1.Pod, f"{suite}-2", {}, patch_type="apply"))
    current = await cluster.get(core_v1.Pod, f"{suite}-3")
    stale = msgspec.structs.replace(
        current, metadata=msgspec.structs.replace(current.metadata, resourceVersion="1", labels={"c": "3"})
    )
    await record(cluster.update(stale), _pod_view)
    fresh = msgspec.structs.replace(current, metadata=msgspec.structs.replace(current.metadata, labels={"c": "3"}))
    await record(cluster.update(fresh), _pod_view)
    current = await cluster.get(core_v1.Pod, f"{suite}-3")
    running = msgspec.structs.replace(current, status=m.PodStatus(phase="Running"))
    await record(cluster.update(running, subresource="status"), _pod_view)

    def binding(name: str, node: str = "node-0", uid: str | None = None) -> core_v1.Binding:
        meta = meta_v1.ObjectMeta(name=name, uid=uid)
        return core_v1.Binding(metadata=meta, target=m.ObjectReference(kind="Node", name=node))

    await record(cluster.bind(binding(f"{suite}-0")))
    await record(cluster.bind(binding(f"{suite}-0", "node-1")))
    await record(cluster.bind(binding("missing")))
    await record(cluster.bind(binding(f"{suite}-4", uid="not-the-uid")))
    await record(cluster.get(core_v1.Pod, f"{suite}-0"), _pod_view)
    await record(cluster.delete(core_v1.Pod, f"{suite}-0", grace_period_seconds=30), _pod_view)
    await record(cluster.delete(core_v1.Pod, f"{suite}-4"), _pod_view)
    await record(cluster.delete(core_v1.Pod, f"{suite}-4"))
    await record(cluster.get(core_v1.Pod, f"{suite}-4"))
    node = make_node(f"{suite}-node").capacity(cpu=2).obj
    node_view = lambda n: (n.metadata.name, n.metadata.namespace, n.status.allocatable)  # noqa: E731
    await record(cluster.create(node), node_view)
    await record(cluster.get(core_v1.Node, f"{suite}-node", namespace="ignored"), node_view)
    await record(cluster.delete(core_v1.Node, f"{suite}-node"), node_view)
    event = events_v1.Event(
        metadata=meta_v1.ObjectMeta(name=f"{suite}-event", namespace="default"),
        eventTime=datetime(2026, 1, 1, tzinfo=UTC),
        reason="Scheduled",
        action="Binding",
        note="hello",
        type="Normal",
        reportingController="kubesched",
        reportingInstance="kubesched-1",
        regarding=m.ObjectReference(kind="Pod", name=f"{suite}-1", namespace="default"),
    )
    await record(cluster.create(event), lambda e: (e.metadata.name, e.reason, e.note))
    listed = await cluster.list(core_v1.Event, field_selector=f"involvedObject.name={suite}-1")
    out.append([(e.reason, e.message, e.reportingComponent) for e in listed.items])
    return out


def test_every_call_answers_as_the_memory_backend_does(served):
    async def over_http():
        async with KubeCluster.from_kubeconfig(served.kubeconfig) as cluster:
            return await _scenario(cluster, "parity")

    async def in_memory():
        store = MemoryStore(clock=RealClock(), seed=0)
        for node in make_nodes(3):
            store.create(node)
        return await _scenario(MemoryCluster(store), "parity")

    http, memory = run(over_http()), run(in_memory())
    assert len(http) == len(memory)
    for got, want in zip(http, memory, strict=True):
        assert got == want
    # and the scenario did hit errors of each kind
    assert {r[0] for r in memory if isinstance(r, tuple) and isinstance(r[0], str)} >= {
        "ok",
        "AlreadyExists",
        "Invalid",
        "NotFound",
        "BadRequest",
        "Conflict",
    }


def test_a_second_binding_is_a_conflict(served):
    async def main():
        async with KubeCluster.from_kubeconfig(served.kubeconfig) as cluster:
            pod = await cluster.create(make_pod("twice").obj)
            meta = meta_v1.ObjectMeta(name="twice", uid=pod.metadata.uid)
            binding = core_v1.Binding(metadata=meta, target=m.ObjectReference(kind="Node", name="node-1"))
            await cluster.bind(binding)
            with pytest.raises(Conflict, match='pod twice is already assigned to node "node-1"'):
                await cluster.bind(binding)
            await cluster.delete(core_v1.Pod, "twice", grace_period_seconds=0)

    run(main())


def test_a_watch_sees_added_modified_deleted_and_bookmarks(served):
    async def main():
        async with KubeCluster.from_kubeconfig(served.kubeconfig) as cluster:
            listed = await cluster.list(core_v1.Pod, namespace="default", label_selector="suite=watch")
            stream = cluster.watch(
                core_v1.Pod, namespace="default", label_selector="suite=watch", resource_version=listed.resource_version
            )
            await cluster.create(make_pod("w").labels(suite="watch").obj)
            await cluster.patch(core_v1.Pod, "w", {"metadata": {"annotations": {"k": "v"}}})
            await cluster.delete(core_v1.Pod, "w")
            seen = []
            async for event in stream:
                seen.append((event.type, event.object.metadata.name))
                if event.type == "BOOKMARK":
                    break
            stream.stop()
            return seen

    assert run(main()) == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w"), ("BOOKMARK", None)]


# -- an API server restart ------------------------------------------------------------------------


@pytest.fixture
def restartable():
    spec = ClusterSpec(nodes=1, port=0, history=40, kubelet=KubeletConfig(start_seconds=0.2, stop_seconds=0.3))
    with ClusterThread(spec) as running, Restartable(running) as server:
        yield server


def _client(url: str) -> KubeCluster:
    return KubeCluster(ClientConfig(server=url), watch_backoff=(0.05, 0.2), seed=0)


def test_a_watch_resumes_across_an_api_server_restart_without_losing_events(restartable):
    url = restartable.start()
    pod = make_pod("r0").labels(suite="restart").obj

    async def main():
        async with _client(url) as cluster:
            rv = (await cluster.list(core_v1.Pod, label_selector="suite=restart")).resource_version
            stream = cluster.watch(core_v1.Pod, label_selector="suite=restart", resource_version=rv)
            seen: list[tuple[str, str]] = []

            async def consume():
                async for event in stream:
                    if event.type != "BOOKMARK":
                        seen.append((event.type, event.object.metadata.name))

            task = asyncio.ensure_future(consume())
            await asyncio.to_thread(restartable.change, lambda s: s.create(pod))
            while len(seen) < 1:
                await asyncio.sleep(0.01)
            await asyncio.to_thread(restartable.stop)

            def while_down(store):
                store.create(make_pod("r1").labels(suite="restart").obj)
                store.patch(core_v1.Pod, "r0", {"metadata": {"annotations": {"while": "down"}}})
                store.delete(core_v1.Pod, "r1")

            await asyncio.to_thread(restartable.change, while_down)
            await asyncio.sleep(0.3)  # the watch retries against a closed port meanwhile
            await asyncio.to_thread(restartable.start)
            await asyncio.to_thread(restartable.change, lambda s: s.delete(core_v1.Pod, "r0"))
            while len(seen) < 5:
                await asyncio.sleep(0.01)
            stream.stop()
            await task
            return seen

    assert run(main()) == [("ADDED", "r0"), ("ADDED", "r1"), ("MODIFIED", "r0"), ("DELETED", "r1"), ("DELETED", "r0")]


def test_a_restart_that_outlasts_the_watch_history_is_gone(restartable):
    url = restartable.start()

    async def main():
        async with _client(url) as cluster:
            rv = (await cluster.list(core_v1.Pod)).resource_version
            stream = cluster.watch(core_v1.Pod, resource_version=rv)
            await asyncio.to_thread(restartable.change, lambda s: s.create(make_pod("g0").obj))
            first = await anext(stream)
            await asyncio.to_thread(restartable.stop)

            def churn(store):
                for i in range(50):  # more changes than the 40 the store keeps
                    store.patch(core_v1.Pod, "g0", {"metadata": {"labels": {"i": str(i)}}})

            await asyncio.to_thread(restartable.change, churn)
            await asyncio.to_thread(restartable.start)
            with pytest.raises(Gone, match="too old resource version"):
                while True:  # a bookmark sent before the server stopped may come first
                    assert (await anext(stream)).type == "BOOKMARK"
            return first.type

    assert run(main()) == "ADDED"


# -- kubesched's scheduler over HTTP -----------------------------------------------------------------


def _regards(event: Any, prefix: str) -> bool:
    return event.regarding is not None and (event.regarding.name or "").startswith(prefix)


def test_the_scheduler_binds_pods_and_reports_failures_through_the_api(served):
    async def main():
        registry = in_tree_registry()
        async with KubeCluster.from_kubeconfig(served.kubeconfig) as cluster:
            scheduler = Scheduler(cluster, RealClock(), default_config(registry), registry, identity="e2e")
            task = asyncio.ensure_future(scheduler.run())
            for i in range(20):
                await cluster.create(make_pod(f"s{i}").labels(suite="sched").req(cpu="100m").obj)
            await cluster.create(make_pod("huge").labels(suite="sched").req(cpu="100").obj)
            bound: list[Any] = []
            failed: list[Any] = []
            scheduled: list[Any] = []
            # a pod's Scheduled event is written after its binding, so both are waited for
            while len(bound) < 20 or not failed or len(scheduled) < 20:
                await asyncio.sleep(0.05)
                pods = (await cluster.list(core_v1.Pod, label_selector="suite=sched")).items
                bound = [p for p in pods if p.spec.nodeName]
                events = (await cluster.list(events_v1.Event, namespace="default")).items
                failed = [e for e in events if e.reason == "FailedScheduling" and _regards(e, "huge")]
                scheduled = [e for e in events if e.reason == "Scheduled" and _regards(e, "s")]
            huge = await cluster.get(core_v1.Pod, "huge")
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            for pod in pods:
                await cluster.delete(core_v1.Pod, pod.metadata.name, grace_period_seconds=0)
            return bound, failed, huge, scheduled

    bound, failed, huge, scheduled = run(main())
    assert sorted(p.metadata.name for p in bound) == sorted(f"s{i}" for i in range(20))
    assert {p.spec.nodeName for p in bound} == {"node-0", "node-1", "node-2"}
    assert failed[0].note.startswith("0/3 nodes are available: 3 Insufficient cpu.")
    condition = next(c for c in huge.status.conditions if c.type == "PodScheduled")
    assert (condition.status, condition.reason) == ("False", "Unschedulable")
    assert len(scheduled) == 20
