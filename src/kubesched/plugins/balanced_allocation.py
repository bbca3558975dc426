"""NodeResourcesBalancedAllocation: prefer nodes whose resource usage stays even across resources.

For each configured resource the node offers, the used fraction is `requested / allocatable`
(capped at 1), counting only actual requests (no 100m / 200Mi defaults). The balance of a set of
fractions is `int((1 - std) * 100)`; the score compares the node's balance with the pod on it and
without: `50 + (50 + with - without) / 2` (integer), so 75 means "no change", above 75 "the pod
evens the node out". Best-effort pods (no request for any configured resource) are not scored:
PreScore returns Skip, so they do not all pile onto the same node. There is no NormalizeScore.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import msgspec

from kubesched.api.errors import FieldError
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import SKIP, Status
from kubesched.plugins.resource_scoring import (
    MAX_NODE_SCORE,
    ResourceSpec,
    balance,
    child,
    defaulted_resources,
    go_div,
    node_amounts,
    pod_request,
    raise_if_any,
)

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


class Args(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """NodeResourcesBalancedAllocationArgs (kubescheduler.config.k8s.io/v1)."""

    resources: list[ResourceSpec] = msgspec.field(default_factory=list)
    kind: str = ""
    api_version: str = ""

    def defaulted(self) -> Args:
        """A copy with upstream's v1 defaults: cpu and memory when empty, weight 0 → 1."""
        return msgspec.structs.replace(self, resources=defaulted_resources(self.resources))

    def validate(self, path: str = "") -> None:
        """Raise `ArgsError` (a ValueError): names must be unique and every weight must be 1."""
        errors: list[FieldError] = []
        seen: set[str] = set()
        for i, r in enumerate(self.resources):
            field = f"{child(path, 'resources')}[{i}]"
            if r.name in seen:
                errors.append(FieldError(f"{field}.name", r.name, "", kind="Duplicate value"))
            seen.add(r.name)
            if r.weight != 1:
                errors.append(FieldError(f"{field}.weight", r.weight, "must be 1"))
        raise_if_any(errors)


@dataclass(frozen=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]  # in the order of the configured resources

    def clone(self) -> _PreScoreState:
        return self


class NodeResourcesBalancedAllocation:
    name: ClassVar[str] = NAME

    def __init__(self, args: Args, handle: Any) -> None:
        self.handle = handle
        self.resources = [r.name for r in (args.resources or defaulted_resources([]))]

    def _pod_requests(self, pod: PodInfo) -> tuple[int, ...]:
        return tuple(pod_request(pod, name, non_zero=False) for name in self.resources)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self._pod_requests(pod)
        if not any(requests):
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        pre = state.get(PRE_SCORE_STATE_KEY)
        requests = pre.pod_requests if isinstance(pre, _PreScoreState) else self._pod_requests(pod)
        if not any(requests):
            return 0
        with_pod: list[float] = []
        without_pod: list[float] = []
        for name, want in zip(self.resources, requests, strict=True):
            amounts = node_amounts(node, name, want, non_zero=False)
            if amounts is None:
                continue
            allocatable, used = amounts
            with_pod.append(min(1.0, float(used + want) / float(allocatable)))
            without_pod.append(min(1.0, float(used) / float(allocatable)))
        half = MAX_NODE_SCORE // 2
        return half + go_div(half + balance(with_pod) - balance(without_pod), 2)


def new(args: Args | None, handle: Any) -> NodeResourcesBalancedAllocation:
    """Build the plugin from its (possibly absent) arguments, defaulted and validated."""
    full = (args or Args()).defaulted()
    full.validate()
    return NodeResourcesBalancedAllocation(full, handle)
