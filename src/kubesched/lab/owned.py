"""5.5.4 — build artifact 2: a scoring plugin in a scheduler you own. The out-of-tree package's
NodeResourcesAllocatable (found through its `kubesched.plugins` entry point) is the only Score
plugin of a second scheduler, `allocatable-scheduler`, which runs beside the default one over the
same cluster, as scheduler-plugins' own example configures it. Pods naming it go to the smallest
nodes; the default scheduler's pods, on the same nodes, go where the most room is."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import TypedDict

import yaml
from lightkube.resources import core_v1

from kubesched.client import KubeCluster
from kubesched.cluster import ApiError
from kubesched.console import options
from kubesched.framework.registry import IN_TREE
from kubesched.lab.capstone import PACKAGE
from kubesched.lab.harness import LabCluster, lab_cluster
from kubesched.lab.live import all_bound, connect
from kubesched.lab.result import Check, LabResult
from kubesched.scheduler.discovery import plugin_registry
from kubesched.sim import NodeTemplate
from kubesched.trace import cite, extension_point
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.5.4", "Build artifact 2: a scoring plugin in a scheduler you own"
PLUGIN = "NodeResourcesAllocatable"
OWNED = "allocatable-scheduler"
SIZES = {"small": "2", "medium": "8", "large": "32"}  # CPUs; two nodes of each
LAB_LABEL = "kubesched.io/lab"  # on a live cluster: the lab's nodes, and the taint keeping others off
WAIT = 30.0  # seconds a live cluster's schedulers have to bind the pods


class _Seen(TypedDict):
    """What the lab saw on a live cluster: each pod's node (None: not bound), who bound each pod
    (its Scheduled event's reporting component), and the lab's nodes with their sizes."""

    where: dict[str, str | None]
    boundBy: dict[str, str]
    nodes: dict[str, str]


def owned_profile(mode: str) -> dict[str, object]:
    """scheduler-plugins' configuration for the plugin (`manifests/noderesources/`): every default
    Score plugin off, NodeResourcesAllocatable alone, cpu weighted 1,000,000 to memory's 1."""
    args = {"mode": mode, "resources": [{"name": "cpu", "weight": 1_000_000}, {"name": "memory", "weight": 1}]}
    return {
        "schedulerName": OWNED,
        "plugins": {"score": {"enabled": [{"name": PLUGIN}], "disabled": [{"name": "*"}]}},
        "pluginConfig": [{"name": PLUGIN, "args": args}],
    }


def _nodes() -> list[core_v1.Node]:
    nodes: list[core_v1.Node] = []
    for size, cpu in SIZES.items():
        template = NodeTemplate(capacity={"cpu": cpu, "memory": f"{4 * int(cpu)}Gi", "pods": "110"}, zones=())
        nodes += [template.make(f"{size}-{i}", len(nodes)) for i in range(2)]
    return nodes


def _sizes(lab: LabCluster, names: list[str]) -> Counter[str]:
    return Counter((lab.node_of(n) or "pending").split("-")[0] for n in names)


def run(*, seed: int = 1, mode: str = "Least", kubeconfig: str | None = None, wait: float = WAIT) -> LabResult:
    """Six nodes of three sizes; six 500m pods for each scheduler, created in turn. With `mode`
    Most the plugin prefers the largest nodes, as the default does, which makes the claim false.
    With `kubeconfig`, on that cluster (see `live`). UsageError when the package is not installed."""
    if kubeconfig:
        return live(kubeconfig=kubeconfig, mode=mode, wait=wait)
    lab = lab_cluster(seed=seed, nodes=_nodes())
    entry = lab.registry.get(PLUGIN)
    if entry is None:
        raise options.UsageError(_not_installed())
    lab.second_scheduler(identity=OWNED, profiles=[owned_profile(mode)])
    names = _pod_names("")

    async def body() -> None:
        await lab.clock.sleep(0.5)
        for i in range(6):
            for scheduler, pods in names.items():
                await lab.cluster.create(make_pod(pods[i], {"cpu": "500m"}, schedulerName=scheduler))
                await lab.clock.sleep(0.1)
        await lab.clock.sleep(5.0)

    lab.run(body)
    placed = {scheduler: _sizes(lab, pods) for scheduler, pods in names.items()}
    by_owned = {r.pod for r in lab.records("cycle.start") if r.details.get("profile") == OWNED}
    told = lab.told(names[OWNED][0], kinds=("cycle.scored", "cycle.selected", "bind.done"))
    return _told(entry.source, mode, placed, by_owned == {f"default/{n}" for n in names[OWNED]}, told)


def _not_installed() -> str:
    return (
        f"lab {ID} runs the out-of-tree plugin {PLUGIN}: install its package (pip install "
        f"contrib/scheduler-plugins; package {PACKAGE} not found)"
    )


def _pod_names(tag: str) -> dict[str, list[str]]:
    prefix = f"{tag}-" if tag else ""
    return {
        "default-scheduler": [f"{prefix}default-{i}" for i in range(6)],
        OWNED: [f"{prefix}owned-{i}" for i in range(6)],
    }


def _told(
    source: str, mode: str, placed: dict[str, Counter[str]], owned_bound_all: bool, told: list[Step]
) -> LabResult:
    steps = [
        Step(
            0.0,
            f"{PLUGIN} registered from {source}; {OWNED} scores with it alone "
            f"(mode {mode}, cpu weight 1000000, memory 1)",
            upstream=(extension_point("score"),),
        ),
        *(
            Step(
                0.0,
                f"{scheduler}: pods per node size {dict(sorted(sizes.items()))}",
                upstream=(cite("sortedNodeScores"),),
            )
            for scheduler, sizes in placed.items()
        ),
        *told,
    ]
    check = Check(
        claim=f"the out-of-tree plugin, in a scheduler of its own, puts every pod naming {OWNED} on the smallest "
        "nodes, while the default scheduler's pods, on the same cluster, go elsewhere",
        evidence={
            "source": source,
            "placedBy": {k: dict(sorted(v.items())) for k, v in placed.items()},
            "boundByOwnedAlone": owned_bound_all,
        },
        passed=source != IN_TREE
        and owned_bound_all
        and placed[OWNED].get("small", 0) == len(_pod_names("")[OWNED])
        and placed["default-scheduler"].get("small", 0) == 0
        and "pending" not in placed["default-scheduler"],
    )
    return LabResult(ID, TITLE, steps, check)


def _lab_nodes(tag: str) -> dict[str, str]:
    """The lab's six nodes on a live cluster, name -> size: labelled and tainted with `tag`, so that
    only the lab's pods (which select and tolerate it) land there."""
    return {f"{tag}-{size}-{i}": size for size in SIZES for i in range(2)}


def _config(path: Path, mode: str) -> Path:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [owned_profile(mode)],
    }
    path.write_text(yaml.safe_dump(config))
    return path


