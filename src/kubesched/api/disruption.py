"""PodDisruptionBudget arithmetic: how many of a budget's pods may be disrupted right now."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NamedTuple

from lightkube.models import core_v1, policy_v1

from kubesched.api.objects import present
from kubesched.api.selectors import compile_label_selector


class Budget(NamedTuple):
    expected: int  # pods the budget covers
    current_healthy: int  # of those, Ready and not being deleted
    desired_healthy: int  # healthy pods the budget requires
    disruptions_allowed: int


def _is_healthy(pod: Any) -> bool:  # Any: a served pod (its metadata is set), read unchecked per pod
    if pod.metadata.deletionTimestamp is not None or pod.status is None:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def _scaled(value: int | str, total: int) -> int:
    """An int-or-percent against `total`, percentages rounded up as the disruption controller does."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


# Any: a served budget and pod (their metadata is set), read unchecked per pod
def covers(pdb: Any, pod: Any) -> bool:
    """Whether the budget's selector selects the pod (an empty selector selects every pod)."""
    if pdb.metadata.namespace != pod.metadata.namespace:
        return False
    return compile_label_selector(pdb.spec.selector if pdb.spec else None).matches(pod.metadata.labels or {})


def budget(pdb: policy_v1.PodDisruptionBudget, pods: Iterable[core_v1.Pod]) -> Budget:
    """The budget's state given all pods of its namespace, counted as the disruption controller
    counts them (expected = the pods the selector matches)."""
    matched = [
        p for p in pods if covers(pdb, p) and (p.status is None or p.status.phase not in ("Succeeded", "Failed"))
    ]
    expected = len(matched)
    healthy = sum(1 for p in matched if _is_healthy(p))
    spec = present(pdb.spec, "the budget's spec")
    if spec.maxUnavailable is not None:
        desired = max(0, expected - _scaled(spec.maxUnavailable, expected))
    elif spec.minAvailable is not None:
        desired = _scaled(spec.minAvailable, expected)
    else:
        desired = expected  # no field: nothing may be disrupted
    return Budget(expected, healthy, desired, max(0, healthy - desired))
