"""ImageLocality: prefer nodes that already hold the pod's container images.

Every image of the pod's init containers, containers and image volumes found on the node adds
its size, scaled by the share of all nodes that have it (so an image present everywhere counts
fully, one on a single node of many barely counts: this keeps pods from piling onto the one
node that happens to have an image). The sum is clamped to [23 MiB, 1000 MiB per container] and
mapped linearly onto [0, 100]. Pod image names without a tag are looked up with `:latest`.
There is no NormalizeScore and no Filter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lightkube.models import core_v1

from kubesched.plugin import CycleState, Handle, NodeInfo, PodInfo
from kubesched.plugin.batch import Int, ScoreBatchPlugin, score_per_node
from kubesched.plugin.resources import ImageState, normalized_image_name
from kubesched.plugins.resource_scoring import MAX_NODE_SCORE

if TYPE_CHECKING:
    from kubesched.plugin.batch import NodeTable

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB  # below this, images are too small to matter
MAX_CONTAINER_THRESHOLD = 1000 * MB  # per container, above this it matters no more


def pod_images(spec: core_v1.PodSpec) -> list[str]:
    """The images a pod needs, in upstream's order: init containers, containers, image volumes."""
    images = [c.image or "" for c in (*(spec.initContainers or ()), *(spec.containers or ()))]
    images += [v.image.reference or "" for v in (spec.volumes or ()) if v.image is not None]
    return images


def scaled_image_score(state: ImageState, total_nodes: int) -> int:
    """The image's size times the share of nodes that have it (float, truncated, as upstream)."""
    spread = float(state.num_nodes) / float(total_nodes)
    return int(float(state.size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Map the summed image sizes onto [0, 100] between 23 MiB and 1000 MiB per container."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = max(MIN_THRESHOLD, min(sum_scores, max_threshold))
    if max_threshold <= MIN_THRESHOLD:  # no containers: nothing to score (upstream would divide by a negative)
        return 0
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(ScoreBatchPlugin):
    name: ClassVar[str] = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        total_nodes = len(self.handle.snapshot.node_info_list)
        if total_nodes == 0:
            return 0
        spec = pod.pod.spec
        total = 0
        for image in pod_images(spec):
            image_state = node.image_states.get(normalized_image_name(image))
            if image_state is not None:
                total += scaled_image_score(image_state, total_nodes)
        return calculate_priority(total, len(spec.initContainers or ()) + len(spec.containers or ()))

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int) -> Int:
        # A node without images sums to 0, which the clamp raises to the low threshold: score 0.
        return score_per_node(self.score, state, pod, table, rows, flag="images")


def new(args: None, handle: Handle) -> ImageLocality:
    """ImageLocality takes no arguments."""
    return ImageLocality(handle)
