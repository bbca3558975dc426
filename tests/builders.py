"""Fluent builders for test objects: `make_pod("p").req(cpu="500m").obj`."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import yaml
from aiohttp import web
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.cache import Snapshot
from kubesched.cluster.protocol import BOOKMARK, Bookmark, WatchEvent
from kubesched.plugin import (
    ActionType,
    BindPlugin,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PermitPlugin,
    PreBindPlugin,
    ReservePlugin,
    Status,
)
from kubesched.plugin.testing import standalone_handle
from kubesched.whatif.snapshot import Snapshot as WhatIfSnapshot


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self.obj = core_v1.Pod(
            metadata=meta_v1.ObjectMeta(name=name, namespace=namespace),
            spec=m.PodSpec(containers=[m.Container(name="app", image="registry.k8s.io/pause:3.10")]),
        )

    def req(self, **requests: Any) -> PodBuilder:
        res = {k.replace("_", "-"): str(v) for k, v in requests.items()}
        c = self.obj.spec.containers[0]
        c.resources = m.ResourceRequirements(requests={**((c.resources and c.resources.requests) or {}), **res})
        return self

    def scheduler(self, name: str) -> PodBuilder:
        self.obj.spec.schedulerName = name
        return self

    def node(self, name: str) -> PodBuilder:
        self.obj.spec.nodeName = name
        return self

    def labels(self, **labels: str) -> PodBuilder:
        self.obj.metadata.labels = {**(self.obj.metadata.labels or {}), **labels}
        return self

    def gates(self, *names: str) -> PodBuilder:
        self.obj.spec.schedulingGates = [m.PodSchedulingGate(name=n) for n in names]
        return self

    def priority_class(self, name: str) -> PodBuilder:
        self.obj.spec.priorityClassName = name
        return self

    def phase(self, phase: str) -> PodBuilder:
        self.obj.status = m.PodStatus(phase=phase)
        return self

    def host_port(self, port: int) -> PodBuilder:
        self.obj.spec.containers[0].ports = [m.ContainerPort(containerPort=port, hostPort=port)]
        return self

    def node_selector(self, **labels: str) -> PodBuilder:
        self.obj.spec.nodeSelector = labels
        return self

    def grace(self, seconds: int) -> PodBuilder:
        self.obj.spec.terminationGracePeriodSeconds = seconds
        return self

    def toleration(self, **fields: Any) -> PodBuilder:
        self.obj.spec.tolerations = [*(self.obj.spec.tolerations or []), m.Toleration(**fields)]
        return self

    def pod_affinity(self, *, anti: bool = False, topology: str = "kubernetes.io/hostname", **match: str) -> PodBuilder:
        """Required pod (anti-)affinity to pods labelled `match` within `topology`."""
        term = m.PodAffinityTerm(labelSelector=meta_v1.LabelSelector(matchLabels=match), topologyKey=topology)
        required = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        affinity = self.obj.spec.affinity or m.Affinity()
        if anti:
            affinity.podAntiAffinity = m.PodAntiAffinity(**required)
        else:
            affinity.podAffinity = m.PodAffinity(**required)
        self.obj.spec.affinity = affinity
        return self

    def node_affinity_in(self, key: str, values: Sequence[str]) -> PodBuilder:
        """Required node affinity: `key` In `values`."""
        term = m.NodeSelectorTerm(
            matchExpressions=[m.NodeSelectorRequirement(key=key, operator="In", values=list(values))]
        )
        required = m.NodeSelector(nodeSelectorTerms=[term])
        self.obj.spec.affinity = m.Affinity(
            nodeAffinity=m.NodeAffinity(requiredDuringSchedulingIgnoredDuringExecution=required)
        )
        return self


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self.obj = core_v1.Node(
            metadata=meta_v1.ObjectMeta(name=name, labels={"kubernetes.io/hostname": name}),
            spec=m.NodeSpec(),
            status=m.NodeStatus(
                capacity={"cpu": "4", "memory": "8Gi", "pods": "110"},
                allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"},
            ),
        )

    def labels(self, **labels: str) -> NodeBuilder:
        self.obj.metadata.labels = {**(self.obj.metadata.labels or {}), **labels}
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        self.obj.spec.taints = [*(self.obj.spec.taints or []), m.Taint(key=key, value=value or None, effect=effect)]
        return self

    def cordon(self) -> NodeBuilder:
        self.obj.spec.unschedulable = True
        return self

    def capacity(self, **capacity: Any) -> NodeBuilder:
        res = {k.replace("_", "-"): str(v) for k, v in capacity.items()}
        self.obj.status.capacity = {**(self.obj.status.capacity or {}), **res}
        self.obj.status.allocatable = dict(self.obj.status.capacity)
        return self


def verdict_filter(name: str, status: Status) -> type[FilterPlugin]:
    """A Filter plugin named `name` whose verdict on every node is `status`."""

    def filter_(self: Any, state: Any, pod: Any, node: Any) -> Status:
        return status

    def init(self: Any, args: Any, handle: Any) -> None:
        pass

    return type(name, (FilterPlugin,), {"name": name, "filter": filter_, "__init__": init})


class LatePlugin(ReservePlugin, PermitPlugin, PreBindPlugin, BindPlugin, EnqueueExtensions):
    """A plugin at Reserve, Permit, PreBind and Bind whose verdicts the test sets per point
    (`verdicts["reserve"]`, `["permit"]` with `["permit_timeout"]`, `["pre_bind"]` with
    `["pre_bind_seconds"]`, `["bind"]`; unset: success, and Skip at Bind); every call is logged
    in `log`. It registers Node/Add, so a node that joins may wake the pods it rejected."""

    name = "Late"
    log: list[str]
    verdicts: dict[str, Any]

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def reserve(self, state: Any, pod: Any, node: str) -> Status | None:
        self.log.append(f"Reserve {pod.name}")
        return self.verdicts.get("reserve")

    def unreserve(self, state: Any, pod: Any, node: str) -> None:
        self.log.append(f"Unreserve {pod.name}")

    def permit(self, state: Any, pod: Any, node: str) -> tuple[Status | None, float]:
        self.log.append(f"Permit {pod.name}")
        return self.verdicts.get("permit"), self.verdicts.get("permit_timeout", 0.0)

    async def pre_bind(self, state: Any, pod: Any, node: str) -> Status | None:
        self.log.append(f"PreBind {pod.name}")
        if seconds := self.verdicts.get("pre_bind_seconds"):
            await self.handle.clock.sleep(seconds)
        return self.verdicts.get("pre_bind")

    async def bind(self, state: Any, pod: Any, node: str) -> Status | None:
        self.log.append(f"Bind {pod.name}")
        return self.verdicts.get("bind", Status(Code.SKIP))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD))]


def late_plugin(**verdicts: Any) -> type[LatePlugin]:
    """A LatePlugin class of its own (its log and verdicts not shared with another test's)."""
    return type("Late", (LatePlugin,), {"log": [], "verdicts": dict(verdicts)})


def snapshot_of(*objs: Any) -> WhatIfSnapshot:
    """A cluster snapshot holding `objs` (lightkube objects, their builders or documents)."""
    return WhatIfSnapshot(tuple(o if isinstance(o, dict) else getattr(o, "obj", o).to_dict() for o in objs))


def plugins_crd(name: str) -> Any:
    """A CustomResourceDefinition of the scheduler-plugins package (`crd-<name>.yaml`)."""
    from lightkube.resources import apiextensions_v1

    import kubesched_scheduler_plugins

    manifest = Path(kubesched_scheduler_plugins.__file__).parent / "manifests" / f"crd-{name}.yaml"
    return msgspec.convert(yaml.safe_load(manifest.read_text()), apiextensions_v1.CustomResourceDefinition)


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def binding(pod: Any, node: str, *, uid: str | None = None) -> core_v1.Binding:
    return core_v1.Binding(
        metadata=meta_v1.ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace, uid=uid),
        target=m.ObjectReference(kind="Node", name=node),
    )


