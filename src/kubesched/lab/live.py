"""What the labs run against a live cluster share: the connection from a kubeconfig, and asking
whether pods are bound yet."""

from __future__ import annotations

from lightkube.resources import core_v1

from kubesched.client import ConfigError, KubeCluster
from kubesched.console import options


def connect(kubeconfig: str) -> KubeCluster:
    try:
        return KubeCluster.from_kubeconfig(kubeconfig)
    except (ConfigError, OSError) as e:
        raise options.UsageError(f"--kubeconfig {kubeconfig}: {e}") from None


async def all_bound(cluster: KubeCluster, names: list[str]) -> bool:
    """Whether every pod of `names` (in `default`) has a node."""
    for name in names:
        pod = await cluster.get(core_v1.Pod, name, namespace="default")
        if pod.spec is None or not pod.spec.nodeName:
            return False
    return True
