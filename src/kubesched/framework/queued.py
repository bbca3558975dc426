"""`QueuedPodInfo`: a pod in the scheduling queue, with its attempt bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.cache import PodInfo


@dataclass(eq=False)
class QueuedPodInfo:
    """`timestamp` is when the pod was (re)queued; `initial_attempt` when it first entered activeQ.
    `unschedulable_plugins`/`pending_plugins` are the plugins that rejected its last attempt;
    `gating_plugin` is the PreEnqueue plugin holding it back, if any."""

    pod_info: PodInfo
    timestamp: float
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors: int = 0
    initial_attempt: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    backoff_expiry: float | None = None
    attempt_started: float = 0.0  # when its current scheduling attempt began

    @property
    def uid(self) -> str:
        return self.pod_info.uid

    @property
    def key(self) -> str:
        return self.pod_info.key

    @property
    def priority(self) -> int:
        return self.pod_info.priority

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)
