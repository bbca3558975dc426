"""The from-scratch scheduler: watch, pick, bind — no assume, no cache."""

from kubesched.minimal.scheduler import NAME, MinimalScheduler

__all__ = ["NAME", "MinimalScheduler"]
