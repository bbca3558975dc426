"""PodTopologySpread's name, the API values it reads (topology keys, whenUnsatisfiable, inclusion
policies, defaulting types), its arguments with their validation, and the system default constraints."""

from __future__ import annotations

import msgspec
from lightkube.models import meta_v1

from kubesched.api.errors import FORBIDDEN, REQUIRED, FieldError
from kubesched.plugins.resource_scoring import child, label_name_errors, raise_if_any

NAME = "PodTopologySpread"

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"


class DefaultConstraint(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """A v1 TopologySpreadConstraint as given in `defaultConstraints` (its selector must stay unset)."""

    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: meta_v1.LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] | None = None


class PodTopologySpreadArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """PodTopologySpreadArgs (kubescheduler.config.k8s.io/v1). An empty `defaultingType` means System."""

    default_constraints: list[DefaultConstraint] = msgspec.field(default_factory=list)
    defaulting_type: str = ""
    kind: str = ""
    api_version: str = ""

    def validate(self, path: str = "") -> None:
        """Raise `ArgsError` (a ValueError) listing every invalid field, as upstream words them."""
        errors: list[FieldError] = []
        defaulting = self.defaulting_type or SYSTEM_DEFAULTING
        defaulting_path = child(path, "defaultingType")
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errors.append(FieldError.not_supported(defaulting_path, defaulting, (SYSTEM_DEFAULTING, LIST_DEFAULTING)))
        elif defaulting == SYSTEM_DEFAULTING and self.default_constraints:
            errors.append(FieldError(defaulting_path, defaulting, "when .defaultConstraints are not empty"))
        constraints_path = child(path, "defaultConstraints")
        for i, c in enumerate(self.default_constraints):
            p = f"{constraints_path}[{i}]"
            if c.max_skew <= 0:
                errors.append(FieldError(f"{p}.maxSkew", c.max_skew, "not in valid range (0, inf)"))
            if not c.topology_key:
                errors.append(FieldError(f"{p}.topologyKey", None, "can not be empty", kind=REQUIRED))
            else:
                errors += label_name_errors(c.topology_key, f"{p}.topologyKey")
            if not c.when_unsatisfiable:
                errors.append(FieldError(f"{p}.whenUnsatisfiable", None, "can not be empty", kind=REQUIRED))
            elif c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                errors.append(
                    FieldError.not_supported(
                        f"{p}.whenUnsatisfiable", c.when_unsatisfiable, (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
                    )
                )
            if c.label_selector is not None:
                detail = "constraint must not define a selector, as they deduced for each pod"
                errors.append(FieldError(f"{p}.labelSelector", None, detail, kind=FORBIDDEN))
            if any(
                (o.topology_key, o.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable)
                for o in self.default_constraints[:i]
            ):
                value = f"{{{c.topology_key}, {c.when_unsatisfiable}}}"
                errors.append(FieldError(p, value, "", kind="Duplicate value"))
        raise_if_any(errors)


ARGS = PodTopologySpreadArgs

SYSTEM_DEFAULT_CONSTRAINTS = (
    DefaultConstraint(max_skew=3, topology_key=HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    DefaultConstraint(max_skew=5, topology_key=ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)
