"""The kinds a store serves: the built-in ones, those its CustomResourceDefinitions define (with
their schemas and strategies), and the classes served as views of another kind's storage."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import msgspec
from lightkube.resources import apiextensions_v1

from kubesched.api.objects import Served, present
from kubesched.cluster.custom import custom_resource, gvk
from kubesched.cluster.kinds import KINDS, Kind, custom_kind
from kubesched.storage.conversion import VIEWS, View, converter
from kubesched.storage.durable import key_of
from kubesched.storage.journal import kind_key
from kubesched.storage.strategy import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    CustomResourceDefinitionStrategy,
    CustomResourceStrategy,
    Strategy,
)

_BUILT_IN = {key_of(kind): cls for cls, kind in KINDS.items() if kind.cls is cls}  # journal names of built-in kinds
GroupVersionKind = tuple[str, str, str]


class ServedKinds:
    """What a store serves now. `serve` and `withdraw` are the store's own steps once a CRD is
    established or gone (its table and watches), held weakly (bound methods of the store, which
    holds this: no cycle keeps a store alive); `generation` changes whenever the set changes."""

    def __init__(self, *, serve: Callable[[Kind], None], withdraw: Callable[[Kind], None]) -> None:
        self._kinds: dict[type[Served], Kind] = dict(KINDS)
        self._views: dict[type[Served], View] = dict(VIEWS)
        # the reads every store call makes, as the dicts' own methods (no frame of ours on the way)
        self.served_as: Callable[[type[Served]], Kind | None] = self._kinds.get
        self.view: Callable[[type[Served]], View | None] = self._views.get
        self._custom: dict[GroupVersionKind, Kind] = {}
        self._on_serve = weakref.WeakMethod(serve)
        self._on_withdraw = weakref.WeakMethod(withdraw)
        self.generation = 0
        self.schemas: dict[type[Served], dict[str, object]] = {}  # storage class -> openAPIV3Schema
        self.strategies: dict[type[Served], Strategy[Any]] = {  # Any: as STRATEGIES holds them
            **STRATEGIES,
            apiextensions_v1.CustomResourceDefinition: CustomResourceDefinitionStrategy(
                served=self._custom, serve=self._serve_crd, withdraw=self._withdraw_crd
            ),
        }

    def named(self, api_version: str, kind: str) -> Kind | None:
        """The kind served as `apiVersion` and `kind` (a manifest's), built-in or custom; None if
        none is."""
        if (cls := _BUILT_IN.get(kind_key(api_version, kind))) is not None:
            return self._kinds[cls]
        group, _, version = api_version.rpartition("/")
        return self._custom.get((group, version, kind))

    def of(self, cls: type[Served]) -> Kind:
        """The served kind of a resource class (`served_as`, a dict read, for a class served as it
        is); a class of a served custom kind other than the
        store's own (a plugin package's typed class) becomes a view of its storage. TypeError
        for a kind not served."""
        found = self._kinds.get(cls)
        if found is not None:
            return found
        key = gvk(cls)
        served = self._custom.get(key) if key is not None else None
        if served is None:
            raise TypeError(f"kind {getattr(cls, '__name__', cls)!r} is not served")
        self._views[cls] = View(storage=served.cls, to_storage=converter(served.cls), from_storage=converter(cls))
        self._kinds[cls] = served
        return served

    def all(self) -> list[Kind]:
        """Every kind served now, built-in and custom (views excluded)."""
        return [k for cls, k in self._kinds.items() if k.cls is cls]

    def strategy(self, kind: Kind) -> Strategy[Any]:  # Any: as `strategies` holds them
        return self.strategies.get(kind.cls, DEFAULT_STRATEGY)

    def _serve_crd(self, crd: apiextensions_v1.CustomResourceDefinition) -> None:
        """Serve the storage version of an established CustomResourceDefinition."""
        spec = present(crd.spec, "the CustomResourceDefinition's spec")
        version = next((v for v in spec.versions if v.storage), spec.versions[0])
        names = spec.names
        cls = custom_resource(
            group=spec.group,
            version=version.name,
            kind=names.kind,
            plural=names.plural,
            namespaced=spec.scope == "Namespaced",
        )
        has_status = version.subresources is not None and version.subresources.status is not None
        kind = custom_kind(
            cls,
            short_names=tuple(names.shortNames or ()),
            categories=tuple(names.categories or ()),
            subresources=("status",) if has_status else (),
            singular=names.singular or names.kind.lower(),
            columns=tuple(msgspec.to_builtins(c) for c in version.additionalPrinterColumns or ()),
        )
        self._custom[(spec.group, version.name, names.kind)] = kind
        self._kinds[cls] = kind
        schema = version.schema.openAPIV3Schema if version.schema is not None else None
        self.schemas[cls] = msgspec.to_builtins(schema) if schema is not None else {}
        self.strategies[cls] = CustomResourceStrategy(self.schemas[cls])
        if (serve := self._on_serve()) is not None:
            serve(kind)
        self.generation += 1

    def _withdraw_crd(self, crd: apiextensions_v1.CustomResourceDefinition) -> None:
        """Stop serving a deleted CustomResourceDefinition's kind (the store first deletes its
        objects and ends its watches)."""
        spec = present(crd.spec, "the CustomResourceDefinition's spec")
        for key in [k for k in self._custom if k[0] == spec.group and k[2] == spec.names.kind]:
            kind = self._custom.pop(key)
            if (withdraw := self._on_withdraw()) is not None:
                withdraw(kind)
            self.schemas.pop(kind.cls, None)
            self.strategies.pop(kind.cls, None)
            for cls in [c for c, k in self._kinds.items() if k is kind]:
                del self._kinds[cls]
                self._views.pop(cls, None)
            self.generation += 1
