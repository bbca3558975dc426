"""kubesched: the Kubernetes scheduler in Python, with the lab it is learned and tested in."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kubesched")
except PackageNotFoundError:  # run from a source tree that is not installed
    __version__ = "0.0.0"

K8S_VERSION = "v1.36.2"  # the Kubernetes release kubesched follows (its kube-scheduler, its API)
