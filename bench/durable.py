"""What keeping the embedded cluster in SQLite costs, and what a SIGKILL loses.

    .venv/bin/python -m bench.durable [--pods N] [--repeat R] [--full] [--etcd URL]

- Rates: `kubesched cluster up` in memory and with `--data-dir` (and `--data-sync FULL` with
  `--full`; `--etcd URL` with `--etcd`, a prefix of its own each run), in alternating runs: N pod
  creates, then N Binding POSTs, 32 in flight (bench.http's client); the medians and each durable
  rate as a share of the in-memory one.
- SIGKILL: a burst of 2,000 creates, 32 in flight, the server killed with SIGKILL once 800 are
  answered; then restarted on the same directory: answered creates found (of those answered), the
  creates committed but never answered, and the time from start to serving again.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.http import bindings, server

PODS = "/api/v1/namespaces/default/pods"


def pod(name: str) -> dict[str, object]:
    """A pod of one pause container, as a JSON body."""
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def start_cluster_up(kubeconfig: Path, *extra: str) -> tuple[subprocess.Popen[str], str, float]:
    """`kubesched cluster up` on a free port with `extra` options, its output piped: the process,
    its URL and the seconds until it said it serves."""
    command = [sys.executable, "-m", "kubesched", "cluster", "up", "--port", "0", "--kubeconfig", str(kubeconfig)]
    start = time.perf_counter()
    process = subprocess.Popen([*command, *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    said = []
    while True:  # warnings first (a lock waited for), then the banner
        line = process.stdout.readline()
        said.append(line)
        found = re.search(r"cluster is up at (https?://[^\s,]+)", line)
        if found is not None:
            break
        if not line:
            process.kill()
            raise RuntimeError("".join(said) + process.stdout.read())
    return process, found.group(1), time.perf_counter() - start


async def burst(url: str, count: int, *, kill_after: int, pid: int) -> dict[str, str]:
    """Create `count` pods, 32 at a time; SIGKILL process `pid` once `kill_after` are answered.
    The answered ones: name -> the resourceVersion in the answer."""
    answered: dict[str, str] = {}
    gate = asyncio.Semaphore(32)
    async with aiohttp.ClientSession(url, timeout=aiohttp.ClientTimeout(total=10)) as client:

        async def create(i: int) -> None:
            async with gate:
                try:
                    async with client.post(PODS, json=pod(f"burst-{i}")) as response:
                        if response.status != 201:
                            return
                        created = await response.json()
                except aiohttp.ClientError:
                    return
                answered[f"burst-{i}"] = created["metadata"]["resourceVersion"]
                if len(answered) == kill_after:
                    os.kill(pid, signal.SIGKILL)

        await asyncio.gather(*(create(i) for i in range(count)))
    return answered


async def _listed(url: str) -> dict[str, str]:
    async with aiohttp.ClientSession(url) as client, client.get(PODS) as response:
        items = (await response.json())["items"]
    return {p["metadata"]["name"]: p["metadata"]["resourceVersion"] for p in items}


def kill_run() -> tuple[int, int, int, int, float]:
    """answered, of them found as answered, committed but unanswered, all stored, restart seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        data, kubeconfig = Path(tmp) / "data", Path(tmp) / "kubeconfig"
        options = ["--data-dir", str(data), "--no-kubelets", "--nodes", "1", "--watch-history", "500"]
        process, url, _ = start_cluster_up(kubeconfig, *options)
        answered = asyncio.run(burst(url, 2_000, kill_after=800, pid=process.pid))
        process.wait(10)
        process, url, restart = start_cluster_up(kubeconfig, *options)
        try:
            stored = asyncio.run(_listed(url))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(10)
    kept = sum(1 for name, rv in answered.items() if stored.get(name) == rv)
    return len(answered), kept, len(set(stored) - set(answered)), len(stored), restart


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="also --data-sync FULL")
    parser.add_argument("--etcd", metavar="URL", help="also --etcd URL (a running etcd)")
    args = parser.parse_args()
    modes = {
        "memory": [],
        "sqlite": [],
        **({"sqlite-full": []} if args.full else {}),
        **({"etcd": []} if args.etcd else {}),
    }
    rates: dict[str, list[tuple[float, float]]] = modes
    for run in range(args.repeat):
        for mode in rates:
            with tempfile.TemporaryDirectory() as tmp:
                extra = [] if mode == "memory" else ["--data-dir", tmp]
                extra += ["--data-sync", "FULL"] if mode == "sqlite-full" else []
                if mode == "etcd":
                    extra = ["--etcd", args.etcd, "--etcd-prefix", f"/bench-{os.getpid()}-{run}"]
                with server(history=10_000, extra=extra) as url:
                    create, bind, _ = asyncio.run(bindings(url, args.pods, 32))
            rates[mode].append((create, bind))
    memory = [statistics.median(r[i] for r in rates["memory"]) for i in (0, 1)]
    for mode, runs in rates.items():
        for i, what in enumerate(("creates", "binding POSTs")):
            values = [r[i] for r in runs]
            median = statistics.median(values)
            share = f", {median / memory[i]:.0%} of memory" if mode != "memory" else ""
            print(
                f"{mode:<11} {what}/s ({args.pods} pods, 32 in flight, {args.repeat} runs): median {median:,.0f} "
                f"(min {min(values):,.0f}, max {max(values):,.0f}){share}"
            )
    runs = [kill_run() for _ in range(args.repeat)]
    for answered, kept, unanswered, stored, restart in runs:
        print(
            f"SIGKILL after 800 answered: {answered} answered, {kept} found as answered, {answered - kept} lost, "
            f"{unanswered} committed unanswered, {stored} stored; serving again after {restart:.2f} s"
        )


if __name__ == "__main__":
    main()
