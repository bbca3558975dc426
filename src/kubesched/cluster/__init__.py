"""Cluster access: the `Cluster` protocol, typed API errors, served kinds, and the backends."""

from kubesched.cluster.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    Timeout,
    TooLargeResourceVersion,
    TooManyRequests,
)
from kubesched.cluster.protocol import ADDED, DELETED, MODIFIED, Cluster, ListResult, WatchEvent

__all__ = [
    "ADDED",
    "DELETED",
    "MODIFIED",
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Cluster",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "ListResult",
    "NotFound",
    "Timeout",
    "TooLargeResourceVersion",
    "TooManyRequests",
    "WatchEvent",
]