def plugin_handle(snapshot: Any = None, *, services: Sequence[Any] = (), **kw: Any) -> Handle:
    """A handle for a plugin built on its own: the snapshot, Services for PodTopologySpread's
    system defaulting, and any keyword of `kubesched.plugin.testing.services`."""
    objects = {core_v1.Service: list(services)} if services else None
    return standalone_handle(snapshot=snapshot, objects=objects, **kw)


def without_table(snapshot: Snapshot) -> Snapshot:
    """The same nodes with no NodeTable, so that plugins take their per-node path."""
    plain = Snapshot()
    plain.node_info_list = list(snapshot.node_info_list)
    plain.node_info_map = dict(snapshot.node_info_map)
    return plain


def secret(name: str, namespace: str = "default") -> core_v1.Secret:
    return core_v1.Secret(metadata=meta_v1.ObjectMeta(name=name, namespace=namespace), stringData={"k": "v"})


def namespace(name: str) -> core_v1.Namespace:
    return core_v1.Namespace(metadata=meta_v1.ObjectMeta(name=name))


def web_service(namespace: str = "default") -> core_v1.Service:
    """A Service selecting `app: web`."""
    return core_v1.Service(
        metadata=meta_v1.ObjectMeta(name="web", namespace=namespace), spec=m.ServiceSpec(selector={"app": "web"})
    )


