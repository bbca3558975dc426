"""The rarer event resources a plugin may register for: pods not yet scheduled, and any resource."""

from kubesched.framework.events import UNSCHEDULED_POD, WILDCARD

__all__ = ["UNSCHEDULED_POD", "WILDCARD"]
