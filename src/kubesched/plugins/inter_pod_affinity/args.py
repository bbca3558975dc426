"""InterPodAffinityArgs (kubescheduler.config.k8s.io/v1): defaults and validation."""

from __future__ import annotations

import msgspec

from kubesched.api.errors import FieldError
from kubesched.plugins.resource_scoring import child

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MAX_HARD_POD_AFFINITY_WEIGHT = 100


class InterPodAffinityArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """InterPodAffinityArgs (kubescheduler.config.k8s.io/v1)."""

    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore_preferred_terms_of_existing_pods: bool = False
    kind: str = ""
    api_version: str = ""

    def validate(self, path: str = "") -> None:
        """Raise a FieldError (a ValueError) when hardPodAffinityWeight is outside [0, 100]."""
        weight = self.hard_pod_affinity_weight
        if not 0 <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
            raise FieldError(
                child(path, "hardPodAffinityWeight"), weight, f"not in valid range [0, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
            )


ARGS = InterPodAffinityArgs
