"""Controllers keeping up: a Deployment of N replicas on M nodes, from the POST to every replica
Running and available, with `kubesched cluster up --scheduler` in its own process.

    .venv/bin/python -m bench.controllers [--replicas N] [--nodes M] [--repeat R]

Each run starts a fresh cluster (controllers, scheduler and fake kubelets in one process), POSTs
the Deployment and polls its status every 0.1 s until `availableReplicas` equals N; reported: the
seconds from the POST until then, and until every pod was bound.
"""

from __future__ import annotations

import argparse
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
import urllib.request
from collections.abc import Iterator


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def cluster(nodes: int) -> Iterator[str]:
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable, "-m", "kubesched.cli.main", "cluster", "up", "--nodes", str(nodes), "--port", str(port),
            "--scheduler", "--scheduler-port", str(_free_port()), "--kubeconfig", os.path.join(tmp, "kubeconfig"),
        ]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.1):
                    break
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)


def _request(url: str, method: str = "GET", body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def deployment(replicas: int) -> dict:
    container = {"name": "app", "image": "nginx:1.27", "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "load"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "load"}},
            "template": {"metadata": {"labels": {"app": "load"}}, "spec": {"containers": [container]}},
        },
    }


def run_once(replicas: int, nodes: int) -> tuple[float, float]:
    with cluster(nodes) as url:
        base = f"{url}/apis/apps/v1/namespaces/default/deployments"
        start = time.perf_counter()
        _request(base, "POST", deployment(replicas))
        bound_at = None
        while True:
            status = _request(f"{base}/load").get("status") or {}
            if bound_at is None and (status.get("replicas") or 0) >= replicas:
                pods = _request(f"{url}/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3D&limit=1")
                if not pods["items"]:
                    bound_at = time.perf_counter() - start
            if (status.get("availableReplicas") or 0) >= replicas:
                return time.perf_counter() - start, bound_at or time.perf_counter() - start
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=5000)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = [run_once(args.replicas, args.nodes) for _ in range(args.repeat)]
    for i, (ready, bound) in enumerate(runs, 1):
        print(f"run {i}: all {args.replicas} bound after {bound:.2f} s, all available after {ready:.2f} s")
    ready = [r for r, _ in runs]
    print(
        f"{args.replicas} replicas on {args.nodes} nodes, {args.repeat} runs: available after median "
        f"{statistics.median(ready):.2f} s (range {min(ready):.2f}-{max(ready):.2f})"
    )


if __name__ == "__main__":
    main()
