"""Exec credential plugins (a kubeconfig user's `exec`): run a command that prints an
`ExecCredential`, use its token or client certificate until it expires or the server answers 401.

What kubeconfigs for managed clusters use (`aws eks get-token`, `gke-gcloud-auth-plugin`,
`kubelogin`). The plugin runs without a terminal unless one is there and the mode allows it; its
stderr is passed through, its stdout must be one ExecCredential of the configured apiVersion.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from lightkube.core.exceptions import ConfigError

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
EXEC_INFO = "KUBERNETES_EXEC_INFO"
EXEC_EXTENSION = "client.authentication.k8s.io/exec"  # a cluster extension handed to the plugin
NOT_INSTALLED = (
    "\n\nIt looks like you are trying to use a client-go credential plugin that is not installed."
    "\n\nTo learn more about this feature, consult the documentation available at:"
    "\n      https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins"
)


class CredentialError(Exception):
    """The plugin could not give credentials; the message says why (as client-go words it)."""


@dataclass(frozen=True)
class ExecConfig:
    """A kubeconfig user's `exec` stanza, checked."""

    api_version: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    install_hint: str = ""
    interactive_mode: str = "IfAvailable"
    provide_cluster_info: bool = False
    cluster_config: object = field(default=None, compare=False, hash=False)

    @classmethod
    def from_stanza(
        cls, raw: Mapping[str, object], user: str, base: Path | None, cluster_config: object = None
    ) -> ExecConfig:
        """From the stanza as written; a relative command with a slash in it is relative to the
        kubeconfig's directory `base`."""
        api_version = raw.get("apiVersion") or ""
        if not isinstance(api_version, str) or api_version not in API_VERSIONS:
            raise ConfigError(f"exec plugin: invalid apiVersion {api_version!r}")
        command = _text(raw.get("command"))
        if not command:
            raise ConfigError(f"command must be specified for {user} to use exec authentication plugin")
        if "/" in command and not os.path.isabs(command) and base is not None:
            command = str(base / command)
        mode = raw.get("interactiveMode") or ""
        if not mode:
            if api_version == API_VERSIONS[0]:
                raise ConfigError(f"interactiveMode must be specified for {user} to use exec authentication plugin")
            mode = "IfAvailable"
        if not isinstance(mode, str) or mode not in INTERACTIVE_MODES:
            raise ConfigError(f"invalid interactiveMode for {user}: {mode!r} (one of {', '.join(INTERACTIVE_MODES)})")
        entries = [e for e in _listed(raw.get("env")) if isinstance(e, dict)]
        env = tuple((str(e.get("name", "")), str(e.get("value", ""))) for e in entries)
        return cls(
            api_version=api_version,
            command=command,
            args=tuple(str(a) for a in _listed(raw.get("args"))),
            env=env,
            install_hint=_text(raw.get("installHint")),
            interactive_mode=mode,
            provide_cluster_info=bool(raw.get("provideClusterInfo")),
            cluster_config=cluster_config,
        )


@dataclass(frozen=True)
class Credentials:
    """What one run of the plugin gave; `expires` is a Unix time, None for until rejected."""

    token: str = ""
    client_cert: bytes | None = None
    client_key: bytes | None = None
    expires: float | None = None


