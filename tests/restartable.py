"""An API server over a running embedded cluster's store that e2e tests can stop and start again."""

from __future__ import annotations

from aiohttp import web

from kubesched.apiserver.server import ApiServer
from kubesched.cli.cluster import ClusterThread, EmbeddedCluster
from kubesched.sim import make_nodes
from kubesched.storage import MemoryStore


class Restartable:
    """A second API server over a running cluster's store, on the cluster's loop, that can be stopped
    and started again on the same port (`EmbeddedCluster` keeps its own server's runner private)."""

    def __init__(self, thread: ClusterThread) -> None:
        self.thread = thread
        self.port = 0
        self._runner: web.AppRunner | None = None

    def start(self, *, empty_with_nodes: int | None = None, rewound: bool = False) -> str:
        """Serve the cluster's store, or a new one holding only that many nodes (the API server
        came back empty) — `rewound`: whose versions start from zero again, behind the old one's."""

        async def start(cluster: EmbeddedCluster) -> int:
            store = cluster.store
            if empty_with_nodes is not None:
                store = MemoryStore(clock=cluster.clock, seed=None) if rewound else cluster.new_store()
                for node in make_nodes(empty_with_nodes, None):
                    store.create(node)
            server = ApiServer(store, bookmark_interval=0.2)
            self._runner = web.AppRunner(server.app, access_log=None, shutdown_timeout=0.1)
            await self._runner.setup()
            await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
            return int(self._runner.addresses[0][1])

        self.port = self.thread.call(start)
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        runner = self._runner
        assert runner is not None
        self._runner = None
        self.thread.call(lambda _: runner.cleanup())

    def __enter__(self) -> Restartable:
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop serving, so that no watch is left open when the cluster's loop closes."""
        if self._runner is not None:
            self.stop()

    def change(self, fn) -> None:
        """Run `fn(store)` on the cluster's loop."""
        self.thread.call(lambda cluster: fn(cluster.store))
