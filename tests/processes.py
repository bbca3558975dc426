"""`kubesched run` as a separate process against an embedded cluster, and what e2e tests ask of it:
its endpoint, its metrics, the cluster through a real client."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import lightkube
from lightkube.config.kubeconfig import KubeConfig
from lightkube.resources.coordination_v1 import Lease


def free_port() -> int:
    """A TCP port of this machine free at the moment of asking."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def eventually(probe: Callable[[], Any], timeout: float = 20.0) -> Any:
    """`probe()`'s first truthy answer, asked every 0.1 s; an AssertionError after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not (result := probe()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
    return result


def start_run(
    kubeconfig: Path, config: Path, *, extra: Sequence[str] = (), stderr: int | None = subprocess.STDOUT
) -> subprocess.Popen[str]:
    """`kubesched run --config CONFIG --kubeconfig K` on a free metrics port, its output piped."""
    command = [sys.executable, "-m", "kubesched", "run", "--config", str(config), "--kubeconfig", str(kubeconfig)]
    command += ["--metrics-bind", "127.0.0.1:0", *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)


def endpoint(process: subprocess.Popen[str]) -> str:
    """The URL of the scheduler's endpoints, from its first line of output."""
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"endpoints at (http://\S+)", line)
    assert found, line
    return found.group(1)


def metrics(url: str) -> str:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as response:
        return response.read().decode()


def metric(url: str, sample: str) -> float:
    """The value of one sample (`name{labels}`) of the scheduler's metrics; 0 when absent."""
    for line in metrics(url).splitlines():
        if line.startswith(sample + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def client(kubeconfig: Path) -> lightkube.Client:
    return lightkube.Client(config=KubeConfig.from_file(str(kubeconfig)))


def lease(api: lightkube.Client, name: str, namespace: str = "default") -> Any | None:
    try:
        return api.get(Lease, name, namespace=namespace)
    except lightkube.ApiError:
        return None


ETCD_INSTALLED = Path(__file__).resolve().parents[1] / ".tools" / "root" / "usr" / "bin" / "etcd"


def etcd_binary() -> str | None:
    """A real etcd: on PATH, or unpacked from Debian's etcd-server into .tools/ (as .ci/run does)."""
    import shutil

    found = shutil.which("etcd")
    return found or (str(ETCD_INSTALLED) if ETCD_INSTALLED.is_file() else None)


def start_etcd(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A one-member etcd with its data in `directory` on free loopback ports: the process and its
    client URL, once it answers."""
    binary = etcd_binary()
    assert binary is not None
    client, peer = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    command = [
        binary,
        "--data-dir", str(directory),
        "--listen-client-urls", client,
        "--advertise-client-urls", client,
        "--listen-peer-urls", peer,
        "--initial-advertise-peer-urls", peer,
        "--initial-cluster", f"default={peer}",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(f"{client}/health", timeout=1) as reply:
                if b'"health":"true"' in reply.read():
                    return process, client
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"etcd did not start (exit {process.poll()})")
        time.sleep(0.1)


def ray_binary() -> str | None:
    """The `ray` command beside this Python (Ray installed), or None."""
    found = Path(sys.executable).with_name("ray")
    return str(found) if found.exists() else shutil.which("ray")


def start_ray_head(cpus: int = 2) -> str:
    """`ray start --head` on a free port of this machine (no dashboard); its address. `ray stop`
    ends it."""
    binary = ray_binary()
    assert binary is not None
    port = free_port()
    subprocess.run(
        [
            binary,
            "start",
            "--head",
            f"--port={port}",
            f"--num-cpus={cpus}",
            "--include-dashboard=false",
            "--disable-usage-stats",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return f"127.0.0.1:{port}"
