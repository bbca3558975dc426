"""The HTTP client's own cost: CPU seconds this process spends per request.

    .venv/bin/python -m bench.client [--requests N] [--concurrency C] [--repeat R]

`kubesched cluster up` runs in its own process; this process POSTs N events.k8s.io/v1 Events,
C in flight, once through `KubeCluster.create` (the client the scheduler uses) and once as bare
aiohttp POSTs of the same body (no decoding of the reply), and reports the process's CPU time
per request for each, so the figure excludes the server.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import aiohttp
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import events_v1

from bench.http import HEADERS, server
from kubesched.client import ClientConfig, KubeCluster
from kubesched.cluster.codec import encode

EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"


def _event(name: str) -> events_v1.Event:
    return events_v1.Event(
        metadata=meta_v1.ObjectMeta(name=name, namespace="default"),
        eventTime="2026-01-01T00:00:00.000000Z",
        regarding=m.ObjectReference(kind="Pod", name="p", namespace="default"),
        reason="Scheduled",
        action="Binding",
        note="Successfully assigned default/p to node-0",
        type="Normal",
        reportingController="bench",
        reportingInstance="bench",
    )


async def _cpu_per_request(post: Callable[[int], Awaitable[None]], requests: int, concurrency: int) -> float:
    names = iter(range(requests))

    async def worker() -> None:
        for i in names:
            await post(i)

    start = time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return (time.process_time() - start) / requests


async def kube(url: str, requests: int, concurrency: int) -> float:
    async with KubeCluster(ClientConfig(server=url, qps=0)) as cluster:

        async def post(i: int) -> None:
            await cluster.create(_event(f"kube-{i}"))

        return await _cpu_per_request(post, requests, concurrency)


async def bare_aiohttp(url: str, requests: int, concurrency: int) -> float:
    async with aiohttp.ClientSession() as session:

        async def post(i: int) -> None:
            async with session.post(url + EVENTS, data=encode(_event(f"aio-{i}")), headers=HEADERS) as r:
                await r.read()
                assert r.status == 201

        return await _cpu_per_request(post, requests, concurrency)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=8000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[float]] = {"KubeCluster.create": [], "aiohttp POST": []}
    for _ in range(args.repeat):
        with server(history=1000) as url:
            results["KubeCluster.create"].append(asyncio.run(kube(url, args.requests, args.concurrency)))
            results["aiohttp POST"].append(asyncio.run(bare_aiohttp(url, args.requests, args.concurrency)))
    for what, seconds in results.items():
        micro = sorted(s * 1e6 for s in seconds)
        print(
            f"{what}: client CPU per request, median of {args.repeat}: {statistics.median(micro):.0f} µs"
            f" (min {micro[0]:.0f}, max {micro[-1]:.0f})"
        )


if __name__ == "__main__":
    main()
