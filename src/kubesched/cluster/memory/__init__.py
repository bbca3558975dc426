"""The in-memory cluster: the store and the in-process `Cluster` backend over it."""

from kubesched.cluster.codec import copy_object
from kubesched.cluster.memory.backend import MemoryCluster
from kubesched.cluster.memory.store import MemoryStore
from kubesched.cluster.memory.watch import MemoryWatch

__all__ = ["MemoryCluster", "MemoryStore", "MemoryWatch", "copy_object"]
