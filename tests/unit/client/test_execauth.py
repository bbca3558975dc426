"""Exec credential plugins: the kubeconfig stanza, running the plugin, caching, 401, certificates."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import sys
import textwrap

import pytest
import yaml
from aiohttp import web
from lightkube.resources import core_v1

from kubesched.apiserver.tls import self_signed, server_context
from kubesched.client import ClientConfig, ConfigError, ConnectionFailed, KubeCluster
from kubesched.cluster.errors import Unauthorized

V1 = "client.authentication.k8s.io/v1"
NODES = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": []}

# The plugin: counts its runs in $STATE/runs, keeps the KUBERNETES_EXEC_INFO it got in $STATE/info,
# and prints $STATE/reply with {n} replaced by the run's number.
PLUGIN = """\
    #!{python}
    import os, pathlib, sys
    state = pathlib.Path(os.environ["STATE"])
    runs = state / "runs"
    n = int(runs.read_text()) + 1 if runs.exists() else 1
    runs.write_text(str(n))
    (state / "info").write_text(os.environ.get("KUBERNETES_EXEC_INFO", ""))
    code = int(os.environ.get("EXIT", "0"))
    if code:
        sys.exit(code)
    sys.stdout.write((state / "reply").read_text().replace("{{n}}", str(n)))
