"""The default profile's plugins (v1.36.2), all declared under multiPoint, in upstream's order.

NOT_YET_IMPLEMENTED names default plugins left out until they exist (none now); the golden runner
tolerates their absence.
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
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
)
NOT_YET_IMPLEMENTED: tuple[str, ...] = ()


def default_plugins() -> dict[str, PluginSet]:
    return {"multiPoint": PluginSet(enabled=[Plugin(name=n, weight=w) for n, w in DEFAULT_MULTI_POINT])}
