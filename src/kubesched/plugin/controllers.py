"""What a package's controllers use: the cluster API, its events, the clock (the API's errors are
`kubesched.plugin.cluster`'s).

A package declares controllers under the entry-point group `kubesched.controllers`: the entry's
value names a factory `(cluster, clock) -> controller`, the controller an `async run()` that works
until cancelled. `kubesched cluster up` starts every installed package's controllers beside its API
server; `kubesched controllers --kubeconfig K` runs them against any cluster.
"""

from kubesched.clock import Clock
from kubesched.cluster import Cluster, Gone, WatchEvent
from kubesched.cluster.protocol import ADDED, BOOKMARK, DELETED, MODIFIED

ENTRY_POINT_GROUP = "kubesched.controllers"

__all__ = [
    "ADDED",
    "BOOKMARK",
    "DELETED",
    "ENTRY_POINT_GROUP",
    "MODIFIED",
    "Clock",
    "Cluster",
    "Gone",
    "WatchEvent",
]
