"""The built-in controllers the embedded cluster runs, as kube-controller-manager's: ReplicaSet,
Deployment, Job, DaemonSet, StatefulSet, namespace, garbage collector, disruption; their shared
informers and work queues."""

from kubesched.controllers.disruption import DisruptionController
from kubesched.controllers.manager import CONTROLLERS, ControllerManager, parse_controllers

__all__ = ["CONTROLLERS", "ControllerManager", "DisruptionController", "parse_controllers"]
