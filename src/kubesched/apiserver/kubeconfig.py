"""Kubeconfig files pointing kubectl and client libraries at an embedded API server."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import yaml

CONTEXT = "kubesched"


def kubeconfig(
    server: str, *, token: str | None = None, ca_pem: bytes | None = None, namespace: str = "default"
) -> dict[str, Any]:
    user: dict[str, Any] = {"token": token} if token else {}
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": cluster}],
        "users": [{"name": CONTEXT, "user": user}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": namespace}}],
        "current-context": CONTEXT,
        "preferences": {},
    }


def write_kubeconfig(path: str | Path, server: str, *, token: str | None = None, ca_pem: bytes | None = None) -> Path:
    """Write the kubeconfig readable only by its owner (it may hold a token)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(kubeconfig(server, token=token, ca_pem=ca_pem), f, sort_keys=False)
    return path
