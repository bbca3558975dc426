"""The PodTopologySpread plugin, its filtering, scoring and queueing hints together, and its factory."""

from __future__ import annotations

from typing import Any, ClassVar

from kubesched.plugins.args import decode_args
from kubesched.plugins.pod_topology_spread.args import NAME, PodTopologySpreadArgs
from kubesched.plugins.pod_topology_spread.filtering import Filtering
from kubesched.plugins.pod_topology_spread.hints import QueueingHints
from kubesched.plugins.pod_topology_spread.scoring import Scoring


class PodTopologySpread(Filtering, Scoring, QueueingHints):
    name: ClassVar[str] = NAME


def new(args: Any, handle: Any) -> PodTopologySpread:
    """Build the plugin from its (possibly absent) arguments, validated."""
    decoded = decode_args(args, PodTopologySpreadArgs)
    decoded.validate()
    return PodTopologySpread(decoded, handle)
