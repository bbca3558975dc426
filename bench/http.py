"""The embedded API server over loopback: pod creates and Binding POSTs per second, watch fan-out.

    .venv/bin/python -m bench.http [--pods N] [--concurrency C] [--watchers W] [--events E] [--repeat R]

The server is `kubesched cluster up` in its own process; this process is the one client.
- Creates and bindings: N pods (upstream's pod-default.yaml) are created, C in flight, then bound
  with N `pods/<name>/binding` POSTs, C in flight; the rate of each and the per-request latency
  (p50, p99) of the binding POSTs are reported.
- Watch fan-out: E pods are created, then W watches are opened from the resourceVersion before
  them; the time until every watch has received all E events is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence

import aiohttp

from kubesched.cluster.codec import encode
from kubesched.workloads.templates import make_pod_from

HEADERS = {"Content-Type": "application/json"}


def _template_pod(index: int) -> bytes:
    return encode(make_pod_from("pod-default.yaml", index, "default"))


def _pod(name: str, labels: dict[str, str] | None = None) -> bytes:
    meta: dict[str, object] = {"name": name}
    if labels:
        meta["labels"] = labels
    spec = {"containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "10m"}}}]}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}).encode()


def _binding(name: str, node: str) -> bytes:
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": node}}
    return json.dumps(body).encode()


@contextlib.contextmanager
def server(history: int, extra: Sequence[str] = ()) -> Iterator[str]:
    """`kubesched cluster up` on a free loopback port, in a child process (`extra`: more options)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "kubesched.cli.main",
            "cluster",
            "up",
            "--nodes",
            "10",
            "--port",
            str(port),
            "--kubeconfig",
            os.path.join(tmp, "kubeconfig"),
            "--watch-history",
            str(history),
            *extra,
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(200):
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.1):
                    break
                time.sleep(0.05)
            yield url
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)


async def _create(session: aiohttp.ClientSession, base: str, bodies: list[bytes], concurrency: int) -> None:
    sem = asyncio.Semaphore(concurrency)

    async def one(body: bytes) -> None:
        async with sem, session.post(base, data=body, headers=HEADERS) as r:
            assert r.status == 201, await r.text()

    await asyncio.gather(*(one(b) for b in bodies))


async def bindings(url: str, pods: int, concurrency: int) -> tuple[float, float, list[float]]:
    """Pod creates per second, Binding POSTs per second, and each binding's latency."""
    base = f"{url}/api/v1/namespaces/default/pods"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        bodies = [_template_pod(i) for i in range(pods)]
        names = [f"pod-{i:06d}" for i in range(pods)]
        start = time.perf_counter()
        await _create(session, base, bodies, concurrency)
        creates = pods / (time.perf_counter() - start)
        sem = asyncio.Semaphore(concurrency)
        latencies: list[float] = []

        async def bind(i: int, name: str) -> None:
            async with sem:
                t0 = time.perf_counter()
                async with session.post(
                    f"{base}/{name}/binding", data=_binding(name, f"node-{i % 10}"), headers=HEADERS
                ) as r:
                    await r.read()
                    assert r.status == 201
                latencies.append(time.perf_counter() - t0)

        start = time.perf_counter()
        await asyncio.gather(*(bind(i, n) for i, n in enumerate(names)))
        return creates, pods / (time.perf_counter() - start), latencies


async def watch_fanout(url: str, watchers: int, events: int) -> float:
    base = f"{url}/api/v1/namespaces/default/pods"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
        async with session.get(base) as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        await _create(session, base, [_pod(f"fan-{i}", {"fanout": "yes"}) for i in range(events)], 32)

        async def watch() -> None:
            params = {"watch": "true", "resourceVersion": rv, "labelSelector": "fanout=yes"}
            seen = 0
            async with session.get(base, params=params) as r:
                async for _ in r.content:
                    seen += 1
                    if seen == events:
                        return

        start = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(watch() for _ in range(watchers))), timeout=120)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    creates, rates, p50s, p99s, fanouts = [], [], [], [], []
    for _ in range(args.repeat):
        with server(history=args.events + 1000) as url:
            create_rate, rate, latencies = asyncio.run(bindings(url, args.pods, args.concurrency))
        creates.append(create_rate)
        q = statistics.quantiles(latencies, n=100)
        rates.append(rate)
        p50s.append(q[49] * 1000)
        p99s.append(q[98] * 1000)
        with server(history=args.events + 1000) as url:
            fanouts.append(asyncio.run(watch_fanout(url, args.watchers, args.events)))
    print(
        f"pod creates/s ({args.pods} pods, {args.concurrency} in flight, {args.repeat} runs): "
        f"median {statistics.median(creates):,.0f} (min {min(creates):,.0f}, max {max(creates):,.0f})"
    )
    print(
        f"binding POSTs/s ({args.pods} pods, {args.concurrency} in flight, {args.repeat} runs): "
        f"median {statistics.median(rates):,.0f} (min {min(rates):,.0f}, max {max(rates):,.0f}); "
        f"latency p50 {statistics.median(p50s):.1f} ms, p99 {statistics.median(p99s):.1f} ms"
    )
    print(
        f"watch fan-out ({args.events} events to each of {args.watchers} watchers, {args.repeat} runs): "
        f"median {statistics.median(fanouts):.2f} s (min {min(fanouts):.2f}, max {max(fanouts):.2f})"
    )


if __name__ == "__main__":
    main()
