"""The embedded cluster: the memory store served over HTTP, fake nodes and their kubelets, and
optionally kubesched's scheduler with its own endpoints."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from lightkube.resources import core_v1

from kubesched import ui
from kubesched.api.objects import decoded
from kubesched.apiserver.rbac import ALWAYS_ALLOW, BOOTSTRAP, RBAC
from kubesched.apiserver.server import ApiServer
from kubesched.apiserver.tls import self_signed, server_context
from kubesched.clock import RealClock
from kubesched.config import SchedulerConfig, default_config
from kubesched.controllers import CONTROLLERS, ControllerManager
from kubesched.framework.registry import Registry
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import controllers, plugin_registry
from kubesched.scheduler.results import ResultStore
from kubesched.scheduler.server import DEFAULT_PORT, SchedulerServer
from kubesched.sim import FakeKubelets, KubeletConfig, NodeTemplate, make_nodes
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.storage.journal import Journal, JournalError
from kubesched.storage.journal.etcd import EtcdJournal
from kubesched.storage.journal.sqlite import SqliteJournal
from kubesched.storage.store import DEFAULT_HISTORY
from kubesched.storage.system import create_system_priority_classes
from kubesched.trace import Tracer
from kubesched.whatif.snapshot import Snapshot


@dataclass
class ClusterSpec:
    nodes: int = 3
    template: NodeTemplate | None = None
    host: str = "127.0.0.1"
    port: int = 6443
    token: str | None = None
    tls: bool | None = None  # None: TLS exactly when a token is required (clients send tokens only over TLS)
    authorization: str = ALWAYS_ALLOW  # or RBAC (then a token is required: nobody is signed in otherwise)
    kubelet: KubeletConfig = field(default_factory=KubeletConfig)
    kubelets: bool = True  # False: bound pods stay as bound (scheduler_perf's nodes run no kubelet)
    bookmark_interval: float = 5.0
    history: int = DEFAULT_HISTORY
    scheduler: bool = False  # also run kubesched's scheduler and its endpoints
    scheduler_port: int = DEFAULT_PORT
    scheduler_host: str | None = None  # where the scheduler's endpoints listen (None: `host`)
    results: ResultStore | None = field(default_factory=ResultStore)  # the scheduler's attempt records
    event_ttl: float | None = 3600.0  # seconds Events are kept after their last write (kube-apiserver's default)
    scheduler_config: SchedulerConfig | None = None  # None: the default profile
    registry: Registry | None = None  # the plugins the scheduler may use (None: the in-tree and installed ones)
    controllers: bool = True  # run the controllers installed packages declare (entry points kubesched.controllers)
    builtin_controllers: tuple[str, ...] = tuple(CONTROLLERS)  # the built-in ones to run (ReplicaSet, Deployment, ...)
    ui_actions: bool = False  # the UI may create and delete pods, cordon nodes and add nodes
    snapshot: Snapshot | None = None  # a saved cluster to start from (kubesched snapshot save), before the nodes
    data_dir: Path | None = None  # keep the store in a SQLite database there, and start from what it holds
    data_sync: str = "NORMAL"  # SQLite's synchronous: NORMAL survives a killed process, FULL a power loss too
    etcd: str | None = None  # instead: keep the store in the etcd at this client URL
    etcd_prefix: str = "/kubesched"  # under this key prefix

    @property
    def kept_in(self) -> str | None:
        """Where the store is kept, as the banner and errors name it; None: in memory only."""
        if self.etcd is not None:
            return f"etcd {self.etcd} {self.etcd_prefix}"
        return str(self.data_dir) if self.data_dir is not None else None


class EmbeddedCluster:
    """A store, its HTTP API, fake kubelets and optionally the scheduler, on the real clock, in one
    asyncio loop."""

    def __init__(self, spec: ClusterSpec) -> None:
        self.spec = spec
        self.clock = RealClock()
        # One trace for the store, the kubelets and the scheduler: off (free) until the UI follows it.
        self.trace = Tracer(self.clock.now)
        self.journal: Journal | None = None
        self.store = self.new_store()
        if spec.authorization == RBAC and spec.token is None:
            raise ValueError("RBAC authorization needs a token: without one nobody is signed in")
        self.server = ApiServer(
            self.store, token=spec.token, authorization=spec.authorization, bookmark_interval=spec.bookmark_interval
        )
        self.url = ""
        self.ca_pem: bytes | None = None
        if not self.store.restored:
            self._populate()
            self.store.seal()  # a cluster killed before this point starts afresh on its data directory
        self.scheduler: Scheduler | None = None
        self.scheduler_url = ""
        self._scheduler_server: SchedulerServer | None = None
        self.mirror: ui.Mirror | None = None  # what the UI shows of the cluster, with a scheduler
        if spec.scheduler:
            registry = spec.registry or plugin_registry()
            config = spec.scheduler_config or default_config(registry)
            self.scheduler = Scheduler(MemoryCluster(self.store), self.clock, config, registry, tracer=self.trace)
            self.scheduler.results = spec.results
            host = spec.scheduler_host or spec.host
            self._scheduler_server = SchedulerServer(self.scheduler, host, spec.scheduler_port)
            self.mirror = ui.Mirror(self.scheduler)
            template = spec.template or NodeTemplate()
            actions = ui.Actions(MemoryCluster(self.store), lambda i: template.make(f"node-{i}", i))
            ui.mount(
                self._scheduler_server.app,
                self.mirror,
                actions=actions if spec.ui_actions else None,
                token=spec.token,
            )
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[object]] = []
        self.controllers = controllers() if spec.controllers else []

    def _populate(self) -> None:
        """A new cluster's objects: the snapshot's, then the fake nodes, named around its nodes."""
        spec = self.spec
        if spec.snapshot is not None:
            spec.snapshot.restore(self.store)
        taken = {n.metadata.name for n in self.store.list(core_v1.Node).items}
        nodes = make_nodes(spec.nodes + len(taken), spec.template)
        for node in [n for n in nodes if n.metadata and n.metadata.name not in taken][: spec.nodes]:
            self.store.create(node)

    def new_store(self) -> MemoryStore:
        """A store as this cluster keeps one: random uids, and versions counted from the
        microsecond it was made, past any an earlier run of the cluster gave out. With a data
        directory, the store is kept there and one saved there is taken as it was."""
        first = int(self.clock.now() * 1_000_000)
        if self.spec.etcd is not None:
            self.journal = EtcdJournal(self.spec.etcd, history=self.spec.history, prefix=self.spec.etcd_prefix)
        elif self.spec.data_dir is not None:
            self.journal = SqliteJournal(self.spec.data_dir, history=self.spec.history, synchronous=self.spec.data_sync)
        try:
            store = MemoryStore(
                clock=self.clock,
                seed=None,
                history=self.spec.history,
                first_resource_version=first,
                event_ttl=self.spec.event_ttl,
                tracer=self.trace,
                journal=self.journal,
                populate=True,
            )
        except BaseException:
            if self.journal is not None:
                self.journal.close()
            raise
        if store.restored:
            if self.spec.snapshot is not None and self.journal is not None:
                self.journal.close()
                raise JournalError(
                    f"{self.spec.kept_in}: holds a cluster already; --from needs an empty "
                    + ("prefix" if self.spec.etcd is not None else "data directory")
                )
            return store
        create_system_priority_classes(store)
        if self.spec.authorization == RBAC:  # the policy kube-apiserver creates at start
            for policy in BOOTSTRAP:
                store.create(decoded(policy))
        return store

    async def start(self) -> str:
        """Listen, start the kubelets, the installed packages' controllers and the scheduler if
        asked; returns the server URL."""
        for entry in self.controllers:
            self._tasks.append(asyncio.ensure_future(entry.factory(MemoryCluster(self.store), self.clock).run()))
        if self.spec.kubelets:
            kubelets = FakeKubelets(MemoryCluster(self.store), self.clock, config=self.spec.kubelet, tracer=self.trace)
            self._tasks.append(asyncio.ensure_future(kubelets.run()))
        if self.spec.builtin_controllers:
            manager = ControllerManager.on_store(self.store, self.clock, names=self.spec.builtin_controllers)
            self._tasks.append(asyncio.ensure_future(manager.run()))
        if self.spec.event_ttl is not None:
            self._tasks.append(asyncio.ensure_future(self._expire_events(min(60.0, self.spec.event_ttl))))
        if self._scheduler_server is not None:
            self._tasks.append(asyncio.ensure_future(self._scheduler_server.scheduler.run()))
            self.scheduler_url = await self._scheduler_server.start()
        self._runner = web.AppRunner(self.server.app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        tls = self.spec.tls if self.spec.tls is not None else self.spec.token is not None
        context = None
        if tls:
            self.ca_pem, key_pem = self_signed(self.spec.host)
            context = server_context(self.ca_pem, key_pem)
        site = web.TCPSite(self._runner, self.spec.host, self.spec.port, ssl_context=context)
        await site.start()
        port = self._runner.addresses[0][1]
        self.server.address = f"{self.spec.host}:{port}"
        self.url = f"{'https' if tls else 'http'}://{self.spec.host}:{port}"
        return self.url

    async def _expire_events(self, every: float) -> None:
        """Expire Events while nothing is written too (writes expire them as they go)."""
        while True:
            await self.clock.sleep(every)
            self.store.expire_events()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._scheduler_server is not None:
            await self._scheduler_server.stop()
        if self._runner is not None:
            await self._runner.cleanup()
        if self.journal is not None:
            self.journal.close()


class ClusterThread:
    """An `EmbeddedCluster` running in a background thread (for tests and benchmarks).
    `call(fn)` runs `fn(cluster)` on the cluster's loop and returns its result."""

    def __init__(self, spec: ClusterSpec) -> None:
        self.spec = spec
        self.cluster: EmbeddedCluster | None = None
        self.url = ""
        self.scheduler_url = ""
        self.ca_pem: bytes | None = None
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kubesched-cluster", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self.cluster = EmbeddedCluster(self.spec)
            self.url = self._loop.run_until_complete(self.cluster.start())
            self.ca_pem = self.cluster.ca_pem
            self.scheduler_url = self.cluster.scheduler_url
        except BaseException as e:
            self._error = e
            if self.cluster is not None:
                self._loop.run_until_complete(self.cluster.stop())
            self._close()
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self.cluster.stop())
        self._close()

    def _close(self) -> None:
        """Close the loop as `asyncio.run` does: what is still running (requests of clients that
        never hung up, watches among them) is cancelled and finishes first, so nothing is left
        to wake a closed loop."""
        pending = asyncio.all_tasks(self._loop)
        for task in pending:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    def __enter__(self) -> ClusterThread:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    # Any: what `fn` gives (awaited when it is awaitable), of whatever type the caller's `fn` has
    def call(self, fn: Callable[[EmbeddedCluster], object]) -> Any:
        async def run() -> object:
            assert self.cluster is not None
            result = fn(self.cluster)
            return await result if isinstance(result, Awaitable) else result

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(30)


async def serve_forever(spec: ClusterSpec, on_ready: Callable[[EmbeddedCluster], None]) -> None:
    """Run until cancelled (SIGINT/SIGTERM in the command)."""
    cluster = EmbeddedCluster(spec)
    try:
        await cluster.start()
        on_ready(cluster)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()
    finally:
        await cluster.stop()
