"""5.2.2 — scheduling, minus the scheduler: one POST. Against a live cluster (`kubesched cluster up`,
or any other): a pod no scheduler claims (`schedulerName: nobody`) is bound by hand, by POSTing a
Binding to its `binding` subresource, exactly the call kube-scheduler's DefaultBinder makes; the
API server answers 201 and sets `spec.nodeName`, the node's kubelet runs the pod, and a second
Binding is refused with 409 — a pod is bound once."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TypedDict

import msgspec
from lightkube.resources import core_v1

from kubesched.api.objects import name_of
from kubesched.client import KubeCluster
from kubesched.cluster import ApiError
from kubesched.console import options
from kubesched.lab.live import connect
from kubesched.lab.result import Check, LabResult
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.2.2", "Scheduling, minus the scheduler: one POST"
NOBODY = "nobody"  # a scheduler name no scheduler answers to
RUNNING_WITHIN = 30.0  # seconds the kubelet has to start the pod


class _Seen(TypedDict, total=False):
    """What the lab saw: the pod and its binding's path, each POST's code and message, and where
    the pod ended (`target`: the node the first POST named)."""

    pod: str
    path: str
    first: tuple[int, str]
    second: tuple[int, str]
    node: str | None
    phase: str | None
    target: str


def _binding(pod: str, node: str) -> bytes:
    return msgspec.json.encode(
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod, "namespace": "default"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
    )


async def _post(cluster: KubeCluster, path: str, body: bytes) -> tuple[int, str]:
    try:
        code, _ = await cluster.transport.request("POST", path, body=body)
    except ApiError as e:
        return e.code, str(e)
    return code, ""


async def _perform(cluster: KubeCluster, *, node: str | None, running_within: float) -> _Seen:
    nodes = [name_of(n) for n in (await cluster.list(core_v1.Node)).items]
    if not nodes:
        raise options.UsageError(f"lab {ID}: the cluster has no node to bind to")
    first, second = (node or nodes[0]), nodes[-1]
    name = f"one-post-{uuid.uuid4().hex[:6]}"
    await cluster.create(make_pod(name, {"cpu": "10m"}, schedulerName=NOBODY))
    path = f"/api/v1/namespaces/default/pods/{name}/binding"
    seen: _Seen = {"pod": name, "path": path}
    try:
        seen["first"] = await _post(cluster, path, _binding(name, first))
        seen["second"] = await _post(cluster, path, _binding(name, second))
        deadline = time.monotonic() + running_within
        pod = await cluster.get(core_v1.Pod, name, namespace="default")
        while (pod.status.phase if pod.status else None) != "Running" and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            pod = await cluster.get(core_v1.Pod, name, namespace="default")
        seen.update(
            {
                "node": pod.spec.nodeName if pod.spec else None,
                "phase": pod.status.phase if pod.status else None,
                "target": first,
            }
        )
    finally:
        await cluster.delete(core_v1.Pod, name, namespace="default", grace_period_seconds=0)
    return seen


def run(
    *, seed: int = 1, kubeconfig: str, node: str | None = None, running_within: float = RUNNING_WITHIN
) -> LabResult:
    """The two POSTs against the cluster of `kubeconfig`, then up to `running_within` seconds for
    the kubelet to run the pod; with `node` naming a node that does not exist the API server binds
    the pod there all the same and no kubelet ever runs it, which makes the claim false. `seed` is
    unused: a live cluster's answers are its own."""

    async def main() -> _Seen:
        cluster = connect(kubeconfig)
        try:
            return await _perform(cluster, node=node, running_within=running_within)
        finally:
            await cluster.close()

    seen = asyncio.run(main())
    (code1, message1), (code2, message2) = seen["first"], seen["second"]
    steps = [
        Step(
            0.0,
            f"created {seen['pod']} with schedulerName: {NOBODY}: no scheduler will look at it",
            upstream=(cite("ScheduleOne"),),
        ),
        Step(0.0, f"POST {seen['path']} (a Binding to {seen['target']}): {code1} {message1}", upstream=(cite("bind"),)),
        Step(0.0, f"POST it again, to another node: {code2} {message2}", upstream=(cite("bind"),)),
        Step(
            0.0,
            f"the pod is {seen['phase']} on {seen['node']}, and no scheduler was involved",
            upstream=(cite("bind"),),
        ),
    ]
    check = Check(
        claim="one POST of a Binding binds the pod (201) and its kubelet runs it; a second is refused (409)",
        evidence={
            "first": code1,
            "second": code2,
            "secondMessage": message2,
            "node": seen["node"],
            "phase": seen["phase"],
        },
        passed=code1 == 201 and code2 == 409 and seen["node"] == seen["target"] and seen["phase"] == "Running",
    )
    return LabResult(ID, TITLE, steps, check)
