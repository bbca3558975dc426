"""The scheduler: informers, the scheduling and binding cycles, profiles."""

from kubesched.scheduler.scheduler import Scheduler

__all__ = ["Scheduler"]