def profile_framework(
    snapshot: Snapshot,
    config: dict[str, Any] | None = None,
    *,
    registry: Any = None,
    profile: str = "default-scheduler",
) -> Any:
    """One profile's framework from a KubeSchedulerConfiguration (`config`: its top-level fields),
    over `snapshot`, with the in-tree plugins (or `registry`)."""
    from kubesched.config import load_data
    from kubesched.plugin.testing import services
    from kubesched.plugins.registry import in_tree_registry
    from kubesched.scheduler.profiles import build_frameworks

    registry = registry or in_tree_registry()
    raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **(config or {})}
    return build_frameworks(load_data(raw, registry), registry, services(snapshot=snapshot))[profile]


def installed_package(
    root: Any, *, name: str, version: str, modules: dict[str, str], entry_points: dict[str, dict[str, str]]
) -> Any:
    """Write a distribution (`modules`: module name -> source; `entry_points`: group -> name -> value)
    under `root`, pip-install it into `root/site` and return that directory (for sys.path)."""
    import subprocess
    import sys
    from pathlib import Path

    source = Path(root) / "src"
    for module, text in modules.items():
        (source / "src").mkdir(parents=True, exist_ok=True)
        (source / "src" / f"{module}.py").write_text(text)
    groups = "\n".join(
        f'[project.entry-points."{group}"]\n' + "\n".join(f'{k} = "{v}"' for k, v in items.items())
        for group, items in entry_points.items()
    )
    (source / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\n'
        f"[tool.setuptools]\npy-modules = {sorted(modules)!r}\npackage-dir = {{'' = 'src'}}\n{groups}\n"
    )
    site = Path(root) / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    return site


def perf_case(*ops: Any, pod_template: str = "light-pod.yaml") -> Any:
    """A one-workload scheduler_perf test case of `ops` (fixed counts), selected to run."""
    from kubesched.workloads.cases import Selected, TestCase, Workload

    workload = Workload("probe", {})
    return Selected(TestCase("Probe", ops, (workload,), default_pod_template=pod_template), workload)


class ControllerLab:
    """A memory cluster on a virtual clock with fake nodes and kubelets, the default scheduler
    and the built-in controllers: `advance(seconds)` runs it; `pods(**labels)` reads it."""

    def __init__(
        self, clock: Any, *, nodes: int = 3, controllers: Sequence[str] | None = None, template: Any = None
    ) -> None:
        from kubesched.config import default_config
        from kubesched.controllers import CONTROLLERS, ControllerManager
        from kubesched.scheduler import Scheduler
        from kubesched.scheduler.discovery import plugin_registry
        from kubesched.sim import FakeKubelets, make_nodes
        from kubesched.storage import MemoryCluster, MemoryStore

        self.clock = clock
        self.store = MemoryStore(clock=clock)
        for node in make_nodes(nodes, template):
            self.store.create(node)
        registry = plugin_registry()
        store = self.store
        self.manager = ControllerManager.on_store(
            store, clock, names=CONTROLLERS if controllers is None else controllers
        )
        parts = (
            FakeKubelets(MemoryCluster(store), clock),
            Scheduler(MemoryCluster(store), clock, default_config(registry), registry),
            self.manager,
        )
        for part in parts:
            clock.loop.create_task(part.run())
        self.advance(0.1)

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def create(self, obj: Any) -> Any:
        return self.store.create(obj)

    def pods(self, namespace: str = "default", **labels: str) -> list[Any]:
        selector = ",".join(f"{k}={v}" for k, v in labels.items())
        return self.store.list(core_v1.Pod, namespace=namespace, label_selector=selector).items

    def running(self, namespace: str = "default", **labels: str) -> list[Any]:
        return [
            p
            for p in self.pods(namespace, **labels)
            if p.status and p.status.phase == "Running" and not p.metadata.deletionTimestamp
        ]


