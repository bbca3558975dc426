"""The scheduler's own HTTP endpoints, as kube-scheduler serves them on its secure port (here over
plain HTTP): `/healthz`, `/readyz`, `/metrics`, `/debug/queue`, the pending pods as the queue sees them, and
`/debug/pods/{namespace}/{name}`, a pod's recorded attempts explained."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from kubesched.clock.base import rfc3339
from kubesched.queue import PendingPod
from kubesched.scheduler.explain import explain_pod
from kubesched.scheduler.metrics import CONTENT_TYPE
from kubesched.scheduler.scheduler import Scheduler

DEFAULT_PORT = 10259


# Any: a JSON document its callers read and extend by key
def queue_document(pending: dict[str, int], pods: Sequence[PendingPod]) -> dict[str, Any]:
    """The `/debug/queue` answer: counts per queue and every pending pod, times in RFC 3339."""

    def entry(pod: PendingPod) -> dict[str, object]:
        out = dataclasses.asdict(pod)
        for name in ("backoff_until", "since"):
            out[name] = None if out[name] is None else rfc3339(out[name])
        return out

    return {"pending": dict(pending), "pods": [entry(p) for p in pods]}


def pod_answer(scheduler: Scheduler, key: str) -> web.Response:
    """`/debug/pods/{namespace}/{name}`: 200 with the explanation, or 404 naming what is missing."""
    document = explain_pod(scheduler, key)
    if not document["attempts"]:
        why = "this scheduler keeps no attempts" if scheduler.results is None else f"no attempt of {key} is recorded"
        return web.json_response({"message": why}, status=404)
    return web.json_response(document)


class SchedulerServer:
    """An aiohttp app over one `Scheduler`; `start()` listens and returns its URL (port 0 picks one)."""

    def __init__(self, scheduler: Scheduler, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
        self.scheduler = scheduler
        self.host = host
        self.port = port
        self.url = ""
        self.app = web.Application()
        self.app.router.add_get("/healthz", self._healthz)
        self.app.router.add_get("/readyz", self._readyz)
        self.app.router.add_get("/metrics", self._metrics)
        self.app.router.add_get("/debug/queue", self._queue)
        self.app.router.add_get("/debug/pods/{namespace}/{name}", self._pod)
        self._runner: web.AppRunner | None = None

    async def start(self) -> str:
        self._runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()
        self.url = f"http://{self.host}:{self._runner.addresses[0][1]}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        """Ready once the informers have listed everything (the cache and queue are filled)."""
        if self.scheduler.synced:
            return web.Response(text="ok")
        return web.Response(status=503, text="informers not synced")

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=self.scheduler.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    async def _pod(self, request: web.Request) -> web.Response:
        """A pod's recorded attempts, the last one explained (`kubesched explain --url`)."""
        return pod_answer(self.scheduler, f"{request.match_info['namespace']}/{request.match_info['name']}")

    async def _queue(self, request: web.Request) -> web.Response:
        queue = self.scheduler.queue
        return web.json_response(queue_document(queue.pending(), queue.snapshot()))
