"""An object's identity from its metadata. Every object the API serves has metadata and a name
(and, namespaced, a namespace); the models declare all three optional, so these read them as
the API guarantees them."""

from __future__ import annotations

from typing import Protocol

from lightkube.models import meta_v1


class Named(Protocol):
    """Any object of a served kind."""

    @property
    def metadata(self) -> meta_v1.ObjectMeta | None: ...


def meta_of(obj: Named) -> meta_v1.ObjectMeta:
    """The object's metadata (ValueError for an object that has none: none the API served)."""
    found = obj.metadata
    if found is None:
        raise ValueError(f"a {type(obj).__name__} without metadata")
    return found


def name_of(obj: Named) -> str:
    found = obj.metadata
    return (found.name if found is not None else None) or ""


def namespace_of(obj: Named) -> str:
    """The object's namespace ("" for a cluster-scoped one)."""
    found = obj.metadata
    return (found.namespace if found is not None else None) or ""


def key_of(obj: Named) -> tuple[str, str]:
    """(namespace, name): the object's key among its kind ("" namespace when cluster-scoped)."""
    return namespace_of(obj), name_of(obj)
