"""Where the API server is and how to reach it: kubeconfig files and in-cluster service accounts."""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import msgspec
import yaml
from lightkube.config.kubeconfig import DEFAULT_KUBECONFIG, KubeConfig, SingleConfig
from lightkube.core.exceptions import ConfigError

from kubesched.client.execauth import EXEC_EXTENSION, ExecConfig

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_QPS = 50.0  # KubeSchedulerConfiguration clientConnection.qps
DEFAULT_BURST = 100  # clientConnection.burst

__all__ = ["DEFAULT_BURST", "DEFAULT_QPS", "SERVICE_ACCOUNT", "ClientConfig", "ConfigError"]


@dataclass(frozen=True)
class ClientConfig:
    """One API server and the credentials for it. PEM data is held in memory; `token_file` is
    re-read as it rotates. `qps` <= 0 turns client-side rate limiting off."""

    server: str
    ca_data: bytes | None = None
    insecure: bool = False
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    client_cert: bytes | None = None
    client_key: bytes | None = None
    exec: ExecConfig | None = None
    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST
    timeout: float = 60.0  # seconds for one non-watch request
    user_agent: str = "kubesched/0.1.0"

    @classmethod
    def from_kubeconfig(cls, path: str | os.PathLike[str] | None = None, *, context: str | None = None) -> ClientConfig:
        """The kubeconfig's `context` (default: its current context). Without `path`, the first file
        in $KUBECONFIG, else ~/.kube/config."""
        if path is None:
            candidates = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
            path = next((p for p in candidates if Path(p).expanduser().is_file()), DEFAULT_KUBECONFIG)
        file = Path(path).expanduser()
        if not file.is_file():
            raise ConfigError(f"Configuration file {path} not found")
        try:
            document = yaml.safe_load(file.read_text())
            single = KubeConfig.from_dict(document, fname=file).get(context)
        except (msgspec.ValidationError, yaml.YAMLError, AttributeError, KeyError, TypeError) as e:
            raise ConfigError(f"invalid kubeconfig {path}: {e}") from None
        if single is None:  # `get` returns None only when given a default
            raise ConfigError("no context selected")
        return cls._from_single(single, document)

    @classmethod
    def _from_single(cls, single: SingleConfig, document: dict[str, object]) -> ClientConfig:
        cluster, user = single.cluster, single.user

        def data(inline: str | None, file: str | None) -> bytes | None:
            if inline:
                return base64.b64decode(inline)
            return Path(single.abs_file(file)).read_bytes() if file else None

        if user is not None and user.auth_provider:
            raise ConfigError("auth-provider is not supported; use a token or a client certificate")
        return cls(
            server=cluster.server.rstrip("/"),
            ca_data=data(cluster.certificate_auth_data, cluster.certificate_auth),
            insecure=cluster.insecure,
            token=user.token if user else None,
            token_file=str(single.abs_file(user.token_file)) if user and user.token_file else None,
            username=user.username if user else None,
            password=user.password if user else None,
            client_cert=data(user.client_cert_data, user.client_cert) if user else None,
            client_key=data(user.client_key_data, user.client_key) if user else None,
            exec=_exec_config(single, document) if user is not None and user.exec is not None else None,
        )

    @classmethod
    def in_cluster(
        cls, account: str | os.PathLike[str] = SERVICE_ACCOUNT, environ: Mapping[str, str] | None = None
    ) -> ClientConfig:
        """A pod's own service account: KUBERNETES_SERVICE_HOST/PORT, its token (re-read as the
        kubelet rotates it) and CA, as client-go's `InClusterConfig`."""
        env = os.environ if environ is None else environ
        host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
        if not host or not port:
            raise ConfigError(
                "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT"
                " must be defined"
            )
        root = Path(account)
        token_file = root / "token"
        if not token_file.is_file():
            raise ConfigError(f"unable to load in-cluster configuration: {token_file} not found")
        ca_file = root / "ca.crt"
        return cls(
            server=f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}",
            ca_data=ca_file.read_bytes() if ca_file.is_file() else None,
            token_file=str(token_file),
        )

    def ssl_context(self, client_cert: bytes | None = None, client_key: bytes | None = None) -> ssl.SSLContext | None:
        """The TLS context for an https server (None for http), with the given client certificate
        (an exec plugin's) or else the configured one."""
        if not self.server.startswith("https:"):
            return None
        context = ssl.create_default_context(cadata=self.ca_data.decode() if self.ca_data else None)
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if client_cert is None or client_key is None:
            client_cert, client_key = self.client_cert, self.client_key
        if client_cert and client_key:
            # `ssl` loads certificates only from files: a private directory (0700), removed at once.
            with tempfile.TemporaryDirectory() as tmp:
                cert_file, key_file = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
                cert_file.write_bytes(client_cert)
                key_file.touch(0o600)
                key_file.write_bytes(client_key)
                context.load_cert_chain(cert_file, key_file)
        return context


def _exec_config(single: SingleConfig, document: dict[str, object]) -> ExecConfig:
    """The user's `exec` stanza as written in the kubeconfig `document` (lightkube keeps only some
    of its fields), with the cluster's `client.authentication.k8s.io/exec` extension for plugins
    that ask for it. A relative command is relative to the kubeconfig's directory."""
    base = single.fname.parent if single.fname is not None else None

    def entry(section: str, name: str | None) -> dict[str, object]:
        return next(
            (_mapping(e.get(section[:-1])) for e in _mappings(document.get(section)) if e.get("name") == name), {}
        )

    user, cluster = single.context.user or "", entry("clusters", single.context.cluster)
    extension = next(
        (e.get("extension") for e in _mappings(cluster.get("extensions")) if e.get("name") == EXEC_EXTENSION), None
    )
    return ExecConfig.from_stanza(_mapping(entry("users", user).get("exec")), user, base, extension)


def _mapping(value: object) -> dict[str, object]:
    """A mapping of the document (an empty one for what is unset, or not a mapping)."""
    return value if isinstance(value, dict) else {}


def _mappings(value: object) -> list[dict[str, object]]:
    """The mappings of a list in the document (none for what is unset, or not a list)."""
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []
