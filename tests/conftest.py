"""Fixtures every suite may use: a real etcd, started once, where one is installed."""

from __future__ import annotations

import pytest

from processes import etcd_binary, start_etcd


@pytest.fixture(scope="session")
def etcd_url(tmp_path_factory):
    """The client URL of a real etcd for the session; the test is skipped, saying why, without one."""
    if etcd_binary() is None:
        pytest.skip("no etcd binary: install Debian's etcd-server or put etcd on PATH (.ci/run does)")
    process, url = start_etcd(tmp_path_factory.mktemp("etcd"))
    yield url
    process.terminate()
    process.wait(10)