def deployment(
    name: str, *, replicas: int = 3, image: str = "nginx:1.27", namespace: str = "default", **spec: Any
) -> Any:
    """An apps/v1 Deployment of one container selecting `app=<name>`."""
    from lightkube.models import apps_v1 as apps
    from lightkube.resources import apps_v1

    return apps_v1.Deployment(
        metadata=meta_v1.ObjectMeta(name=name, namespace=namespace),
        spec=apps.DeploymentSpec(
            replicas=replicas,
            selector=meta_v1.LabelSelector(matchLabels={"app": name}),
            template=pod_template(name, image),
            **spec,
        ),
    )


def pod_template(app: str, image: str, **spec: Any) -> m.PodTemplateSpec:
    container = m.Container(name=app, image=image, resources=m.ResourceRequirements(requests={"cpu": "100m"}))
    return m.PodTemplateSpec(
        metadata=meta_v1.ObjectMeta(labels={"app": app}), spec=m.PodSpec(containers=[container], **spec)
    )


def deployment_config(
    name: str,
    *,
    replicas: int | None = None,
    image: str = "nginx:1.27",
    containers: Sequence[str] = (),
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A server-side apply configuration of an apps/v1 Deployment selecting `app=<name>`: one
    container named after the Deployment, plus `containers` (busybox) by name."""
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {
                "containers": [
                    {"name": name, "image": image, "ports": [{"containerPort": 80}]},
                    *({"name": c, "image": "busybox"} for c in containers),
                ]
            },
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    metadata: dict[str, Any] = {"name": name}
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata, "spec": spec}


def model_class(api_version: str, kind: str) -> type[Any]:
    """lightkube's class for objects of `kind` in `api_version` (a resource's, else a model's; meta/v1
    kinds such as Status in every version); LookupError for one it lacks."""
    group, _, version = api_version.rpartition("/")
    module = f"{group.split('.')[0] if group else 'core'}_{version}"
    for package in ("lightkube.resources", "lightkube.models"):
        try:
            found = getattr(importlib.import_module(f"{package}.{module}"), kind, None)
        except ImportError:
            continue
        if found is not None:
            return found
    meta = importlib.import_module("lightkube.models.meta_v1")
    if hasattr(meta, kind):
        return getattr(meta, kind)
    raise LookupError(f"no lightkube class for {api_version}, Kind={kind}")


def call_all(app: Any, *calls: tuple[str, str, Any, dict[str, str]]) -> list[tuple[int, str, Any]]:
    """Each (method, path, body, headers) request to an aiohttp application served on a free port,
    in a loop of its own (a body that is not bytes is sent as JSON), redirects not followed:
    [(status, text, response headers)]."""

    async def run() -> list[tuple[int, str, Any]]:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        try:
            async with aiohttp.ClientSession() as session:
                out = []
                for method, path, body, headers in calls:
                    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
                    async with session.request(
                        method, url + path, data=data, headers=headers, allow_redirects=False
                    ) as response:
                        out.append((response.status, await response.text(), response.headers))
                return out
        finally:
            await runner.cleanup()

    return asyncio.run(run())


def fetch_all(app: Any, *paths: str) -> dict[str, tuple[int, str, str]]:
    """GET each path from an aiohttp application served on a free port, in a loop of its own:
    {path: (status, content type, body)}."""

    async def run() -> dict[str, tuple[int, str, str]]:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        try:
            async with aiohttp.ClientSession() as session:
                out = {}
                for path in paths:
                    async with session.get(url + path, allow_redirects=False) as response:
                        out[path] = (response.status, response.headers.get("Content-Type", ""), await response.text())
                return out
        finally:
            await runner.cleanup()

    return asyncio.run(run())


@contextlib.contextmanager
def served(app: web.Application) -> Iterator[str]:
    """An aiohttp application served on a free port from a thread of its own, for as long as the
    block runs: its URL."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)

    async def start() -> str:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return f"http://127.0.0.1:{runner.addresses[0][1]}"

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


