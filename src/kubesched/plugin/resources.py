"""Resources as plugins count them: a node's or a pod's `Resource` (CPU in milli-CPU, the rest in
units), the names of the built-in ones, images on nodes, and host ports."""

from kubesched.cache import ImageState, Resource, normalized_image_name
from kubesched.cache.podinfo import HostPort, host_ports
from kubesched.cache.resource import CPU, EPHEMERAL_STORAGE, MEMORY, PODS

__all__ = [
    "CPU",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "HostPort",
    "ImageState",
    "Resource",
    "host_ports",
    "normalized_image_name",
]
