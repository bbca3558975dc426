"""Taint/toleration matching as the scheduler's TaintToleration plugin performs it."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from lightkube.models import core_v1

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"


def tolerates(toleration: core_v1.Toleration, taint: core_v1.Taint) -> bool:
    """Whether ``toleration`` tolerates ``taint`` (upstream ``Toleration.ToleratesTaint``).

    An empty effect or key on the toleration is a wildcard for that part. The operator ``""`` or
    ``Equal`` then compares values, ``Exists`` ignores them, and anything else (including the
    ``Lt``/``Gt`` operators of the alpha TaintTolerationComparisonOperators gate, off by default)
    tolerates nothing. Note that an empty key with ``Equal`` is not rejected here: it tolerates
    any taint whose value equals the toleration's value (API validation forbids that form).
    """
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or ""
    if operator in ("", "Equal"):
        return (toleration.value or "") == (taint.value or "")
    return operator == "Exists"


def find_untolerated_taint(
    taints: Sequence[core_v1.Taint] | None,
    tolerations: Sequence[core_v1.Toleration] | None,
    *,
    effects: Collection[str],
) -> core_v1.Taint | None:
    """The first taint (in node order) with an effect in ``effects`` that no toleration tolerates."""
    for taint in taints or ():
        if taint.effect in effects and not any(tolerates(t, taint) for t in tolerations or ()):
            return taint
    return None
