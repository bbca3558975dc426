"""The base of the plugin: its handle, its default constraints and topology domain ids, and the
pod's constraints (its own, or the default ones)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from kubesched.plugin import Handle
from kubesched.plugin.handle import Workloads
from kubesched.plugins.pod_topology_spread.args import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
)
from kubesched.plugins.pod_topology_spread.constraints import (
    Constraint,
    default_selector,
    is_empty,
    parse_constraints,
)


class SpreadBase:
    """What the other parts of the plugin build on: its handle, default constraints and domain ids."""

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle) -> None:
        self.handle = handle
        self.system_defaulted = (args.defaulting_type or SYSTEM_DEFAULTING) == SYSTEM_DEFAULTING
        self.default_constraints = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else tuple(args.default_constraints)
        )
        self._domain_ids: dict[str, dict[str, int]] = {}  # topology key -> value -> domain id
        self._token = object()  # names this plugin's domain ids in NodeTable memo keys
        self._hint_constraints: dict[Hashable, list[Constraint] | ValueError] = {}
        # Services and controllers, watched only when some default constraint may need them.
        self._lister: Workloads | None = handle.listers.workloads if self.default_constraints else None

    # -- constraints ------------------------------------------------------------------------------------

    @property
    def _workloads(self) -> Workloads | None:
        """The Services and controllers, when there are any: none, no default selector."""
        lister = self._lister
        return lister if lister is not None and not lister.empty() else None

    # Any: a pod as served (metadata and spec set), read without checks on the per-pod path
    def constraints(self, pod: Any, action: str) -> list[Constraint]:
        """The pod's constraints for `action`, or the default ones when it has none; ValueError
        (with upstream's wording) when a selector does not parse."""
        own = pod.spec.topologySpreadConstraints
        kind = "hard" if action == DO_NOT_SCHEDULE else "soft"
        if own:
            try:
                return parse_constraints(own, pod.metadata.labels, action)
            except ValueError as err:
                raise ValueError(f"obtaining pod's {kind} topology spread constraints: {err}") from None
        defaults = [c for c in self.default_constraints if c.when_unsatisfiable == action]
        workloads = self._workloads
        if not defaults or workloads is None:
            return []
        selector = default_selector(pod, workloads)
        if is_empty(selector):
            return []
        return [
            Constraint(
                c.max_skew,
                c.topology_key,
                selector,
                1 if c.min_domains is None else c.min_domains,
                c.node_affinity_policy or HONOR,
                c.node_taints_policy or IGNORE,
            )
            for c in defaults
        ]

    def _ids(self, key: str) -> dict[str, int]:
        ids = self._domain_ids.get(key)
        if ids is None:
            ids = self._domain_ids[key] = {}
        return ids
