"""PodTopologySpread: keep a pod's matching pods evenly spread over topology domains (zones, nodes...).

A constraint (`topologySpreadConstraints`, or the plugin's default constraints for a pod that has
none) counts, per value of its `topologyKey`, the pods of the pod's namespace that its selector
matches (pods being deleted do not count). Only nodes carrying every constraint's key, and passing
the constraint's node inclusion policies (`nodeAffinityPolicy` Honor by default: the pod's
nodeSelector and required node affinity; `nodeTaintsPolicy` Ignore by default: Honor leaves out
nodes with a NoSchedule/NoExecute taint the pod does not tolerate), make up the domains.
`matchLabelKeys` adds `key In (the pod's value)` to the selector for each key the pod has. As
upstream, an empty `labelSelector` counts no pod, yet the pod matches it itself and AddPod counts
the pods it matches.

Filter (DoNotSchedule constraints): a node without a constraint's key is UnschedulableAndUnresolvable
(`... (missing required label)`); otherwise the node fails (Unschedulable) when the count of its
domain, plus one if the pod matches its own selector, minus the global minimum exceeds `maxSkew`.
The global minimum is the smallest domain count, or 0 when there are fewer domains than
`minDomains`. PreFilter returns Skip when the pod has no such constraint; AddPod/RemovePod move one
pod in or out of the counts (nominated pods, preemption).

Score (ScheduleAnyway constraints): a node's raw score sums, per constraint whose key it has,
`count * ln(domains + 2) + maxSkew - 1` (hostname constraints count the pods on the node itself, and
their `domains` is the number of scored nodes), rounded; NormalizeScore maps the fewest matching
pods to 100. Nodes missing a key are ignored (score 0) unless the constraints are the system
defaults. PreScore returns Skip when the pod has no such constraint.

Default constraints (`defaultingType: System`: hostname maxSkew 3 and zone maxSkew 5, both
ScheduleAnyway) take their selector from the Services, ReplicationControllers, ReplicaSets and
StatefulSets selecting the pod, read through the handle's `listers.workloads` (informers the plugin asks for);
with none, or none selecting the pod, the selector is empty and the defaults are skipped, as
upstream skips them for a pod no such object selects.

Batch methods read the NodeTable: each node's topology domain as an integer id (a memo column per
topology key), the matching-pod count of each node per (namespace, selector) (a memo column, so
counts follow pod changes incrementally across cycles), and the inclusion policies (memo columns
per node constraints / tolerations); domain counts are `np.bincount`s. PreFilter and PreScore use
the table whenever the nodes they are given are rows of it.

QueueingHints (v1.36.2, queueing hints on): an assigned pod of the namespace added, deleted or
relabelled so that it (no longer) matches a hard constraint's selector, the pod's own tolerations
changing while a hard constraint honours taints; a node added or deleted carrying every hard
constraint's key, or updated in those keys' presence, their values, or its taints.
"""

from kubesched.plugins.pod_topology_spread.args import (
    ARGS,
    NAME,
    SYSTEM_DEFAULT_CONSTRAINTS,
    DefaultConstraint,
    PodTopologySpreadArgs,
)
from kubesched.plugins.pod_topology_spread.constraints import default_selector, is_empty
from kubesched.plugins.pod_topology_spread.go_math import go_log, go_round
from kubesched.plugins.pod_topology_spread.plugin import PodTopologySpread, new
from kubesched.plugins.pod_topology_spread.state import PRE_FILTER_STATE_KEY

__all__ = [
    "ARGS",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "DefaultConstraint",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "default_selector",
    "go_log",
    "go_round",
    "is_empty",
    "new",
]
