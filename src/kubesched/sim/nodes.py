"""Fake nodes made from a template, by count, as KWOK makes them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api import yamlfile
from kubesched.api.quantity import parse_quantity

FAKE_NODE_ANNOTATION = "kubesched.io/fake-node"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
DEFAULT_ZONES = ("zone-a", "zone-b", "zone-c")


@dataclass(frozen=True)
class NodeTemplate:
    """What every fake node made from it has. Quantities are Kubernetes quantity strings."""

    capacity: Mapping[str, str] = field(
        default_factory=lambda: {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    )
    allocatable: Mapping[str, str] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: Sequence[Mapping[str, object]] = ()  # each converted to a Taint
    unschedulable: bool = False
    zones: Sequence[str] = DEFAULT_ZONES

    @classmethod
    # Any: a Node manifest as decoded; its fields are taken as the template's (`from_file` checks the quantities)
    def from_node(cls, node: Mapping[str, Any], *, zones: Sequence[str] = DEFAULT_ZONES) -> NodeTemplate:
        """A template from a Node manifest (`metadata.labels`, `spec.taints`, `status.capacity`...)."""
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        status = node.get("status") or {}
        defaults = cls()
        return cls(
            capacity=status.get("capacity") or defaults.capacity,
            allocatable=status.get("allocatable"),
            labels=meta.get("labels") or {},
            taints=spec.get("taints") or (),
            unschedulable=bool(spec.get("unschedulable")),
            zones=zones,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> NodeTemplate:
        """A template from a Node manifest file; ValueError names the file and what is wrong."""
        doc = yamlfile.load(path)
        if not isinstance(doc, Mapping):
            raise ValueError(f"{path}: a node template must be a Node manifest (a YAML mapping)")
        kind = doc.get("kind", "Node")
        if kind != "Node":
            raise ValueError(f"{path}: kind: a node template must be a Node, not {kind!r}")
        template = cls.from_node(doc)
        for section in ("capacity", "allocatable"):
            resources = getattr(template, section) or {}
            if not isinstance(resources, Mapping):
                raise ValueError(f"{path}: status.{section}: expected a map of resource quantities")
            for name, value in resources.items():
                try:
                    parse_quantity(value, field=f"status.{section}[{name}]")
                except ValueError as e:
                    raise ValueError(f"{path}: {e}") from None
        return template

    def make(self, name: str, index: int) -> core_v1.Node:
        labels = {
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux",
            "type": "kwok",
            **self.labels,
            HOSTNAME_LABEL: name,
        }
        if self.zones:
            labels.setdefault(ZONE_LABEL, self.zones[index % len(self.zones)])
        capacity = {str(k): str(v) for k, v in self.capacity.items()}
        allocatable = {str(k): str(v) for k, v in (self.allocatable or capacity).items()}
        n = index + 1
        return core_v1.Node(
            metadata=meta_v1.ObjectMeta(name=name, labels=labels, annotations={FAKE_NODE_ANNOTATION: "true"}),
            spec=m.NodeSpec(
                podCIDR=f"10.{64 + index // 256}.{index % 256}.0/24",
                taints=[msgspec.convert(t, m.Taint) for t in self.taints] or None,
                unschedulable=self.unschedulable or None,
            ),
            status=m.NodeStatus(
                capacity=capacity,
                allocatable=allocatable,
                addresses=[
                    m.NodeAddress(type="InternalIP", address=f"172.{16 + n // 65536}.{(n // 256) % 256}.{n % 256}"),
                    m.NodeAddress(type="Hostname", address=name),
                ],
                conditions=[
                    m.NodeCondition(
                        type="Ready", status="True", reason="KubeletReady", message="kubelet is posting ready status"
                    )
                ],
                nodeInfo=m.NodeSystemInfo(
                    architecture="amd64",
                    bootID="",
                    containerRuntimeVersion="kubesched://fake",
                    kernelVersion="6.1.0-kubesched",
                    kubeProxyVersion="",
                    kubeletVersion="v1.36.2-kubesched",
                    machineID="",
                    operatingSystem="linux",
                    osImage="kubesched fake node",
                    systemUUID="",
                ),
            ),
        )


def make_nodes(count: int, template: NodeTemplate | None = None, *, prefix: str = "node-") -> list[core_v1.Node]:
    """`count` nodes named `<prefix>0`, `<prefix>1`, ..., zones assigned round-robin."""
    template = template or NodeTemplate()
    return [template.make(f"{prefix}{i}", i) for i in range(count)]
