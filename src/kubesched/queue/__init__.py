"""The scheduling queue."""

from kubesched.framework.queued import QueuedPodInfo
from kubesched.queue.scheduling_queue import QueueProfile, SchedulingQueue

__all__ = ["QueueProfile", "QueuedPodInfo", "SchedulingQueue"]
