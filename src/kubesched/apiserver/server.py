"""The Kubernetes REST API over a `MemoryStore`, served with aiohttp.

One catch-all route dispatches discovery, OpenAPI and resource URLs. Every failure leaves as a
Kubernetes `Status` object with its code and reason; nothing a client sends can crash the server
or change the store unless the request succeeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter
from typing import Any

from aiohttp import web
from lightkube.resources import core_v1

from kubesched.api.errors import FieldError
from kubesched.api.objects import Served, meta_of, present
from kubesched.apiserver import discovery, negotiation, openapi, options, rbac, reviews, tables
from kubesched.apiserver.authn import DEFAULT_TOKEN_SECONDS, MIN_TOKEN_SECONDS, Authenticator, User
from kubesched.apiserver.codec import (
    checked_unknown_fields,
    decode_json,
    parse_body,
    to_object,
)
from kubesched.apiserver.responses import JSON, PROTOBUF_ANSWERS, respond, status_response
from kubesched.apiserver.routing import Routes, Target
from kubesched.apiserver.subresources import Subresources
from kubesched.apiserver.watchstream import stream_watch
from kubesched.clock.base import rfc3339
from kubesched.cluster.errors import (
    ApiError,
    BadRequest,
    InternalError,
    Invalid,
    MethodNotAllowed,
    NotFound,
    RequestEntityTooLarge,
)
from kubesched.cluster.kinds import Kind
from kubesched.cluster.protocol import ListResult
from kubesched.storage import MemoryStore
from kubesched.storage.deletion import PROPAGATION_POLICIES
from kubesched.storage.patch import APPLY

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 3 * 1024 * 1024  # the API server's default request body limit
PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2"


_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def _attributes(request: web.Request, target: Target) -> rbac.Attributes:
    """The request as the authorizer sees it: its verb, resource and namespace."""
    method = request.method
    if target.watch_path or (method == "GET" and options.flag(request.query.get("watch"))):
        verb = "watch"
    elif method == "GET":
        verb = "get" if target.name is not None else "list"
    elif method == "DELETE":
        verb = "delete" if target.name is not None else "deletecollection"
    else:
        verb = _VERBS.get(method, method.lower())
    return rbac.Attributes(
        verb,
        api_group=target.kind.group,
        resource=target.kind.plural,
        subresource=target.subresource or "",
        namespace=target.namespace or "",
        name=target.name or "",
    )


class ApiServer:
    """The HTTP API. `token`, when set, is required as a bearer token on every request (or a
    ServiceAccount's, from the TokenRequest API). `authorization`: AlwaysAllow, or RBAC (which
    needs a token: without one nobody is signed in)."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        token: str | None = None,
        authorization: str = rbac.ALWAYS_ALLOW,
        bookmark_interval: float = 5.0,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        if authorization not in rbac.MODES:
            raise ValueError(f"authorization: {authorization!r} is not one of {', '.join(rbac.MODES)}")
        self.store = store
        self._routes_cache: tuple[int, Routes] | None = None
        self.token = token
        self.authn = Authenticator(token, now=store.clock.now, service_account_uid=self._service_account_uid)
        self.authorizer: rbac.RbacAuthorizer | rbac.AlwaysAllow = (
            rbac.RbacAuthorizer(store) if authorization == rbac.RBAC else rbac.AlwaysAllow()
        )
        # with RBAC, what each user was allowed: (user, verb, group, resource[/subresource]) -> requests
        self.granted: Counter[tuple[str, str, str, str]] = Counter()
        self.bookmark_interval = bookmark_interval
        self.address = "127.0.0.1:0"
        self._subresources = Subresources(
            store,
            whole={"get": self._get_async, "update": self._update, "patch": self._patch},
            delegated={"token": self._token},
        )
        for kind in store.kinds():
            self._subresources.check(store.subresources(kind))
        self.app = web.Application(client_max_size=max_body)
        self.app.router.add_route("*", "/{tail:.*}", self._serve)

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        """Authenticate, dispatch, and turn any failure into its `Status` reply."""
        PROTOBUF_ANSWERS.set(negotiation.wants_protobuf(request.headers.get("Accept")))
        try:
            user = self.authn.authenticate(request.headers.get("Authorization", ""))
            return await self._dispatch(request, user)
        except ApiError as e:
            return status_response(e)
        except web.HTTPRequestEntityTooLarge:
            return status_response(RequestEntityTooLarge("the request body is too large"))
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as e:
            log.exception("internal error serving %s %s", request.method, request.path)
            return status_response(InternalError(f"Internal error occurred: {type(e).__name__}: {e}"))

    # -- dispatch ----------------------------------------------------------------------------

    def _service_account_uid(self, namespace: str, name: str) -> str | None:
        try:
            account = self.store.get(core_v1.ServiceAccount, name, namespace=namespace)
        except NotFound:
            return None
        return account.metadata.uid if account.metadata else None

    def _authorize(self, user: User, attrs: rbac.Attributes) -> None:
        if not self.authorizer.allows(user, attrs):
            raise rbac.forbidden(user, attrs)
        if isinstance(self.authorizer, rbac.RbacAuthorizer) and attrs.resource_request:
            resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
            self.granted[(user.name, attrs.verb, attrs.api_group, resource)] += 1

    async def _dispatch(self, request: web.Request, user: User) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if request.method == "GET" and self._is_fixed(path):
            self._authorize(user, rbac.Attributes("get", resource_request=False, path=request.path))
            fixed = self._fixed(request, path)
            if fixed is not None:
                return fixed
        if request.method == "POST" and (review := reviews.route(path)) is not None:
            kind, namespace = review
            self._authorize(
                user, rbac.Attributes("create", api_group=kind.group, resource=kind.plural, namespace=namespace or "")
            )
            body = parse_body(await request.read(), request.headers.get("Content-Type", ""))
            answered = reviews.answer(kind, body, namespace=namespace, user=user, policy=self.authorizer)
            return respond(answered, 201)
        target = self._routes().parse(path)
        if target is None:
            self._authorize(user, rbac.Attributes(request.method.lower(), resource_request=False, path=request.path))
            raise NotFound("the server could not find the requested resource", name=path)
        self._authorize(user, _attributes(request, target))
        if target.subresource is not None:
            return await self._subresources.serve(request, target)
        if target.watch_path:
            if request.method != "GET":
                raise MethodNotAllowed()
            return await self._watch(request, target)
        method = request.method
        if target.name is None:
            if method == "GET":
                if options.flag(request.query.get("watch")):
                    return await self._watch(request, target)
                return self._list(request, target)
            if method == "POST":
                return await self._create(request, target)
            if method == "DELETE":
                return await self._delete_collection(request, target)
        else:
            if method == "GET":
                return self._get(request, target)
            if method == "PUT":
                return await self._update(request, target)
            if method == "PATCH":
                return await self._patch(request, target)
            if method == "DELETE":
                return await self._delete(request, target)
        raise MethodNotAllowed()

    def _routes(self) -> Routes:
        """The URLs of the kinds served now (rebuilt when a CustomResourceDefinition comes or goes)."""
        generation = self.store.kinds_generation
        if self._routes_cache is None or self._routes_cache[0] != generation:
            self._routes_cache = (generation, Routes(self.store.kinds()))
        return self._routes_cache[1]

    @staticmethod
    def _is_fixed(path: str) -> bool:
        parts = [p for p in path.split("/") if p]
        return (
            path in ("/", "/version", "/healthz", "/livez", "/readyz", "/api", "/apis")
            or parts == ["api", "v1"]
            or (parts[:1] == ["apis"] and len(parts) in (2, 3))
            or parts[:1] == ["openapi"]
        )

    async def _token(self, request: web.Request, target: Target) -> web.Response:
        """TokenRequest (`kubectl create token`): a token for the ServiceAccount, 201."""
        assert target.name is not None and target.namespace is not None
        uid = self._service_account_uid(target.namespace, target.name)
        if uid is None:
            raise NotFound(f'serviceaccounts "{target.name}" not found', kind="serviceaccounts", name=target.name)
        body = parse_body(await request.read(), request.headers.get("Content-Type", ""))
        spec = (body.get("spec") if isinstance(body, dict) else None) or {}
        seconds = spec.get("expirationSeconds") or DEFAULT_TOKEN_SECONDS
        if not isinstance(seconds, int) or seconds < MIN_TOKEN_SECONDS:
            error = FieldError("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")
            raise Invalid("TokenRequest.authentication.k8s.io", target.name, [error], group="authentication.k8s.io")
        token, expires = self.authn.issue(target.namespace, target.name, uid, seconds)
        answer = {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": target.name, "namespace": target.namespace},
            "spec": {**spec, "audiences": spec.get("audiences") or [], "expirationSeconds": seconds},
            "status": {"token": token, "expirationTimestamp": rfc3339(expires)},
        }
        return respond(answer, 201)

    def _fixed(self, request: web.Request, path: str) -> web.Response | None:
        """Discovery, version, health and OpenAPI documents."""
        parts = [p for p in path.split("/") if p]
        if path == "/version":
            return respond(discovery.SERVER_VERSION)
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        if path == "/api":
            return respond(discovery.api_versions(self.address))
        if path == "/apis":
            return respond(discovery.api_groups(self._routes()))
        if parts == ["api", "v1"]:
            return respond(discovery.resource_list("", "v1", self._routes()))
        if len(parts) == 2 and parts[0] == "apis":
            group = discovery.api_group(parts[1], self._routes())
            if group is None:
                raise NotFound("the server could not find the requested resource", name=path)
            return respond(group)
        if len(parts) == 3 and parts[0] == "apis":
            resources = discovery.resource_list(parts[1], parts[2], self._routes())
            if resources is None:
                raise NotFound("the server could not find the requested resource", name=path)
            return respond(resources)
        if path == "/openapi/v2":
            if PROTOBUF_V2 in request.headers.get("Accept", ""):
                # Either Accept form gets the parseable media type (Go's mime parser rejects the "@").
                return web.Response(body=openapi.swagger_v2_protobuf(), content_type=f"{PROTOBUF_V2}.v1.0+protobuf")
            return web.Response(body=openapi.swagger_v2_json(), content_type=JSON)
        if path == "/openapi/v3":
            return respond(openapi.openapi_v3_paths())
        if parts[:2] == ["openapi", "v3"]:
            document = openapi.openapi_v3_group_version_json("/".join(parts[2:]))
            if document is None:
                raise NotFound("the server could not find the requested resource", name=path)
            return web.Response(body=document, content_type=JSON)
        return None

    # -- reading -----------------------------------------------------------------------------

    def _render(self, request: web.Request, kind: Kind, obj: Served) -> web.Response:
        if negotiation.wants_table(request.headers.get("Accept")):
            include = tables.parse_include_object(request.query.get("includeObject"))
            return respond(
                tables.table(
                    kind,
                    [obj],
                    now=self.store.clock.now(),
                    wide=True,
                    include_object=include,
                    resource_version=meta_of(obj).resourceVersion or "",
                )
            )
        return respond(obj)

    def _get(self, request: web.Request, target: Target) -> web.Response:
        obj = self.store.get(target.kind.cls, target.name or "", namespace=target.namespace)
        return self._render(request, target.kind, obj)

    async def _get_async(self, request: web.Request, target: Target) -> web.Response:
        return self._get(request, target)

    def _selected(self, request: web.Request, target: Target) -> ListResult[Served]:
        """The collection's objects the request's selectors and paging pick."""
        q = request.query
        return self.store.list(
            target.kind.cls,
            namespace=target.namespace,
            label_selector=q.get("labelSelector", ""),
            field_selector=q.get("fieldSelector", ""),
            limit=options.int_param(q, "limit") or 0,
            continue_token=q.get("continue") or None,
            resource_version=q.get("resourceVersion"),
        )

    def _list(self, request: web.Request, target: Target) -> web.Response:
        q = request.query
        kind = target.kind
        result = self._selected(request, target)
        if negotiation.wants_table(request.headers.get("Accept")):
            return respond(
                tables.table(
                    kind,
                    result.items,
                    now=self.store.clock.now(),
                    wide=True,
                    include_object=tables.parse_include_object(q.get("includeObject")),
                    resource_version=result.resource_version,
                    continue_token=result.continue_token,
                )
            )
        metadata: dict[str, object] = {"resourceVersion": result.resource_version}
        if result.continue_token:
            metadata["continue"] = result.continue_token
            metadata["remainingItemCount"] = result.remaining
        return respond(
            {"kind": f"{kind.kind}List", "apiVersion": kind.api_version, "metadata": metadata, "items": result.items}
        )

    async def _watch(self, request: web.Request, target: Target) -> web.StreamResponse:
        return await stream_watch(self.store, request, target, bookmark_interval=self.bookmark_interval)

    # -- writing -----------------------------------------------------------------------------

    async def _body(self, request: web.Request, kind: Kind) -> tuple[Served, list[str]]:
        data = parse_body(await request.read(), request.headers.get("Content-Type", ""))
        strict = request.query.get("fieldValidation", "") == "Strict"
        return to_object(kind, data, strict=strict)

    @staticmethod
    def _warn(response: web.Response, request: web.Request, unknown: list[str]) -> web.Response:
        if unknown and request.query.get("fieldValidation", "Warn") != "Ignore":
            # each warning's text quoted (control characters and all escaped), as kube-apiserver does
            texts = (json.dumps(f"unknown field {json.dumps(f)}") for f in unknown)
            response.headers["Warning"] = ", ".join(f"299 - {text}" for text in texts)
        return response

    async def _create(self, request: web.Request, target: Target) -> web.Response:
        dry_run = options.dry_run(request, "CreateOptions")
        manager = options.field_manager(request, "CreateOptions")
        obj, unknown = await self._body(request, target.kind)
        with options.writing(self.store, dry_run):
            created = self.store.create(obj, namespace=target.namespace, field_manager=manager)
        return self._warn(respond(created, 201), request, unknown)

    async def _update(self, request: web.Request, target: Target) -> web.Response:
        dry_run = options.dry_run(request, "UpdateOptions")
        manager = options.field_manager(request, "UpdateOptions")
        obj, unknown = await self._body(request, target.kind)
        meta = obj.metadata
        if meta is None or meta.name != target.name:
            raise BadRequest(
                f"the name of the object ({meta.name if meta else ''}) does not match the name on the URL "
                f"({target.name})"
            )
        if target.kind.namespaced:
            if meta.namespace and meta.namespace != target.namespace:
                raise BadRequest(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta.namespace = target.namespace
        with options.writing(self.store, dry_run):
            updated = self.store.update(obj, subresource=target.subresource, field_manager=manager)
        return self._warn(respond(updated), request, unknown)

    async def _patch(self, request: web.Request, target: Target) -> web.Response:
        dry_run = options.dry_run(request, "PatchOptions")
        patch_type = options.patch_type(request)
        manager = options.field_manager(request, "PatchOptions", applying=patch_type == APPLY)
        if patch_type == APPLY:
            return await self._apply(request, target, manager, dry_run)
        patch = decode_json(await request.read())
        with options.writing(self.store, dry_run):
            patched = self.store.patch(
                target.kind.cls,
                target.name or "",
                patch,
                namespace=target.namespace,
                subresource=target.subresource,
                patch_type=patch_type,
                field_manager=manager,
            )
        return respond(patched)

    async def _apply(self, request: web.Request, target: Target, manager: str, dry_run: bool) -> web.Response:
        """Server-side apply: the body is an apply configuration in YAML (or JSON)."""
        config = parse_body(await request.read(), "application/yaml")
        strict = request.query.get("fieldValidation", "") == "Strict"
        unknown = checked_unknown_fields(config, target.kind.cls, strict=strict)
        with options.writing(self.store, dry_run):
            applied, created = self.store.apply(
                target.kind.cls,
                target.name or "",
                config,
                namespace=target.namespace,
                subresource=target.subresource,
                field_manager=manager,
                force=options.flag(request.query.get("force")),
            )
        return self._warn(respond(applied, 201 if created else 200), request, unknown)

    # Any: DeleteOptions as sent, with the query's set: their fields go to the store unchecked
    def _delete_options(self, request: web.Request, raw: bytes) -> dict[str, Any]:
        deletion: dict[str, object] = {}
        if raw.strip():
            data = parse_body(raw, request.headers.get("Content-Type", JSON) or JSON)
            if not isinstance(data, dict):
                raise BadRequest("DeleteOptions must be a JSON object")
            options.check_delete_options(data)
            deletion = data
        grace = options.int_param(request.query, "gracePeriodSeconds")
        if grace is not None:
            deletion["gracePeriodSeconds"] = grace
        deletion["dryRun"] = options.dry_run(request, "DeleteOptions", deletion.get("dryRun"))
        propagation = request.query.get("propagationPolicy") or deletion.get("propagationPolicy")
        if propagation is None and "orphanDependents" in request.query:
            propagation = "Orphan" if options.flag(request.query["orphanDependents"]) else "Background"
        elif propagation is None and deletion.get("orphanDependents") is not None:
            propagation = "Orphan" if deletion["orphanDependents"] else "Background"
        if propagation not in PROPAGATION_POLICIES:
            raise BadRequest(f'unsupported propagationPolicy "{propagation}"')
        deletion["propagationPolicy"] = propagation
        return deletion

    async def _delete(self, request: web.Request, target: Target) -> web.Response:
        deletion = self._delete_options(request, await request.read())
        pre = deletion.get("preconditions") or {}
        with options.writing(self.store, deletion["dryRun"]):
            result = self.store.delete(
                target.kind.cls,
                target.name or "",
                namespace=target.namespace,
                grace_period_seconds=deletion.get("gracePeriodSeconds"),
                uid=pre.get("uid"),
                resource_version=pre.get("resourceVersion"),
                propagation_policy=deletion["propagationPolicy"],
            )
        if deletion["dryRun"]:  # what stays is what a real delete would leave being deleted
            still_there = meta_of(result).deletionTimestamp is not None
        else:
            still_there = self._exists(target.kind, target.name or "", target.namespace)
        return respond(result, 202 if still_there else 200)

    def _exists(self, kind: Kind, name: str, namespace: str | None) -> bool:
        try:
            self.store.get(kind.cls, name, namespace=namespace)
        except NotFound:
            return False
        return True

    async def _delete_collection(self, request: web.Request, target: Target) -> web.Response:
        deletion = self._delete_options(request, await request.read())
        kind = target.kind
        deleted = []
        for obj in self._selected(request, target).items:
            meta = meta_of(obj)
            with contextlib.suppress(NotFound), options.writing(self.store, deletion["dryRun"]):
                deleted.append(
                    self.store.delete(
                        kind.cls,
                        present(meta.name, "a listed object's name"),
                        namespace=meta.namespace,
                        grace_period_seconds=deletion.get("gracePeriodSeconds"),
                        propagation_policy=deletion["propagationPolicy"],
                    )
                )
        return respond({"kind": f"{kind.kind}List", "apiVersion": kind.api_version, "metadata": {}, "items": deleted})
