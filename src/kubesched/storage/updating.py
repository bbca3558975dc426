"""What an update makes of the stored object: through `status` only the status changes, through
another part (a namespace's `finalize`) what the kind's strategy says, and a whole-object update
keeps what the server owns (identity, timestamps, versions, the status of a kind with a status
subresource) and counts a change of the spec as a new generation."""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.cluster.errors import NotFound
from kubesched.cluster.kinds import Kind
from kubesched.storage.strategy import Strategy


# Any: the kind's strategy, and stored objects (their metadata set), as is the one returned
def replacement(kind: Kind, strategy: Strategy[Any], current: Any, new: Any, subresource: str | None) -> Any:
    """The object to store in place of `current` for an update sending `new` (the store's own
    copy, which this may change)."""
    cur_meta = current.metadata
    if subresource == "status":
        return msgspec.structs.replace(current, metadata=msgspec.structs.replace(cur_meta), status=new.status)
    if subresource is not None:
        changed = strategy.subresource_update(current, new, subresource)
        if changed is None:
            raise NotFound(f"{kind.qualified} {subresource} subresource is not served", kind=kind.plural)
        return changed
    new.metadata = msgspec.structs.replace(
        new.metadata,
        name=cur_meta.name,
        namespace=cur_meta.namespace,
        uid=cur_meta.uid,
        creationTimestamp=cur_meta.creationTimestamp,
        deletionTimestamp=cur_meta.deletionTimestamp,
        deletionGracePeriodSeconds=cur_meta.deletionGracePeriodSeconds,
        generation=cur_meta.generation,
        resourceVersion=cur_meta.resourceVersion,
    )
    strategy.default(new)
    if kind.has_status:
        new.status = current.status
    if strategy.tracks_generation and getattr(new, "spec", None) != getattr(current, "spec", None):
        new.metadata.generation = (cur_meta.generation or 0) + 1
    return new
