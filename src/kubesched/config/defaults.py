"""The default profile's plugins (v1.36.2), all declared under multiPoint, in upstream's order.

PodTopologySpread, InterPodAffinity and DefaultPreemption are not implemented yet; they are left
out of the defaults until they are (docs/deviations.md).
"""

from __future__ import annotations

from kubesched.config.types import Plugin, PluginSet

DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("DynamicResources", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
)
NOT_YET_IMPLEMENTED = ("PodTopologySpread", "InterPodAffinity", "DefaultPreemption")


def default_plugins() -> dict[str, PluginSet]:
    return {"multiPoint": PluginSet(enabled=[Plugin(name=n, weight=w) for n, w in DEFAULT_MULTI_POINT])}
