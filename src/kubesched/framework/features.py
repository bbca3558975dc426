"""The feature gates that change what the scheduler does, as kube-scheduler's `--feature-gates`
sets them (`Gate=true,Other=false`), with v1.36.2's defaults. Plugins read them from their handle
(`handle.features`), as upstream's plugins receive `feature.Features` in their factories."""

from __future__ import annotations

from dataclasses import dataclass, replace

# gate name -> the field of Features that holds it
GATES = {"SchedulerAsyncPreemption": "async_preemption"}


class FeatureGateError(ValueError):
    """A `--feature-gates` value that names no gate kubesched has, or a value that is not a bool."""


@dataclass(frozen=True)
class Features:
    """`async_preemption`: SchedulerAsyncPreemption (beta, on since 1.33) — victims are removed
    off the scheduling thread while it goes on; off, the scheduling thread takes no other pod
    until they are gone."""

    async_preemption: bool = True

    @classmethod
    def parse(cls, text: str) -> Features:
        """`Gate=bool` pairs separated by commas, over the defaults; FeatureGateError names the
        pair at fault."""
        features = cls()
        for pair in (p.strip() for p in text.split(",")):
            if not pair:
                continue
            name, sep, value = pair.partition("=")
            name, value = name.strip(), value.strip().lower()
            if not sep:
                raise FeatureGateError(f"missing bool value for {name}")
            if name not in GATES:
                raise FeatureGateError(f"unrecognized feature gate: {name} (kubesched has {', '.join(sorted(GATES))})")
            if value not in ("true", "false"):
                raise FeatureGateError(f"invalid value of {name}={value}: want true or false")
            features = replace(features, **{GATES[name]: value == "true"})
        return features
