"""Plain data on its way to becoming an object: a patched object decoded to its class, an apply
configuration checked as kube-apiserver checks it before merging."""

from __future__ import annotations

from typing import TypeVar

import msgspec

from kubesched.api.objects import Served
from kubesched.cluster.errors import BadRequest
from kubesched.cluster.kinds import Kind
from kubesched.storage.typecheck import type_error

R = TypeVar("R", bound=Served)


def from_plain(cls: type[R], data: object, what: str) -> R:
    """Plain data as an object of `cls`, or BadRequest saying `what` failed and why."""
    if (problem := type_error(data, cls)) is not None:
        raise BadRequest(f"{what}: {problem}")
    try:
        return msgspec.convert(data, cls)
    except msgspec.ValidationError as e:
        raise BadRequest(f"{what}: {e}") from None


def check_apply_config(kind: Kind, name: str, config: object) -> dict[str, object]:
    """The apply configuration, or BadRequest for what kube-apiserver refuses in one before merging it."""
    if not isinstance(config, dict):
        raise BadRequest("error decoding YAML: the apply configuration must be an object")
    version = config.get("apiVersion")
    if version != kind.api_version:
        raise BadRequest(
            "Incorrect version specified in apply patch. "
            f"Specified patch version: {version or ''}, expected: {kind.api_version}"
        )
    if config.get("kind") != kind.kind:
        raise BadRequest(f"Incorrect kind specified in apply patch: {config.get('kind') or ''}, expected: {kind.kind}")
    meta = config.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise BadRequest("metadata must be an object")
    if "metadata" in config and meta is None:  # `metadata: null` decodes as no metadata at all
        config = {key: value for key, value in config.items() if key != "metadata"}
    meta = meta or {}
    if meta.get("managedFields") is not None:
        raise BadRequest("metadata.managedFields must be nil")
    if meta.get("name") not in (None, "", name):
        raise BadRequest(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
    return config
