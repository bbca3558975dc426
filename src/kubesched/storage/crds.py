"""CustomResourceDefinitions as the store accepts them: the checks on a new CRD, and the status an
API server gives one it serves (NamesAccepted, Established)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from lightkube.models import apiextensions_v1 as ax

from kubesched.api.errors import REQUIRED, FieldError
from kubesched.api.objects import meta_of, present
from kubesched.cluster.kinds import Kind

SCOPES = ("Cluster", "Namespaced")


def crd_errors(crd: ax.CustomResourceDefinition, served: Mapping[tuple[str, str, str], Kind]) -> list[FieldError]:
    """What keeps a CRD from being served: missing names, a name other than `<plural>.<group>`, no
    version or not exactly one storage version, an unknown scope, a kind another CRD serves."""
    spec = crd.spec
    errors: list[FieldError] = []
    if spec is None:
        return [FieldError("spec", None, "", kind=REQUIRED)]
    names = spec.names
    if not spec.group:
        errors.append(FieldError("spec.group", None, "", kind=REQUIRED))
    if names is None or not names.plural:
        errors.append(FieldError("spec.names.plural", None, "", kind=REQUIRED))
    if names is None or not names.kind:
        errors.append(FieldError("spec.names.kind", None, "", kind=REQUIRED))
    if spec.scope not in SCOPES:
        errors.append(FieldError.not_supported("spec.scope", spec.scope, SCOPES))
    if not spec.versions or sum(1 for v in spec.versions if v.storage) != 1:
        errors.append(FieldError("spec.versions", None, "must have exactly one version marked as storage version"))
    if errors:
        return errors
    expected = f"{names.plural}.{spec.group}"
    name = meta_of(crd).name
    if name != expected:
        errors.append(FieldError("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    for v in spec.versions:
        owner = served.get((spec.group, v.name, names.kind))
        if owner is not None and owner.qualified != name:  # the same CRD again is AlreadyExists
            errors.append(FieldError("spec.names.kind", names.kind, "is already in use"))
    return errors


def established(crd: ax.CustomResourceDefinition, now: datetime) -> ax.CustomResourceDefinitionStatus:
    spec = present(crd.spec, "the CustomResourceDefinition's spec")
    names = spec.names
    accepted = ax.CustomResourceDefinitionNames(
        kind=names.kind,
        plural=names.plural,
        singular=names.singular or names.kind.lower(),
        shortNames=names.shortNames,
        categories=names.categories,
        listKind=names.listKind or f"{names.kind}List",
    )
    conditions = [
        ax.CustomResourceDefinitionCondition(
            type="NamesAccepted",
            status="True",
            reason="NoConflicts",
            message="no conflicts found",
            lastTransitionTime=now,
        ),
        ax.CustomResourceDefinitionCondition(
            type="Established",
            status="True",
            reason="InitialNamesAccepted",
            message="the initial names have been accepted",
            lastTransitionTime=now,
        ),
    ]
    storage = next(v.name for v in spec.versions if v.storage)
    return ax.CustomResourceDefinitionStatus(acceptedNames=accepted, conditions=conditions, storedVersions=[storage])
