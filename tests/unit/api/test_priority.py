from typing import Any

import pytest
from lightkube.models import core_v1

from kubesched.api import (
    DEFAULT_PRIORITY,
    HIGHEST_USER_DEFINABLE_PRIORITY,
    SYSTEM_CRITICAL_PRIORITY,
    pod_priority,
    preemption_policy,
)


def pod(**spec: Any) -> core_v1.Pod:
    return core_v1.Pod.from_dict({"spec": {"containers": [{"name": "c"}], **spec}})


@pytest.mark.parametrize(
    ("spec", "expected"),
    [({}, 0), ({"priority": 0}, 0), ({"priority": 1000}, 1000), ({"priority": -5}, -5)],
)
def test_pod_priority(spec: dict[str, Any], expected: int) -> None:
    assert pod_priority(pod(**spec)) == expected


def test_pod_priority_without_spec() -> None:
    assert pod_priority(core_v1.Pod()) == DEFAULT_PRIORITY


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, "PreemptLowerPriority"),
        ({"preemptionPolicy": "Never"}, "Never"),
        ({"preemptionPolicy": "PreemptLowerPriority"}, "PreemptLowerPriority"),
    ],
)
def test_preemption_policy(spec: dict[str, Any], expected: str) -> None:
    assert preemption_policy(pod(**spec)) == expected


def test_constants() -> None:
    assert (DEFAULT_PRIORITY, HIGHEST_USER_DEFINABLE_PRIORITY, SYSTEM_CRITICAL_PRIORITY) == (
        0,
        1_000_000_000,
        2_000_000_000,
    )
