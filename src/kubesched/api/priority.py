"""Pod priority and preemption policy as the scheduler reads them."""

from __future__ import annotations

from lightkube.models import core_v1

DEFAULT_PRIORITY = 0
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"


def pod_priority(pod: core_v1.Pod) -> int:
    """``spec.priority``, or 0 when unset (a pod created before any default priority class)."""
    priority = pod.spec.priority if pod.spec else None
    return DEFAULT_PRIORITY if priority is None else priority


def preemption_policy(pod: core_v1.Pod) -> str:
    """``spec.preemptionPolicy``, defaulting to ``PreemptLowerPriority``."""
    policy = pod.spec.preemptionPolicy if pod.spec else None
    return policy or PREEMPT_LOWER_PRIORITY
