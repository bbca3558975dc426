"""`kubesched cluster up` as a user runs it: a process that serves until SIGINT or SIGTERM."""

from __future__ import annotations

import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
import yaml

from processes import free_port


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cluster_up_serves_and_stops_cleanly(tmp_path, kubectl_for, sig):
    port = free_port()
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesched.cli.main",
            "cluster",
            "up",
            "--nodes",
            "2",
            "--port",
            str(port),
            "--kubeconfig",
            str(kubeconfig),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        banner = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}" in banner and "2 fake nodes" in banner
        assert yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"] == f"http://127.0.0.1:{port}"
        assert kubeconfig.stat().st_mode & 0o077 == 0
        nodes = kubectl_for(kubeconfig)("get", "nodes", "-o", "name").stdout.split()
        assert nodes == ["node/node-0", "node/node-1"]
    finally:
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert "kubesched cluster stopped." in out
    time.sleep(0.1)
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        pass


def test_cluster_up_refuses_a_missing_token_file(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "kubesched.cli.main", "cluster", "up", "--token-file", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "--token-file" in result.stderr


def test_cluster_up_tls_requires_a_generated_token_kubectl_uses_without_asking(tmp_path, kubectl_for):
    port = free_port()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("an old kubeconfig\n")
    kubeconfig.chmod(0o644)
    command = [sys.executable, "-m", "kubesched", "cluster", "up", "--tls", "--nodes", "1", "--port", str(port)]
    proc = subprocess.Popen([*command, "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True)
    try:
        assert f"https://127.0.0.1:{port}" in proc.stdout.readline()
        assert "generated token" in proc.stdout.readline()
        assert kubeconfig.stat().st_mode & 0o077 == 0
        user = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]
        assert len(user["token"]) >= 32
        kubectl = kubectl_for(kubeconfig)
        result = subprocess.run(
            [kubectl.binary, "get", "nodes", "-o", "name"],
            env=kubectl.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert (result.returncode, result.stdout.split()) == (0, ["node/node-0"]), result.stderr
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"https://127.0.0.1:{port}/api/v1/nodes", context=context, timeout=10)
        assert refused.value.code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=15)
    assert proc.returncode == 0
