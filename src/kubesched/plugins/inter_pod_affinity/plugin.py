"""The InterPodAffinity plugin, put together from its parts (mixins over `base._Base`), and its factory."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from kubesched.plugin import PreFilterExtensions, PreScorePlugin, decode_args
from kubesched.plugin.batch import FailureSignatures, HintKeys, NormalizeScoreBatch, ScoreBatchPlugin
from kubesched.plugins.inter_pod_affinity.args import InterPodAffinityArgs
from kubesched.plugins.inter_pod_affinity.filtering import _Filtering
from kubesched.plugins.inter_pod_affinity.hints import _Hints
from kubesched.plugins.inter_pod_affinity.names import NAME
from kubesched.plugins.inter_pod_affinity.precompute import _Precompute
from kubesched.plugins.inter_pod_affinity.scoring import _Scoring

if TYPE_CHECKING:
    from kubesched.plugin import Handle


class InterPodAffinity(
    _Precompute,
    _Filtering,
    _Scoring,
    _Hints,
    PreFilterExtensions,
    FailureSignatures,
    PreScorePlugin,
    ScoreBatchPlugin,
    NormalizeScoreBatch,
    HintKeys,
):
    name: ClassVar[str] = NAME


def new(args: object, handle: Handle) -> InterPodAffinity:
    """Build the plugin from its (possibly absent) arguments, defaulted and validated."""
    decoded = decode_args(args, InterPodAffinityArgs)
    decoded.validate()
    return InterPodAffinity(decoded, handle)
