"""An API server over a running embedded cluster's store that e2e tests can stop and start again."""

from __future__ import annotations

from aiohttp import web

from kubesched.apiserver.server import ApiServer
from kubesched.cli.cluster import ClusterThread, EmbeddedCluster


class Restartable:
    """A second API server over a running cluster's store, on the cluster's loop, that can be stopped
    and started again on the same port (`EmbeddedCluster` keeps its own server's runner private)."""

    def __init__(self, thread: ClusterThread) -> None:
        self.thread = thread
        self.port = 0
        self._runner: web.AppRunner | None = None

    def start(self) -> str:
        async def start(cluster: EmbeddedCluster) -> int:
            server = ApiServer(cluster.store, bookmark_interval=0.2)
            self._runner = web.AppRunner(server.app, access_log=None, shutdown_timeout=0.1)
            await self._runner.setup()
            await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
            return int(self._runner.addresses[0][1])

        self.port = self.thread.call(start)
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        runner = self._runner
        assert runner is not None
        self.thread.call(lambda _: runner.cleanup())

    def change(self, fn) -> None:
        """Run `fn(store)` on the cluster's loop."""
        self.thread.call(lambda cluster: fn(cluster.store))
