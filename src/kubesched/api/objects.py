"""An object's identity from its metadata. Every object the API serves has metadata and a name
(and, namespaced, a namespace); the models declare all three optional, so these read them as
the API guarantees them."""

from __future__ import annotations

from typing import ClassVar, Protocol, TypeGuard, TypeVar, cast

import msgspec
from lightkube import codecs
from lightkube.core import resource as res
from lightkube.models import meta_v1

T = TypeVar("T")


class Named(Protocol):
    """Any object with metadata (of a served kind, or a model nested in one)."""

    @property
    def metadata(self) -> meta_v1.ObjectMeta | None: ...


class Model(Protocol):
    """An object of a model: a struct class whose fields its class lists (attribute names, the
    names they are encoded under, the defaults of the trailing ones)."""

    __struct_fields__: ClassVar[tuple[str, ...]]
    __struct_encode_fields__: ClassVar[tuple[str, ...]]
    __struct_defaults__: ClassVar[tuple[object, ...]]


class Served(Named, Model, Protocol):
    """An object of a served kind: its class names the kind's API (group, version, plural)."""

    _api_info: res.ApiInfo


def served(cls: type[object]) -> TypeGuard[type[Served]]:
    """Whether `cls` is a served kind's class (a model with the kind's API info)."""
    return hasattr(cls, "_api_info") and hasattr(cls, "__struct_fields__")


def meta_of(obj: Named) -> meta_v1.ObjectMeta:
    """The object's metadata (ValueError for an object that has none: none the API served)."""
    found = obj.metadata
    if found is None:
        raise ValueError(f"a {type(obj).__name__} without metadata")
    return found


def present(value: T | None, what: str) -> T:
    """`value`, a field the models declare optional that the API always sets on what it serves
    (a pod's spec, a node's status): ValueError naming `what` when it is unset after all."""
    if value is None:
        raise ValueError(f"{what} is not set")
    return value


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


def decoded(document: dict[str, object]) -> Served:
    """The object `document` describes, as its kind's class (TypeError for a kind lightkube does
    not know: those decode to its untyped generic resources, which no kubesched store serves)."""
    obj = codecs.from_dict(document)
    if not isinstance(obj, msgspec.Struct):
        raise TypeError(f"{document.get('kind')}: not a kind with a model")
    return cast(Served, obj)  # lightkube types every decoded object as a generic resource
