"""Injected time: every timer, timestamp and sleep in kubesched goes through a `Clock`."""

from kubesched.clock.base import Clock, TimerHandle
from kubesched.clock.real import RealClock
from kubesched.clock.virtual import DEFAULT_EPOCH, VirtualClock

__all__ = ["DEFAULT_EPOCH", "Clock", "RealClock", "TimerHandle", "VirtualClock"]
