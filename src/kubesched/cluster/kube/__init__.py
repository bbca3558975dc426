"""The `Cluster` protocol over HTTP against a real (or `kubesched cluster up`) API server."""

from kubesched.cluster.kube.client import KubeCluster
from kubesched.cluster.kube.config import ClientConfig, ConfigError
from kubesched.cluster.kube.errors import ConnectionFailed, NotServed, ServiceUnavailable
from kubesched.cluster.kube.ratelimit import TokenBucket
from kubesched.cluster.kube.watch import KubeWatch

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
