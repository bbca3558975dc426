"""A subresource request served as its kind's strategy declares it (see `storage.subresources`):
the method mapped to a verb the subresource answers, the body read as what it takes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import msgspec
from aiohttp import web

from kubesched.apiserver import options
from kubesched.apiserver.codec import decode_json, parse_body
from kubesched.apiserver.responses import respond, success
from kubesched.apiserver.routing import Target
from kubesched.cluster.errors import BadRequest, MethodNotAllowed
from kubesched.storage import MemoryStore
from kubesched.storage.patch import APPLY
from kubesched.storage.subresources import (
    Action,
    Delegated,
    Facet,
    Part,
    Subresource,
    Unserved,
    lookup,
)

Handler = Callable[[web.Request, Target], Awaitable[web.Response]]
VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass(frozen=True)
class Subresources:
    """Serves the subresources of `store`'s kinds: a `Part` through the server's own handlers for
    the whole object (`whole`, by verb), a `Delegated` one through `delegated`, by name."""

    store: MemoryStore
    whole: Mapping[str, Handler]
    delegated: Mapping[str, Handler]

    def check(self, served: Mapping[str, Subresource]) -> None:
        """Refuse, at start, a kind's delegated subresource the server has no handler for."""
        for sub in served.values():
            if isinstance(sub, Delegated) and sub.name not in self.delegated:
                raise LookupError(f"no handler for the {sub.name} subresource")

    async def serve(self, request: web.Request, target: Target) -> web.Response:
        assert target.subresource is not None
        sub = lookup(self.store, target.kind, target.subresource)
        verb = VERBS.get(request.method, "")
        if verb not in sub.verbs:
            raise MethodNotAllowed()
        match sub:
            case Part():
                return await self.whole[verb](request, target)
            case Delegated():
                return await self.delegated[sub.name](request, target)
            case Action():
                return await self._act(request, target, sub)
            case Facet():
                return await self._facet(request, target, sub, verb)
            case Unserved():
                obj = self.store.get(target.kind.cls, target.name or "", namespace=target.namespace)
                raise BadRequest(f"{target.kind.plural}/{sub.name} {sub.why(obj)}")

    async def _act(self, request: web.Request, target: Target, action: Action) -> web.Response:
        data = parse_body(await request.read(), request.headers.get("Content-Type", ""))
        what = action.body.__name__
        try:
            body = msgspec.convert(data, action.body, strict=False)
        except msgspec.ValidationError as e:
            raise BadRequest(f'{what} in version "v1" cannot be handled as a {what}: {e}') from None
        meta = body.metadata
        if meta is None and target.name is None:
            raise BadRequest(f"{what} has no metadata")
        if target.name is not None and (meta.name if meta else None) != target.name:
            raise BadRequest(f"name in URL does not match name in {what} object")
        with options.writing(self.store, options.dry_run(request, "CreateOptions", action.dry_run(body))):
            action.act(self.store, body, target.namespace)
        return respond(success(201), 201)

    async def _facet(self, request: web.Request, target: Target, facet: Facet, verb: str) -> web.Response:
        cls, name, namespace = target.kind.cls, target.name or "", target.namespace
        if verb == "get":
            return respond(facet.read(self.store, cls, name, namespace))
        if verb == "update":
            dry_run = options.dry_run(request, "UpdateOptions")
            manager = options.field_manager(request, "UpdateOptions")
            body = parse_body(await request.read(), request.headers.get("Content-Type", ""))
            with options.writing(self.store, dry_run):
                return respond(facet.write(self.store, cls, name, namespace, body, field_manager=manager))
        dry_run = options.dry_run(request, "PatchOptions")
        patch_type = options.patch_type(request)
        manager = options.field_manager(request, "PatchOptions", applying=patch_type == APPLY)
        patch = decode_json(await request.read())
        with options.writing(self.store, dry_run):
            return respond(facet.patch(self.store, cls, name, namespace, patch, patch_type, field_manager=manager))
