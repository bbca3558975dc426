"""Fixtures every suite may use: a real etcd and a local Ray cluster, each started once, where installed."""

from __future__ import annotations

import subprocess

import pytest

from processes import etcd_binary, ray_binary, start_etcd, start_ray_head


@pytest.fixture(scope="session")
def etcd_url(tmp_path_factory):
    """The client URL of a real etcd for the session; the test is skipped, saying why, without one."""
    if etcd_binary() is None:
        pytest.skip("no etcd binary: install Debian's etcd-server or put etcd on PATH (.ci/run does)")
    process, url = start_etcd(tmp_path_factory.mktemp("etcd"))
    yield url
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="session")
def ray_address():
    """The address of a local Ray cluster (`ray start --head`) for the session; the test is skipped,
    saying why, where Ray is not installed."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'kubesched[ray]')")
    if ray_binary() is None:
        pytest.skip("no ray command beside this Python")
    address = start_ray_head()
    yield address
    subprocess.run([ray_binary(), "stop", "--force"], capture_output=True, timeout=120)
