"""An embedded cluster served over HTTP for the whole e2e session, and real clients against it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.sim import KubeletConfig

ROOT = Path(__file__).resolve().parents[2]


def kubectl_path() -> str:
    """kubectl from PATH, or the one `.ci/run` unpacks into `.tools/` on a machine without it."""
    found = shutil.which("kubectl") or shutil.which("kubectl", path=str(ROOT / ".tools/root/usr/bin"))
    if found is None:
        pytest.fail("kubectl is not installed: run .ci/run (it unpacks Debian's kubernetes-client into .tools/)")
    return found


def make_runner(kubeconfig: Path):
    """A function running kubectl with `kubeconfig`; it raises on failure unless `check=False`."""
    binary = kubectl_path()
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(kubeconfig.parent / "cache")}

    def run(*args: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([binary, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
        return result

    run.binary = binary
    run.env = env
    return run


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    spec = ClusterSpec(
        nodes=3, port=0, kubelet=KubeletConfig(start_seconds=0.2, stop_seconds=0.3), bookmark_interval=0.5
    )
    with ClusterThread(spec) as running:
        running.kubeconfig = write_kubeconfig(tmp_path_factory.mktemp("kube") / "config", running.url)
        yield running


@pytest.fixture(scope="session")
def kubectl(cluster):
    return make_runner(cluster.kubeconfig)


@pytest.fixture(scope="session")
def kubectl_for():
    return make_runner
