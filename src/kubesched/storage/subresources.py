"""What a kind serves beneath its objects, as kube-apiserver's per-resource REST storage: each
kind's strategy names its subresources, and the API server reaches one only through that name.

Five shapes cover what the served kinds have:

- `Part`: a part of the object, read and written as the whole object (`status`, a namespace's
  `finalize`); the store's own get, update and patch take it as their `subresource`.
- `Action`: a body posted to make one change (`pods/binding`, `pods/eviction`), answered with a
  Status of success.
- `Facet`: another object standing for the stored one (`scale`), read, replaced and patched as that.
- `Unserved`: a subresource the real API server proxies to a kubelet (`log`, `exec`, ...), refused
  with why.
- `Delegated`: one the API server answers from what only it holds (a ServiceAccount's `token`,
  signed with its key).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from kubesched.api.objects import Model, Named, Served
from kubesched.cluster.errors import NotFound

if TYPE_CHECKING:
    from kubesched.cluster.kinds import Kind
    from kubesched.storage.store import MemoryStore

GET, CREATE, UPDATE, PATCH, DELETE = "get", "create", "update", "patch", "delete"


class Body(Named, Model, Protocol):
    """What an action is posted: a model naming its object in `metadata`."""


@dataclass(frozen=True)
class Part:
    """A part of the object (`status`), written without touching the rest of it."""

    name: str
    verbs: ClassVar[frozenset[str]] = frozenset({GET, UPDATE, PATCH})


@dataclass(frozen=True)
class Action:
    """A body of class `body` posted to make one change: `act(store, body, namespace)`. A body
    names its object in `metadata.name`, which must be the URL's when the URL names one; `dry_run`
    reads the dryRun a body may carry besides the query's (an Eviction's deleteOptions)."""

    name: str
    body: type[Body]
    # Any: a body of the class `body` names, which each action takes as its own
    act: Callable[[MemoryStore, Any, str | None], object]
    dry_run: Callable[[Any], list[str] | None] = lambda body: None  # Any: as `act`'s; the dryRun a body asks for
    verbs: ClassVar[frozenset[str]] = frozenset({CREATE})


@dataclass(frozen=True)
class Facet:
    """Another object standing for the stored one: `read(store, cls, name, namespace)`; `write` and
    `patch` take the new facet (or a patch of it and its type) and a field manager."""

    name: str
    read: Callable[[MemoryStore, type[Served], str, str | None], object]
    write: Callable[..., object]
    patch: Callable[..., object]
    verbs: ClassVar[frozenset[str]] = frozenset({GET, UPDATE, PATCH})


@dataclass(frozen=True)
class Unserved:
    """A subresource the API server would hand to a kubelet: `why(obj)` says why it cannot here."""

    name: str
    why: Callable[[Served], str]
    verbs: ClassVar[frozenset[str]] = frozenset({GET, CREATE, UPDATE, PATCH, DELETE})


@dataclass(frozen=True)
class Delegated:
    """A subresource the API server answers itself, from what the store does not hold."""

    name: str
    verbs: frozenset[str]


Subresource = Part | Action | Facet | Unserved | Delegated
STATUS = Part("status")


def lookup(store: MemoryStore, kind: Kind, name: str) -> Subresource:
    """The subresource `name` of `kind`, as the kind's strategy serves it."""
    found = store.subresources(kind).get(name)
    if found is None:
        raise NotFound(f"{kind.qualified} {name} subresource is not served", kind=kind.plural)
    return found