"""


def credential(api_version=V1, **status):
    return json.dumps({"apiVersion": api_version, "kind": "ExecCredential", "status": status or None})


@pytest.fixture
def plugin(tmp_path):
    """(kubeconfig writer, state dir): the kubeconfig runs the plugin above as `bin/plugin`,
    relative to the kubeconfig's directory."""
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "plugin"
    script.write_text(textwrap.dedent(PLUGIN.format(python=sys.executable)))
    script.chmod(0o755)

    def kubeconfig(server, *, reply=None, ca=None, **exec_):
        if reply is not None:
            (tmp_path / "reply").write_text(reply)
        stanza = {"apiVersion": V1, "command": "./bin/plugin", "interactiveMode": "Never"}
        stanza["env"] = [{"name": "STATE", "value": str(tmp_path)}, *exec_.pop("env", [])]
        stanza.update(exec_)
        cluster = {
            "server": server,
            "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"a": 1}}],
        }
        if ca is not None:
            cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": cluster}],
            "users": [{"name": "u", "user": {"exec": stanza}}],
            "contexts": [{"name": "main", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "main",
        }
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        return path

    return kubeconfig, tmp_path


def runs(state) -> int:
    path = state / "runs"
    return int(path.read_text()) if path.exists() else 0


def recording_app(accept=lambda token: True):
    seen: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        seen.append(header)
        if not accept(header.removeprefix("Bearer ")):
            body = {"kind": "Status", "status": "Failure", "reason": "Unauthorized", "code": 401}
            return web.json_response({**body, "message": "Unauthorized"}, status=401)
        return web.json_response(NODES)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app, seen


def test_the_token_is_used_until_it_expires(serve, plugin):
    kubeconfig, state = plugin
    seen = []

    async def main(expiry):
        app, headers = recording_app()
        async with serve(app) as url:
            path = kubeconfig(url, reply=credential(token="tok-{n}", expirationTimestamp=expiry))
            async with KubeCluster.from_kubeconfig(path, qps=0) as cluster:
                for _ in range(3):
                    await cluster.list(core_v1.Node)
        seen.extend(headers)

    asyncio.run(main("2999-01-01T00:00:00Z"))
    assert seen == ["Bearer tok-1"] * 3 and runs(state) == 1
    seen.clear()
    (state / "runs").unlink()
    asyncio.run(main("2000-01-01T00:00:00Z"))  # already expired: each request runs the plugin
    assert seen == ["Bearer tok-1", "Bearer tok-2", "Bearer tok-3"]


def test_the_plugin_gets_exec_info_and_cluster_info_when_it_asks(serve, plugin):
    kubeconfig, state = plugin
    app, _ = recording_app()

    async def main():
        async with serve(app) as url:
            path = kubeconfig(url, reply=credential(token="t"), provideClusterInfo=True)
            async with KubeCluster.from_kubeconfig(path, qps=0) as cluster:
                await cluster.list(core_v1.Node)
            return url

    url = asyncio.run(main())
    info = json.loads((state / "info").read_text())
    assert info == {
        "apiVersion": V1,
        "kind": "ExecCredential",
        "spec": {"interactive": False, "cluster": {"server": url, "config": {"a": 1}}},
    }


def test_a_401_runs_the_plugin_again_for_the_next_request(serve, plugin):
    kubeconfig, state = plugin
    app, seen = recording_app(accept=lambda token: token != "tok-1")

    async def main():
        async with serve(app) as url:
            path = kubeconfig(url, reply=credential(token="tok-{n}"))
            async with KubeCluster.from_kubeconfig(path, qps=0) as cluster:
                with pytest.raises(Unauthorized):
                    await cluster.list(core_v1.Node)
                await cluster.list(core_v1.Node)

    asyncio.run(main())
    assert seen == ["Bearer tok-1", "Bearer tok-2"] and runs(state) == 2


@pytest.mark.parametrize(
    ("exec_", "reply", "message"),
    [
        ({"command": "no-such-plugin", "installHint": "brew install it"}, None, "executable no-such-plugin not found"),
        ({"env": [{"name": "EXIT", "value": "3"}]}, "", "/bin/plugin failed with exit code 3"),
        ({}, "not json", "decoding stdout"),
        ({}, credential("client.authentication.k8s.io/v1beta1", token="t"), "plugin returned version"),
        ({}, credential(), "exec plugin didn't return a status field"),
        ({}, credential(expirationTimestamp="2999-01-01T00:00:00Z"), "didn't return a token or cert/key pair"),
        ({}, credential(clientCertificateData="x"), "returned only certificate or key, not both"),
        ({"interactiveMode": "Always"}, credential(token="t"), "standard input is not a terminal"),
    ],
)
def test_a_plugin_that_gives_no_credentials_fails_the_request_clearly(serve, plugin, exec_, reply, message):
    kubeconfig, _ = plugin
    app, seen = recording_app()

    async def main():
        async with serve(app) as url:
            path = kubeconfig(url, reply=reply if reply is not None else credential(token="t"), **exec_)
            async with KubeCluster.from_kubeconfig(path, qps=0) as cluster:
                with pytest.raises(ConnectionFailed, match="getting credentials: ") as failure:
                    await cluster.list(core_v1.Node)
                return str(failure.value)

    text = asyncio.run(main())
    assert message in text
    if "installHint" in exec_:
        assert text.endswith("\n\nbrew install it")
    assert seen == []


@pytest.mark.parametrize(
    ("stanza", "message"),
    [
        ({"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "p"}, "invalid apiVersion"),
        ({"apiVersion": V1, "command": "p"}, "interactiveMode must be specified for u"),
        ({"apiVersion": V1, "command": "p", "interactiveMode": "Sometimes"}, "invalid interactiveMode for u"),
        ({"apiVersion": V1, "interactiveMode": "Never"}, "invalid kubeconfig .*: .*`command`"),
        ({"apiVersion": V1, "command": "", "interactiveMode": "Never"}, "command must be specified for u"),
    ],
)
def test_an_exec_stanza_that_cannot_work_is_a_config_error(tmp_path, stanza, message):
    config = {
        "clusters": [{"name": "c", "cluster": {"server": "https://c:6443"}}],
        "users": [{"name": "u", "user": {"exec": stanza}}],
        "contexts": [{"name": "main", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "main",
    }
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match=message):
        ClientConfig.from_kubeconfig(path)


def test_v1beta1_defaults_to_if_available_and_resolves_a_relative_command(tmp_path):
    config = {
        "clusters": [{"name": "c", "cluster": {"server": "https://c:6443"}}],
        "users": [
            {"name": "u", "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "bin/p"}}}
        ],
        "contexts": [{"name": "main", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "main",
    }
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    exec_ = ClientConfig.from_kubeconfig(path).exec
    assert exec_ is not None
    assert (exec_.interactive_mode, exec_.command) == ("IfAvailable", str(tmp_path / "bin/p"))


def test_a_client_certificate_from_the_plugin_is_presented_over_tls(plugin):
    kubeconfig, state = plugin
    server_cert, server_key = self_signed("127.0.0.1")
    client_cert, client_key = self_signed("client")
    context = server_context(server_cert, server_key)
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=client_cert.decode())
    app, seen = recording_app()

    async def main():
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
        url = f"https://127.0.0.1:{runner.addresses[0][1]}"
        try:
            reply = credential(clientCertificateData=client_cert.decode(), clientKeyData=client_key.decode())
            path = kubeconfig(url, reply=reply, ca=server_cert)
            async with KubeCluster.from_kubeconfig(path, qps=0) as cluster:
                listed = await cluster.list(core_v1.Node)
            return listed.resource_version
        finally:
            await runner.cleanup()

    assert asyncio.run(main()) == "1"
    assert seen == [""] and runs(state) == 1  # no token: the certificate is the credential
