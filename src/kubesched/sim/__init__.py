"""Simulated cluster parts: fake nodes made from a template, their fake kubelets, and a
disruption controller keeping PodDisruptionBudget statuses current."""

from kubesched.sim.disruption import DisruptionController
from kubesched.sim.kubelet import FakeKubelets, KubeletConfig
from kubesched.sim.nodes import FAKE_NODE_ANNOTATION, NodeTemplate, make_nodes

__all__ = [
    "FAKE_NODE_ANNOTATION",
    "DisruptionController",
    "FakeKubelets",
    "KubeletConfig",
    "NodeTemplate",
    "make_nodes",
]
