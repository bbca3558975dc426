"""Validation on create and update, with upstream's field paths and wording."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import msgspec
from lightkube.models import core_v1 as m

from kubesched.api.errors import FieldError
from kubesched.api.quantity import parse_quantity
from kubesched.api.resources import validate_spec_resources

_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_VALUE = r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN)
_LABEL_RE = re.compile(_LABEL)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE)
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME)

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    f"validation is '{_SUBDOMAIN}')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    f"validation is '{_LABEL}')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    f"regex used for validation is '{_LABEL_VALUE}')"
)
QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    f"'{_QUALIFIED_NAME}')"
)


def subdomain_errors(value: str, field: str) -> list[FieldError]:
    if len(value) > 253:
        return [FieldError(field, value, "must be no more than 253 characters")]
    if not _SUBDOMAIN_RE.fullmatch(value):
        return [FieldError(field, value, SUBDOMAIN_MSG)]
    return []


def dns_label_errors(value: str, field: str) -> list[FieldError]:
    if len(value) > 63:
        return [FieldError(field, value, "must be no more than 63 characters")]
    if not _LABEL_RE.fullmatch(value):
        return [FieldError(field, value, LABEL_MSG)]
    return []


def label_errors(labels: Mapping[str, str] | None, field: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for key, value in (labels or {}).items():
        errors += _label_pair_errors(key, value, field)
    return errors


@lru_cache(maxsize=4096)
def _label_pair_errors(key: str, value: str, field: str) -> tuple[FieldError, ...]:
    errors: list[FieldError] = []
    prefix, _, name = key.rpartition("/")
    if prefix:
        errors += subdomain_errors(prefix, field)
    if not name or len(name) > 63 or not _QUALIFIED_NAME_RE.fullmatch(name):
        errors.append(FieldError(field, key, QUALIFIED_NAME_MSG))
    if len(value) > 63 or not _LABEL_VALUE_RE.fullmatch(value):
        errors.append(FieldError(field, value, LABEL_VALUE_MSG))
    return tuple(errors)


def path_segment_errors(value: str, field: str) -> list[FieldError]:
    """A name that only has to be one URL path segment (RBAC's: `system:discovery` is one)."""
    if value in (".", ".."):
        return [FieldError(field, value, f"may not be '{value}'")]
    return [FieldError(field, value, f"may not contain '{c}'") for c in ("/", "%") if c in value]


# Any: an object's metadata, which the store has set by the time it validates the object
def meta_errors(meta: Any, *, namespace_name: bool = False, path_segment: bool = False) -> list[FieldError]:
    """Name and label checks shared by every kind (namespaces use the stricter label rule, RBAC
    objects the looser path-segment one)."""
    if not meta.name:
        return [FieldError("metadata.name", None, "name or generateName is required", kind="Required value")]
    check = dns_label_errors if namespace_name else path_segment_errors if path_segment else subdomain_errors
    return check(meta.name, "metadata.name") + label_errors(meta.labels, "metadata.labels")


def pod_spec_errors(spec: m.PodSpec) -> list[FieldError]:
    errors: list[FieldError] = []
    if not spec.containers:
        errors.append(FieldError("spec.containers", None, "", kind="Required value"))
    seen: set[str] = set()
    for group, containers in (("initContainers", spec.initContainers), ("containers", spec.containers)):
        for i, c in enumerate(containers or []):
            path = f"spec.{group}[{i}].name"
            if not c.name:
                errors.append(FieldError(path, None, "", kind="Required value"))
            elif c.name in seen:
                errors.append(FieldError(path, c.name, "", kind="Duplicate value"))
            else:
                errors += dns_label_errors(c.name, path)
                seen.add(c.name)
    errors += validate_spec_resources(spec)
    if spec.priority is not None and not isinstance(spec.priority, int):
        errors.append(FieldError("spec.priority", spec.priority, "must be an integer"))
    return errors


def _immutable_spec_view(spec: m.PodSpec) -> m.PodSpec:
    """The pod spec with the fields an update may change blanked out."""

    def strip(cs: list[m.Container] | None) -> list[m.Container] | None:
        return [msgspec.structs.replace(c, image=None) for c in cs] if cs else cs

    return msgspec.structs.replace(
        spec,
        containers=strip(spec.containers),
        initContainers=strip(spec.initContainers),
        activeDeadlineSeconds=None,
        tolerations=None,
        terminationGracePeriodSeconds=None,
        schedulingGates=None,
    )


POD_UPDATE_MSG = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
    "(allow it to be set to 1 if it was previously negative)"
)


def pod_update_errors(old: m.PodSpec, new: m.PodSpec) -> list[FieldError]:
    """What an update may not change in a pod's spec (beyond what a new pod may not hold)."""
    errors: list[FieldError] = []
    if _immutable_spec_view(old) != _immutable_spec_view(new):
        errors.append(FieldError("spec", None, POD_UPDATE_MSG, kind="Forbidden"))
    old_gates = {g.name for g in old.schedulingGates or []}
    new_gates = {g.name for g in new.schedulingGates or []}
    if not new_gates <= old_gates:
        errors.append(
            FieldError(
                "spec.schedulingGates",
                None,
                "only deletion is allowed, but found new scheduling gate",
                kind="Forbidden",
            )
        )
    return errors


def node_errors(node: m.Node) -> list[FieldError]:
    errors = meta_errors(node.metadata)
    status = node.status
    for part in ("capacity", "allocatable"):
        for res, qty in ((getattr(status, part, None) or {}) if status else {}).items():
            field = f"status.{part}[{res}]"
            try:
                if parse_quantity(qty, field=field) < 0:
                    errors.append(FieldError(field, qty, "must be greater than or equal to 0"))
            except FieldError as e:
                errors.append(e)
    return errors


def namespace_errors(ns: m.Namespace) -> list[FieldError]:
    return meta_errors(ns.metadata, namespace_name=True)
