"""The in-tree plugins, by upstream name."""

from __future__ import annotations

from kubesched.plugin.registry import Registry
from kubesched.plugins import (
    balanced_allocation,
    default_binder,
    default_preemption,
    dynamic_resources,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_declared_features,
    node_name,
    node_ports,
    node_unschedulable,
    noderesources_fit,
    pod_topology_spread,
    priority_sort,
    scheduling_gates,
    taint_toleration,
    volumes,
)


def in_tree_registry() -> Registry:
    registry = Registry()
    registry.register(priority_sort.NAME, priority_sort.new)
    registry.register(scheduling_gates.NAME, scheduling_gates.new)
    registry.register(node_unschedulable.NAME, node_unschedulable.new)
    registry.register(node_name.NAME, node_name.new)
    registry.register(taint_toleration.NAME, taint_toleration.new)
    registry.register(node_affinity.NAME, node_affinity.new, node_affinity.NodeAffinityArgs)
    registry.register(node_ports.NAME, node_ports.new)
    registry.register(noderesources_fit.NAME, noderesources_fit.new, noderesources_fit.Args)
    for name, (factory, args_type) in volumes.PLUGINS.items():
        registry.register(name, factory, args_type)
    registry.register(pod_topology_spread.NAME, pod_topology_spread.new, pod_topology_spread.ARGS)
    registry.register(inter_pod_affinity.NAME, inter_pod_affinity.new, inter_pod_affinity.ARGS)
    registry.register(dynamic_resources.NAME, dynamic_resources.new, dynamic_resources.DynamicResourcesArgs)
    registry.register(default_preemption.NAME, default_preemption.new, default_preemption.Args)
    registry.register(balanced_allocation.NAME, balanced_allocation.new, balanced_allocation.Args)
    registry.register(image_locality.NAME, image_locality.new)
    registry.register(default_binder.NAME, default_binder.new)
    registry.register(node_declared_features.NAME, node_declared_features.new)
    return registry
