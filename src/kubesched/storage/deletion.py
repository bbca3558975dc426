"""What a delete makes of an object: gone at once, or left being deleted (a grace period, a
finalizer, the finalizer its propagation policy asks of the garbage collector) until it may go."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import msgspec

from kubesched.storage.strategy import Strategy

FOREGROUND_FINALIZER = "foregroundDeletion"  # the garbage collector's, for the two policies it enacts
ORPHAN_FINALIZER = "orphan"
PROPAGATION_POLICIES = (None, "Background", "Foreground", "Orphan")


def propagation_finalizers(finalizers: list[str] | None, policy: str | None) -> list[str] | None:
    """An object's finalizers once a delete with `policy` asks the garbage collector for its own
    (Foreground and Orphan exclude each other; Background asks for neither)."""
    if policy not in ("Foreground", "Orphan"):
        return finalizers or None
    wanted, other = (
        (FOREGROUND_FINALIZER, ORPHAN_FINALIZER) if policy == "Foreground" else (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)
    )
    kept = [f for f in finalizers or () if f != other]
    if wanted not in kept:
        kept.append(wanted)
    return kept


def deletion(
    strategy: Strategy[Any],  # Any: the stored object's kind's
    stored: Any,  # Any: a stored object, its metadata set
    *,
    policy: str | None,
    grace: int | None,
    stamp: Callable[..., datetime],
) -> Any | None:  # Any: as `stored`
    """What a delete asking for `policy` and `grace` seconds leaves in place of `stored`: the
    object being deleted (`stored` itself when the delete changes nothing), or None when it goes
    at once. `stamp(offset=seconds)` is the store's clock."""
    current, meta = stored, stored.metadata
    finalizers = propagation_finalizers(meta.finalizers, policy)
    if finalizers != (meta.finalizers or None):
        current = msgspec.structs.replace(stored, metadata=msgspec.structs.replace(meta, finalizers=finalizers))
        meta = current.metadata
    started = strategy.begin_delete(current, stamp())
    if started is not None:
        return started
    seconds = strategy.deletion_grace(current, grace)
    if seconds <= 0 and not meta.finalizers:
        return None
    if meta.deletionTimestamp is not None and seconds >= (meta.deletionGracePeriodSeconds or 0):
        return current  # being deleted sooner already: at most the policy's finalizer is new
    new_meta = msgspec.structs.replace(
        meta, deletionTimestamp=stamp(offset=seconds), deletionGracePeriodSeconds=seconds
    )
    return msgspec.structs.replace(current, metadata=new_meta)