TWO_SIZES = """\
name: two-sizes
description: two small and two large nodes, eight pods
nodes:
- {count: 2, prefix: small-, template: {status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}}}
- {count: 2, prefix: large-, template: {status: {capacity: {cpu: "16", memory: 64Gi, pods: "110"}}}}
pods:
- {count: 8, name: "web-{i}", at: 0, every: 0.2, template: {spec: {containers: [{name: c, image: pause,
    resources: {requests: {cpu: 500m}}}]}}}
"""
PACKING_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""


def compare_report(tmp_path: Path, capsys: Any) -> Path:
    """A report of `kubesched compare --output json`: a two-size workload under the default profile
    and a packing one (MostAllocated), written to `tmp_path`."""
    from kubesched.cli.main import main

    (tmp_path / "w.yaml").write_text(TWO_SIZES)
    (tmp_path / "packing.yaml").write_text(PACKING_CONFIG)
    argv = ["compare", str(tmp_path / "w.yaml"), "--config", "default", "--config", str(tmp_path / "packing.yaml")]
    assert main([*argv, "--output", "json"]) == 0
    report = tmp_path / "report.json"
    report.write_text(capsys.readouterr().out)
    return report


class Bookmarking:
    """A cluster whose watches send a BOOKMARK before every event, as a live API server may: a
    consumer must take it for a version, not an object."""

    def __init__(self, cluster: Any) -> None:
        self._cluster = cluster

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cluster, name)

    def watch(self, kind: type[Any], **kw: Any) -> Any:
        async def events() -> Any:
            async for event in self._cluster.watch(kind, **kw):
                version = meta_v1.ObjectMeta(resourceVersion=event.object.metadata.resourceVersion)
                yield WatchEvent(BOOKMARK, Bookmark(kind=kind.__name__, metadata=version))
                yield event

        return events()


FIT_STRATEGY = "scheduler.config.profiles[0].pluginConfig[NodeResourcesFit].args.scoringStrategy.type"


def sweep_document(
    *,
    nodes: int = 3,
    capacity: dict[str, str] | None = None,
    pods: int = 4,
    requests: dict[str, str] | None = None,
    axes: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A sweep of `pods` pods (label app=web, `requests`, default 1 CPU) onto `nodes` nodes of
    `capacity` (4 CPU, 16Gi), along `axes` (default: NodeResourcesFit's strategy, least and most
    allocated); `fields` add to or replace the document's top level."""
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": requests or {"cpu": "1"}}}]},
    }
    document: dict[str, Any] = {
        "name": "tiny",
        "cluster": {
            "nodes": [
                {"name": "node", "count": nodes, "capacity": capacity or {"cpu": "4", "memory": "16Gi", "pods": "110"}}
            ]
        },
        "workloads": {"web": {"horizon": "10s", "pods": [{"count": pods, "name": "web-{i}", "template": template}]}},
        "axes": axes
        if axes is not None
        else {"strategy": {"path": FIT_STRATEGY, "values": ["LeastAllocated", "MostAllocated"]}},
    }
    document.update(fields)
    return document


def sweep_file(folder: Any, document: dict[str, Any], name: str = "sweep.yaml") -> Any:
    """`document` written as YAML to `folder/name`; the path."""
    path = Path(folder) / name
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def swept(folder: Any, document: dict[str, Any]) -> Any:
    """The results directory (`folder/out`) of the sweep `document`, its points run here one after
    another, as `kubesched sweep` keeps them."""
    from kubesched.whatif.sweep.metrics import BUILTIN, WALL
    from kubesched.whatif.sweep.results import ResultsDir
    from kubesched.whatif.sweep.simulate import PointResult, run_job
    from kubesched.whatif.sweep.spec import load as load_sweep

    sweep = load_sweep(sweep_file(folder, document))
    points = sweep.points()
    out = Path(folder) / "out"
    results = ResultsDir(out)
    results.start(sweep, points, [*BUILTIN, WALL], resume=False, force=False)
    for p in points:
        results.append(PointResult.from_json(run_job(sweep.job(p))))
    results.close()
    results.finish()
    return out
