"""The scheduler cache: NodeInfo and PodInfo, assume/forget, and the per-cycle snapshot."""

from kubesched.cache.cache import Cache, CacheError
from kubesched.cache.nodeinfo import ImageState, NodeInfo, normalized_image_name
from kubesched.cache.podinfo import PodInfo
from kubesched.cache.resource import Resource
from kubesched.cache.snapshot import Snapshot

__all__ = ["Cache", "CacheError", "ImageState", "NodeInfo", "PodInfo", "Resource", "Snapshot", "normalized_image_name"]
