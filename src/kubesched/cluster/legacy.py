"""API versions kube-apiserver v1.36 no longer serves, kept for the clients of their day:
policy/v1beta1 PodDisruptionBudgets (removed in 1.25), which kube-scheduler up to 1.20 lists and
watches before it schedules anything. They are views of the policy/v1 objects, converted as
upstream converted them: v1beta1's empty selector selects no pod where v1's selects every pod, so
each side's meaning is carried across by a selector on a label no pod has."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import msgspec
from lightkube.core import resource as res
from lightkube.models import meta_v1
from lightkube.models import policy_v1 as policy
from lightkube.resources import policy_v1

from kubesched.cluster.codec import decoder, encode

P = TypeVar("P", bound=policy.PodDisruptionBudget)

V1BETA1_SELECTOR_LABEL = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"
_V1BETA1 = "policy/v1beta1"


def _on_label(operator: str) -> meta_v1.LabelSelector:
    requirement = meta_v1.LabelSelectorRequirement(key=V1BETA1_SELECTOR_LABEL, operator=operator)
    return meta_v1.LabelSelector(matchExpressions=[requirement])


MATCH_NONE_IN_V1 = _on_label("Exists")  # what v1beta1's empty selector is in v1
MATCH_ALL_IN_V1BETA1 = _on_label("DoesNotExist")  # what v1's empty selector is in v1beta1
_EMPTY = meta_v1.LabelSelector()


class PodDisruptionBudgetV1beta1(policy_v1.PodDisruptionBudget):
    """A policy/v1beta1 PodDisruptionBudget: the v1 fields, the v1beta1 API version."""

    _api_info = res.ApiInfo(
        resource=res.ResourceDef("policy", "v1beta1", "PodDisruptionBudget"),
        plural="poddisruptionbudgets",
        verbs=list(policy_v1.PodDisruptionBudget._api_info.verbs),
    )
    Status: ClassVar[Any] = None  # Any: no status subresource class, where the v1 class names one

    def __post_init__(self) -> None:
        self.apiVersion = _V1BETA1
        self.kind = "PodDisruptionBudget"


_to_v1: Callable[[bytes], policy_v1.PodDisruptionBudget] = decoder(policy_v1.PodDisruptionBudget).decode
_to_v1beta1: Callable[[bytes], PodDisruptionBudgetV1beta1] = decoder(PodDisruptionBudgetV1beta1).decode


def _swapped(obj: P, swaps: tuple[tuple[meta_v1.LabelSelector, meta_v1.LabelSelector], ...]) -> P:
    spec = obj.spec
    if spec is None:
        return obj
    for found, replacement in swaps:
        if spec.selector == found:
            return msgspec.structs.replace(obj, spec=msgspec.structs.replace(spec, selector=replacement))
    return obj


def pdb_to_v1(obj: object) -> policy_v1.PodDisruptionBudget:
    return _swapped(_to_v1(encode(obj)), ((_EMPTY, MATCH_NONE_IN_V1), (MATCH_ALL_IN_V1BETA1, _EMPTY)))


def pdb_from_v1(obj: object) -> PodDisruptionBudgetV1beta1:
    return _swapped(_to_v1beta1(encode(obj)), ((_EMPTY, MATCH_ALL_IN_V1BETA1), (MATCH_NONE_IN_V1, _EMPTY)))


# Protobuf messages of legacy versions that are, field for field, a served version's.
PROTOBUF_SAME_AS: dict[tuple[str, str], str] = {(_V1BETA1, "PodDisruptionBudget"): "policy/v1"}
