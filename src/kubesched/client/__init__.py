"""The `Cluster` protocol over HTTP against a real (or `kubesched cluster up`) API server."""

from kubesched.client.backend import KubeCluster
from kubesched.client.config import ClientConfig, ConfigError
from kubesched.client.errors import ConnectionFailed, NotServed, ServiceUnavailable
from kubesched.client.ratelimit import TokenBucket
from kubesched.client.watch import KubeWatch

__all__ = [
    "ClientConfig",
    "ConfigError",
    "ConnectionFailed",
    "KubeCluster",
    "KubeWatch",
    "NotServed",
    "ServiceUnavailable",
    "TokenBucket",
]
