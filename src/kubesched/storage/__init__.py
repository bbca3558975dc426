"""The in-memory cluster: the store and the in-process `Cluster` backend over it."""

from kubesched.cluster.codec import copy_object
from kubesched.storage.backend import MemoryCluster
from kubesched.storage.store import MemoryStore
from kubesched.storage.watch import MemoryWatch

__all__ = ["MemoryCluster", "MemoryStore", "MemoryWatch", "copy_object"]
