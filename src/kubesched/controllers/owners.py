"""ownerReferences: the controller reference a controller stamps on what it makes, and finding
the owner a reference names."""

from __future__ import annotations

from lightkube.models import meta_v1

from kubesched.api.objects import Named, meta_of, present
from kubesched.cluster.events import Referent


def controller_reference(owner: Referent) -> meta_v1.OwnerReference:
    """The reference a controller puts on the objects it creates (controller and
    blockOwnerDeletion set, as upstream's `NewControllerRef`)."""
    meta = meta_of(owner)
    return meta_v1.OwnerReference(
        apiVersion=present(owner.apiVersion, "the owner's apiVersion"),
        kind=present(owner.kind, "the owner's kind"),
        name=present(meta.name, "the owner's name"),
        uid=present(meta.uid, "the owner's uid"),
        controller=True,
        blockOwnerDeletion=True,
    )


def uid_of(obj: Named) -> str:
    """The object's uid ("" for one the API has not stored)."""
    return meta_of(obj).uid or ""


def controller_of(obj: Named) -> meta_v1.OwnerReference | None:
    return next((r for r in meta_of(obj).ownerReferences or () if r.controller), None)


def controlled_by(obj: Named, owner: Named) -> bool:
    ref = controller_of(obj)
    return ref is not None and ref.uid == meta_of(owner).uid


def adoption_patch(obj: Named, owner: Referent) -> dict[str, object]:
    """A merge patch giving an orphan `owner`'s controller reference (its uid a precondition)."""
    meta = meta_of(obj)
    refs = [*(meta.ownerReferences or ()), controller_reference(owner)]
    return {"metadata": {"uid": meta.uid, "ownerReferences": [_ref(r) for r in refs]}}


def release_patch(obj: Named, owner_uid: str) -> dict[str, object]:
    """A merge patch removing every reference to `owner_uid` (its uid a precondition)."""
    meta = meta_of(obj)
    refs = [r for r in meta.ownerReferences or () if r.uid != owner_uid]
    return {"metadata": {"uid": meta.uid, "ownerReferences": [_ref(r) for r in refs] or None}}


def finalizer_removal(obj: Named, finalizer: str) -> dict[str, object]:
    """A merge patch removing `finalizer` (the object's uid a precondition)."""
    meta = meta_of(obj)
    kept = [f for f in meta.finalizers or () if f != finalizer]
    return {"metadata": {"uid": meta.uid, "finalizers": kept or None}}


def _ref(ref: meta_v1.OwnerReference) -> dict[str, object]:
    out: dict[str, object] = {"apiVersion": ref.apiVersion, "kind": ref.kind, "name": ref.name, "uid": ref.uid}
    if ref.controller is not None:
        out["controller"] = ref.controller
    if ref.blockOwnerDeletion is not None:
        out["blockOwnerDeletion"] = ref.blockOwnerDeletion
    return out
