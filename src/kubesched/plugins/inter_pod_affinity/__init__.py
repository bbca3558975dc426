"""InterPodAffinity: required pod affinity and anti-affinity (Filter), preferred ones (Score).

Terms and domains. A term selects pods by namespace (its `namespaces`, else the owner pod's own
namespace unless a `namespaceSelector` is set; the selector adds the namespaces whose labels it
matches) and by label selector; its topology key groups nodes into domains, one per label value.

PreFilter counts, per domain: the existing pods whose required anti-affinity terms match the
incoming pod (matched with the incoming pod's namespace labels), the pods matching all of the
incoming pod's required affinity terms, and the pods matching each of its required anti-affinity
terms. Filter rejects a node that lacks a topology key of the affinity terms or whose domain holds
no matching pod (UnschedulableAndUnresolvable; unless no pod anywhere matches and the pod matches its
own terms, the first pod of a group), a node whose anti-affinity domain holds a matching pod, and a
node in a domain an existing pod's anti-affinity forbids (both Unschedulable). Skip when the pod has
no required terms and no existing pod's anti-affinity matches it. AddPod/RemovePod update the counts.

PreScore sums, per domain, the weights of the incoming pod's preferred terms matched by existing
pods (negative for anti-affinity), of existing pods' preferred terms the incoming pod matches, and
`hardPodAffinityWeight` per existing pod's required affinity term it matches. A node scores the sum
over its domains, normalized min-max to 0-100. Skip when nothing matched (or, with
`ignorePreferredTermsOfExistingPods`, when the pod has no preferred terms).

Large clusters are answered from NodeTable memo columns: per node, its domain id for a topology key,
the number of pods matching a term of the incoming pod, and an id of the multiset of (anti-)affinity
terms its pods carry; the per-domain sums are then bincounts. Small ones are walked pod by pod.

QueueingHints (v1.36.2): a bound or nominated pod added that matches all the pod's affinity terms;
updated to match them, or to stop matching all its anti-affinity terms; deleted while matching all
its anti-affinity terms, or whose own anti-affinity terms all match the pod; the pod's own labels
changed. A node added with an affinity topology key (any node if the pod has anti-affinity terms),
or relabelled so that an affinity key appears or changes value, or an anti-affinity key disappears
or changes value. The hints read the pod through its namespace, labels and required terms only.

Kept from v1.36.2: the incoming pod's namespaceSelector stays in its terms besides the namespaces it
resolved to, so a selector that matches empty labels (NotIn, DoesNotExist) matches pods of every
namespace (fixed upstream after 1.36.2, kubernetes#141526). Deviation: `matchLabelKeys` and
`mismatchLabelKeys` are merged into the label selector here; upstream the API server merges them
when the pod is created (a later label change is not reflected there).
"""

from kubesched.plugins.inter_pod_affinity.args import ARGS, InterPodAffinityArgs
from kubesched.plugins.inter_pod_affinity.filtering import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
)
from kubesched.plugins.inter_pod_affinity.names import NAME
from kubesched.plugins.inter_pod_affinity.plugin import InterPodAffinity, new

__all__ = [
    "ARGS",
    "ERR_REASON_AFFINITY",
    "ERR_REASON_ANTI_AFFINITY",
    "ERR_REASON_EXISTING_ANTI_AFFINITY",
    "NAME",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "new",
]
