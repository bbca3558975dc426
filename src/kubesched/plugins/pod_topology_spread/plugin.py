"""The PodTopologySpread plugin, its filtering, scoring and queueing hints together, and its factory."""

from __future__ import annotations

from typing import ClassVar

from kubesched.plugin import Handle, PreFilterExtensions, PreScorePlugin, decode_args
from kubesched.plugin.batch import FailureSignatures, HintKeys, NormalizeScoreBatch, ScoreBatchPlugin
from kubesched.plugins.pod_topology_spread.args import NAME, PodTopologySpreadArgs
from kubesched.plugins.pod_topology_spread.filtering import Filtering
from kubesched.plugins.pod_topology_spread.hints import QueueingHints
from kubesched.plugins.pod_topology_spread.scoring import Scoring


class PodTopologySpread(
    Filtering,
    Scoring,
    QueueingHints,
    PreFilterExtensions,
    FailureSignatures,
    PreScorePlugin,
    ScoreBatchPlugin,
    NormalizeScoreBatch,
    HintKeys,
):
    name: ClassVar[str] = NAME


def new(args: object, handle: Handle) -> PodTopologySpread:
    """Build the plugin from its (possibly absent) arguments, validated."""
    decoded = decode_args(args, PodTopologySpreadArgs)
    decoded.validate()
    return PodTopologySpread(decoded, handle)
