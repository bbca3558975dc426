"""Kubeconfig files and in-cluster service accounts to a `ClientConfig`."""

from __future__ import annotations

import base64
import ssl

import pytest
import yaml

from kubesched.apiserver.tls import self_signed
from kubesched.client import ClientConfig, ConfigError, KubeCluster
from kubesched.client.transport import Transport

CERT, KEY = self_signed("127.0.0.1")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write(tmp_path, clusters, users, contexts, current="main"):
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [{"name": n, "context": c} for n, c in contexts.items()],
        "current-context": current,
    }
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    return path


def test_token_and_ca_data_of_the_current_context(tmp_path):
    path = write(
        tmp_path,
        {"c": {"server": "https://10.0.0.1:6443/", "certificate-authority-data": b64(CERT)}},
        {"u": {"token": "s3cret"}},
        {"main": {"cluster": "c", "user": "u"}, "other": {"cluster": "c"}},
    )
    config = ClientConfig.from_kubeconfig(path)
    assert (config.server, config.ca_data, config.token, config.insecure) == (
        "https://10.0.0.1:6443",
        CERT,
        "s3cret",
        False,
    )
    assert Transport(config)._headers()["Authorization"] == "Bearer s3cret"
    context = config.ssl_context()
    assert context is not None and context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_another_context_by_name(tmp_path):
    path = write(
        tmp_path,
        {"a": {"server": "https://a:6443"}, "b": {"server": "http://b:8080"}},
        {"u": {"token": "t"}},
        {"main": {"cluster": "a", "user": "u"}, "other": {"cluster": "b"}},
    )
    config = ClientConfig.from_kubeconfig(path, context="other")
    assert (config.server, config.token) == ("http://b:8080", None)
    assert config.ssl_context() is None
    with pytest.raises(ConfigError, match="nope"):
        ClientConfig.from_kubeconfig(path, context="nope")


def test_insecure_skip_tls_verify(tmp_path):
    path = write(
        tmp_path,
        {"c": {"server": "https://c:6443", "insecure-skip-tls-verify": True}},
        {"u": {"username": "admin", "password": "pw"}},
        {"main": {"cluster": "c", "user": "u"}},
    )
    config = ClientConfig.from_kubeconfig(path)
    assert config.insecure
    context = config.ssl_context()
    assert context is not None and context.verify_mode == ssl.CERT_NONE and not context.check_hostname
    assert Transport(config)._headers()["Authorization"] == "Basic " + b64(b"admin:pw")


def test_files_are_relative_to_the_kubeconfig(tmp_path):
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki/ca.crt").write_bytes(CERT)
    (tmp_path / "pki/client.crt").write_bytes(CERT)
    (tmp_path / "pki/client.key").write_bytes(KEY)
    (tmp_path / "token").write_text("from-file\n")
    path = write(
        tmp_path,
        {"c": {"server": "https://c:6443", "certificate-authority": "pki/ca.crt"}},
        {"u": {"client-certificate": "pki/client.crt", "client-key": "pki/client.key", "tokenFile": "token"}},
        {"main": {"cluster": "c", "user": "u"}},
    )
    config = ClientConfig.from_kubeconfig(path)
    assert (config.ca_data, config.client_cert, config.client_key) == (CERT, CERT, KEY)
    assert config.token_file == str(tmp_path / "token")
    assert Transport(config)._headers()["Authorization"] == "Bearer from-file"
    assert config.ssl_context() is not None  # the client certificate and key load


def test_client_certificate_data(tmp_path):
    path = write(
        tmp_path,
        {"c": {"server": "https://c:6443"}},
        {"u": {"client-certificate-data": b64(CERT), "client-key-data": b64(KEY)}},
        {"main": {"cluster": "c", "user": "u"}},
    )
    config = ClientConfig.from_kubeconfig(path)
    assert (config.client_cert, config.client_key) == (CERT, KEY)
    assert config.ssl_context() is not None


def test_kubeconfig_env_picks_the_first_existing_file(tmp_path, monkeypatch):
    path = write(tmp_path, {"c": {"server": "http://from-env:1"}}, {}, {"main": {"cluster": "c"}})
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{path}")
    assert ClientConfig.from_kubeconfig().server == "http://from-env:1"
    assert KubeCluster.from_kubeconfig(qps=5, burst=7).config.burst == 7


def test_a_malformed_kubeconfig_is_a_config_error_naming_the_file(tmp_path):
    path = write(tmp_path, {"c": {"server": "https://c:6443"}}, {"u": {"token": ["not", "a", "string"]}}, {})
    with pytest.raises(ConfigError, match=f"invalid kubeconfig {path}: .*token"):
        ClientConfig.from_kubeconfig(path)


def test_in_cluster_from_env_and_service_account_files(tmp_path):
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_bytes(CERT)
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    config = ClientConfig.in_cluster(tmp_path, env)
    assert (config.server, config.ca_data, config.token_file) == (
        "https://10.96.0.1:443",
        CERT,
        str(tmp_path / "token"),
    )
    assert Transport(config)._headers()["Authorization"] == "Bearer sa-token"
    v6 = ClientConfig.in_cluster(tmp_path, {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"})
    assert v6.server == "https://[fd00::1]:443"


def test_in_cluster_needs_the_env_and_the_token(tmp_path):
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"):
        ClientConfig.in_cluster(tmp_path, {})
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(ConfigError, match="token"):
        ClientConfig.in_cluster(tmp_path, env)


def test_a_rotated_token_file_is_read_again_after_a_minute(tmp_path, monkeypatch):
    token = tmp_path / "token"
    token.write_text("one")
    transport = Transport(ClientConfig(server="http://x", token_file=str(token)))
    now = [1000.0]
    monkeypatch.setattr("kubesched.client.transport.time.monotonic", lambda: now[0])
    assert transport._headers()["Authorization"] == "Bearer one"
    token.write_text("two")
    now[0] += 30
    assert transport._headers()["Authorization"] == "Bearer one"
    now[0] += 31
    assert transport._headers()["Authorization"] == "Bearer two"
