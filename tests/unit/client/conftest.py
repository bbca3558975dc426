"""A fake API server (a small aiohttp app on a free port) and a client for it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from kubesched.client import ClientConfig, KubeCluster


@contextlib.asynccontextmanager
async def _serving(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@pytest.fixture
def serve():
    """`async with serve(app) as url:` runs `app` for the block."""
    return _serving


@pytest.fixture
def client_for():
    """A client without rate limit and with millisecond watch backoffs."""

    def make(url: str, **config) -> KubeCluster:
        return KubeCluster(ClientConfig(server=url, **{"qps": 0, **config}), watch_backoff=(0.01, 0.05), seed=1)

    return make
