"""ownerReferences: the controller reference a controller stamps on what it makes, and finding
the owner a reference names."""

from __future__ import annotations

from typing import Any

from lightkube.models import meta_v1


def controller_reference(owner: Any) -> meta_v1.OwnerReference:
    """The reference a controller puts on the objects it creates (controller and
    blockOwnerDeletion set, as upstream's `NewControllerRef`)."""
    return meta_v1.OwnerReference(
        apiVersion=owner.apiVersion,
        kind=owner.kind,
        name=owner.metadata.name,
        uid=owner.metadata.uid,
        controller=True,
        blockOwnerDeletion=True,
    )


def controller_of(obj: Any) -> meta_v1.OwnerReference | None:
    return next((r for r in obj.metadata.ownerReferences or () if r.controller), None)


def controlled_by(obj: Any, owner: Any) -> bool:
    ref = controller_of(obj)
    return ref is not None and ref.uid == owner.metadata.uid


def adoption_patch(obj: Any, owner: Any) -> dict[str, Any]:
    """A merge patch giving an orphan `owner`'s controller reference (its uid a precondition)."""
    refs = [*(obj.metadata.ownerReferences or ()), controller_reference(owner)]
    return {"metadata": {"uid": obj.metadata.uid, "ownerReferences": [_ref(r) for r in refs]}}


def release_patch(obj: Any, owner_uid: str) -> dict[str, Any]:
    """A merge patch removing every reference to `owner_uid` (its uid a precondition)."""
    refs = [r for r in obj.metadata.ownerReferences or () if r.uid != owner_uid]
    return {"metadata": {"uid": obj.metadata.uid, "ownerReferences": [_ref(r) for r in refs] or None}}


def finalizer_removal(obj: Any, finalizer: str) -> dict[str, Any]:
    """A merge patch removing `finalizer` (the object's uid a precondition)."""
    kept = [f for f in obj.metadata.finalizers or () if f != finalizer]
    return {"metadata": {"uid": obj.metadata.uid, "finalizers": kept or None}}


def _ref(ref: meta_v1.OwnerReference) -> dict[str, Any]:
    out: dict[str, object] = {"apiVersion": ref.apiVersion, "kind": ref.kind, "name": ref.name, "uid": ref.uid}
    if ref.controller is not None:
        out["controller"] = ref.controller
    if ref.blockOwnerDeletion is not None:
        out["blockOwnerDeletion"] = ref.blockOwnerDeletion
    return out
