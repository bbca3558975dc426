"""The scheduling queue."""

from kubesched.framework.queued import QueuedPodInfo
from kubesched.queue.hints import QueueProfile
from kubesched.queue.nominator import Nominator
from kubesched.queue.scheduling_queue import PendingPod, SchedulingQueue

__all__ = ["Nominator", "PendingPod", "QueueProfile", "QueuedPodInfo", "SchedulingQueue"]
