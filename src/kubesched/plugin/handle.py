"""What a plugin's `Handle` hands out besides the snapshot: informers over the cluster's objects,
the listers the default plugins read (namespaces, PodDisruptionBudgets, the workloads that own
pods), the nominated pods, and the feature gates."""

from kubesched.framework.features import Features
from kubesched.framework.handle import Informer, InformerHandler, Listers, Nominator, Workloads

__all__ = ["Features", "Informer", "InformerHandler", "Listers", "Nominator", "Workloads"]