async def _perform(cluster: KubeCluster, tag: str, *, wait: float) -> _Seen:
    nodes = _lab_nodes(tag)
    names = _pod_names(tag)
    selector = {LAB_LABEL: tag}
    toleration = [{"key": LAB_LABEL, "operator": "Equal", "value": tag, "effect": "NoSchedule"}]
    created_nodes: list[str] = []
    created_pods: list[str] = []
    try:
        for index, (name, size) in enumerate(nodes.items()):
            cpu = SIZES[size]
            template = NodeTemplate(
                capacity={"cpu": cpu, "memory": f"{4 * int(cpu)}Gi", "pods": "110"},
                labels=selector,
                taints=[{"key": LAB_LABEL, "value": tag, "effect": "NoSchedule"}],
                zones=(),
            )
            await cluster.create(template.make(name, index))
            created_nodes.append(name)
        for i in range(6):
            for scheduler, pods in names.items():
                pod = make_pod(
                    pods[i], {"cpu": "500m"}, schedulerName=scheduler, nodeSelector=selector, tolerations=toleration
                )
                await cluster.create(pod)
                created_pods.append(pods[i])
        deadline = time.monotonic() + wait
        while not await all_bound(cluster, created_pods) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        where: dict[str, str | None] = {}
        for name in created_pods:
            pod = await cluster.get(core_v1.Pod, name, namespace="default")
            where[name] = pod.spec.nodeName if pod.spec else None
        bound_by: dict[str, str] = {}
        while len(bound_by) < len(where):  # each binding's Scheduled event names who made it
            for e in (await cluster.list(core_v1.Event, namespace="default")).items:
                component = e.reportingComponent or (e.source.component if e.source else None)
                if e.reason == "Scheduled" and e.involvedObject.name in where and component:
                    bound_by[e.involvedObject.name] = component
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        return {"where": where, "boundBy": bound_by, "nodes": nodes}
    finally:
        for name in created_pods:
            with contextlib.suppress(ApiError):
                await cluster.delete(core_v1.Pod, name, namespace="default", grace_period_seconds=0)
        for name in created_nodes:
            with contextlib.suppress(ApiError):
                await cluster.delete(core_v1.Node, name)


def live(*, kubeconfig: str, mode: str = "Least", wait: float = WAIT) -> LabResult:
    """Against the cluster of `kubeconfig`, whose own default scheduler places `default-scheduler`'s
    pods: the owned scheduler runs as a process of its own (`kubesched run --config`, the plugin its
    only Score plugin), on six nodes the lab registers (fake ones, served by `cluster up`'s kubelets;
    elsewhere they run nothing) and deletes afterwards."""
    entry = plugin_registry().get(PLUGIN)
    if entry is None:
        raise options.UsageError(_not_installed())
    tag = f"owned-{uuid.uuid4().hex[:4]}"
    with tempfile.TemporaryDirectory() as directory:
        config = _config(Path(directory) / "config.yaml", mode)
        command = [sys.executable, "-m", "kubesched", "run", "--config", str(config), "--kubeconfig", kubeconfig]
        command += ["--metrics-bind", "127.0.0.1:0"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

        async def main() -> _Seen:
            cluster = connect(kubeconfig)
            try:
                return await _perform(cluster, tag, wait=wait)
            finally:
                await cluster.close()

        try:
            seen = asyncio.run(main())
        finally:
            process.terminate()
            _, err = process.communicate(timeout=10)
    if process.returncode not in (0, -signal.SIGTERM) and err.strip():
        raise options.UsageError(f"lab {ID}: the owned scheduler failed: {err.strip().splitlines()[-1]}")
    names = _pod_names(tag)
    placed = {
        scheduler: Counter(seen["nodes"].get(seen["where"][n] or "", "pending") for n in pods)
        for scheduler, pods in names.items()
    }
    if placed["default-scheduler"].get("pending") == len(names["default-scheduler"]):
        raise options.UsageError(
            f"lab {ID}: no default-scheduler bound its pods within {wait:g} s: the cluster needs one "
            "(kubesched cluster up --scheduler)"
        )
    owned_alone = all(seen["boundBy"].get(n) == OWNED for n in names[OWNED])
    told = [
        Step(0.0, f"{n} bound to {seen['where'][n]} by {seen['boundBy'].get(n, 'nobody')}", upstream=(cite("bind"),))
        for n in names[OWNED][:1] + names["default-scheduler"][:1]
    ]
    return _told(entry.source, mode, placed, owned_alone, told)
