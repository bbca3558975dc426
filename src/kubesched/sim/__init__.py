"""Simulated cluster parts: fake nodes made from a template and their fake kubelets."""

from kubesched.sim.kubelet import FakeKubelets, KubeletConfig
from kubesched.sim.nodes import FAKE_NODE_ANNOTATION, NodeTemplate, make_nodes

__all__ = [
    "FAKE_NODE_ANNOTATION",
    "FakeKubelets",
    "KubeletConfig",
    "NodeTemplate",
    "make_nodes",
]
