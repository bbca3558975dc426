"""Pods held at Permit: one timer per plugin that asked to wait; allowed, rejected or timed out."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.cache import PodInfo
    from kubesched.clock import Clock, TimerHandle


def go_duration(seconds: float) -> str:
    """A duration as Go's time.Duration prints it (10s, 1m30s, 500ms, 1h0m0s)."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:g}ms" if ms >= 1 else f"{seconds * 1e6:g}µs"
    total = round(seconds, 9)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:.9f}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{int(hours)}h{int(minutes)}m{text}"
    if minutes:
        return f"{int(minutes)}m{text}"
    return text


class WaitingPod:
    """A pod waiting at Permit. The first rejection, or the last pending plugin's approval, decides."""

    def __init__(self, pod: PodInfo, waits: dict[str, float], clock: Clock) -> None:
        self.pod = pod
        self._pending: dict[str, TimerHandle] = {}
        self._result: asyncio.Future[Status | None] = asyncio.get_running_loop().create_future()
        for plugin, timeout in waits.items():
            message = f"rejected due to timeout after waiting {go_duration(timeout)} at plugin {plugin}"
            self._pending[plugin] = clock.call_later(timeout, self.reject, plugin, message)

    @property
    def pending_plugins(self) -> list[str]:
        return list(self._pending)

    def allow(self, plugin: str) -> None:
        timer = self._pending.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if not self._pending:
            self._finish(None)

    def reject(self, plugin: str, message: str) -> None:
        self._finish(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def preempt(self, plugin: str, message: str) -> None:
        """Rejected because the pod is a preemption victim: an error, not an unschedulable verdict."""
        self._finish(Status(Code.ERROR, message, plugin=plugin))

    def _finish(self, status: Status | None) -> None:
        for timer in self._pending.values():
            timer.cancel()
        self._pending.clear()
        if not self._result.done():
            self._result.set_result(status)

    async def wait(self) -> Status | None:
        return await self._result


class WaitingPods:
    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, pod: WaitingPod) -> None:
        self._pods[pod.pod.uid] = pod

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(self._pods.values()))
