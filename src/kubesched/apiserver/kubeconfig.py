"""Kubeconfig files pointing kubectl and client libraries at an embedded API server."""

from __future__ import annotations

import base64
import contextlib
import os
import tempfile
from pathlib import Path

import yaml

from kubesched.apiserver.jsontypes import JsonObject

CONTEXT = "kubesched"


def kubeconfig(
    server: str, *, token: str | None = None, ca_pem: bytes | None = None, namespace: str = "default"
) -> JsonObject:
    user: JsonObject = {"token": token} if token else {}
    cluster: JsonObject = {"server": server}
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
    """Write the kubeconfig readable only by its owner (it may hold a token), atomically: a
    temporary file in the same directory (mode 0600 from the start) renamed over `path`. A
    symlink at `path` is replaced, never followed; a reader sees the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            yaml.safe_dump(kubeconfig(server, token=token, ca_pem=ca_pem), f, sort_keys=False)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return path