class ExecCredentials:
    """The plugin's current credentials: run again once they expire, or after the server
    rejected them (401). One run at a time; requests waiting meanwhile share its result."""

    def __init__(self, config: ExecConfig, cluster: Mapping[str, object] | None = None) -> None:
        self.config = config
        self._cluster = dict(cluster or {})
        self._current: Credentials | None = None
        self._lock = asyncio.Lock()

    def cached(self) -> Credentials | None:
        """The credentials still good to use, if any, without running anything."""
        current = self._current
        if current is None or (current.expires is not None and time.time() > current.expires):
            return None
        return current

    async def get(self) -> Credentials:
        async with self._lock:
            current = self.cached()
            if current is None:
                current = self._current = await self._run()
            return current

    def rejected(self, credentials: Credentials) -> None:
        """The server answered 401 to `credentials`: the next request runs the plugin again
        (unless it has already been run since)."""
        if self._current is credentials:
            self._current = None

    async def _run(self) -> Credentials:
        config = self.config
        interactive = self._interactive()
        spec: dict[str, object] = {"interactive": interactive}
        if config.provide_cluster_info:
            spec["cluster"] = self._cluster
        info = {"apiVersion": config.api_version, "kind": "ExecCredential", "spec": spec}
        env = {**os.environ, **dict(config.env), EXEC_INFO: json.dumps(info)}
        try:
            process = await asyncio.create_subprocess_exec(
                config.command,
                *config.args,
                env=env,
                stdin=None if interactive else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
            )
        except FileNotFoundError:
            hint = f"\n\n{config.install_hint}" if config.install_hint else ""
            raise CredentialError(f"exec: executable {config.command} not found{NOT_INSTALLED}{hint}") from None
        except OSError as e:
            raise CredentialError(f"exec: {e}") from None
        stdout, _ = await process.communicate()
        if process.returncode:
            raise CredentialError(f"exec: executable {config.command} failed with exit code {process.returncode}")
        return self._parse(stdout)

    def _interactive(self) -> bool:
        mode = self.config.interactive_mode
        if mode == "Never":
            return False
        terminal = sys.stdin is not None and sys.stdin.isatty()
        if mode == "Always" and not terminal:
            raise CredentialError("exec plugin cannot support interactive mode: standard input is not a terminal")
        return terminal

    def _parse(self, stdout: bytes) -> Credentials:
        try:
            credential = json.loads(stdout)
        except ValueError as e:
            raise CredentialError(f"decoding stdout: {e}") from None
        if not isinstance(credential, dict) or credential.get("kind") != "ExecCredential":
            raise CredentialError("decoding stdout: not an ExecCredential")
        if credential.get("apiVersion") != self.config.api_version:
            raise CredentialError(
                f"exec plugin is configured to use API version {self.config.api_version},"
                f" plugin returned version {credential.get('apiVersion')}"
            )
        status = credential.get("status")
        if not isinstance(status, dict):
            raise CredentialError("exec plugin didn't return a status field")
        token, cert, key = status.get("token") or "", status.get("clientCertificateData"), status.get("clientKeyData")
        if not token and not cert and not key:
            raise CredentialError("exec plugin didn't return a token or cert/key pair")
        if bool(cert) != bool(key):
            raise CredentialError("exec plugin returned only certificate or key, not both")
        expires = status.get("expirationTimestamp")
        try:
            expiry = datetime.fromisoformat(expires.replace("Z", "+00:00")).timestamp() if expires else None
        except (AttributeError, ValueError):
            raise CredentialError(f"decoding stdout: invalid expirationTimestamp {expires!r}") from None
        return Credentials(
            token=token,
            client_cert=cert.encode() if cert else None,
            client_key=key.encode() if key else None,
            expires=expiry,
        )


def _text(value: object) -> str:
    """A string of the stanza ("" when unset: the kubeconfig's schema has made the set ones strings)."""
    return value if isinstance(value, str) else ""


def _listed(value: object) -> list[object]:
    """A list of the stanza (empty when unset: the kubeconfig's schema has made the set ones lists)."""
    return value if isinstance(value, list) else []


def cluster_info(server: str, ca_data: bytes | None, insecure: bool, extension: object) -> dict[str, object]:
    """The `spec.cluster` handed to a plugin that asks for it (`provideClusterInfo`)."""
    info: dict[str, object] = {"server": server}
    if ca_data:
        info["certificate-authority-data"] = base64.b64encode(ca_data).decode()
    if insecure:
        info["insecure-skip-tls-verify"] = True
    if extension is not None:
        info["config"] = extension
    return info
