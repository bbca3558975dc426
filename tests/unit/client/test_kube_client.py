"""`KubeCluster` requests on the wire, and replies (objects, lists, `Status`) back to results and errors."""

from __future__ import annotations

import asyncio
import socket
import time
from datetime import UTC, datetime

import msgspec
import pytest
from aiohttp import web
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1, events_v1, policy_v1

from builders import make_pod
from kubesched.client import ConnectionFailed, NotServed
from kubesched.cluster.errors import AlreadyExists, BadRequest, Conflict, Invalid, NotFound, TooManyRequests

ASSIGNED = 'Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "n"'
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "default", "resourceVersion": "7"}}


def status(code: int, reason: str, message: str, **details) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason}
    return web.json_response({**body, "code": code, "details": details}, status=code)


def success(code: int = 201) -> web.Response:
    return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Success", "code": code}, status=code)


def recording_app(reply=lambda request, body: web.json_response(POD)):
    """An app that records (method, path, query, content type, body) and answers with `reply`."""
    seen = []

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        seen.append((request.method, request.path, dict(request.query), request.headers.get("Content-Type", ""), body))
        return reply(request, body)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app, seen


def test_each_call_goes_to_its_url(serve, client_for):
    pod = make_pod("a", namespace="team").obj
    binding = core_v1.Binding(metadata=meta_v1.ObjectMeta(name="a"), target=m.ObjectReference(kind="Node", name="n1"))
    event = events_v1.Event(metadata=meta_v1.ObjectMeta(name="e"), eventTime=datetime(2026, 1, 1, tzinfo=UTC))

    async def main():
        def reply(request, body):
            if request.path.endswith("/binding"):
                return success()
            if request.method in ("POST", "PUT"):  # the object sent, as created or updated
                return web.Response(body=body, content_type="application/json")
            return web.json_response(POD)

        app, seen = recording_app(reply)
        async with serve(app) as url, client_for(url) as c:
            await c.get(core_v1.Pod, "a")
            await c.get(core_v1.Node, "n1", namespace="ignored")
            await c.list(
                core_v1.Pod, label_selector="app=x", field_selector="spec.nodeName=", limit=2, continue_token="t"
            )
            await c.list(policy_v1.PodDisruptionBudget, namespace="ns")
            await c.create(pod)
            await c.create(event, namespace="ns")
            await c.update(pod, subresource="status")
            await c.patch(core_v1.Pod, "a", {"status": {}}, namespace="x", subresource="status", patch_type="strategic")
            await c.patch(core_v1.Node, "n1", [{"op": "add", "path": "/a", "value": 1}], patch_type="json")
            await c.delete(core_v1.Pod, "a", grace_period_seconds=0)
            await c.bind(binding, namespace="ns")
        return seen

    seen = asyncio.run(main())
    assert [(method, path, query, ctype) for method, path, query, ctype, _ in seen] == [
        ("GET", "/api/v1/namespaces/default/pods/a", {}, ""),
        ("GET", "/api/v1/nodes/n1", {}, ""),
        (
            "GET",
            "/api/v1/pods",
            {"labelSelector": "app=x", "fieldSelector": "spec.nodeName=", "limit": "2", "continue": "t"},
            "",
        ),
        ("GET", "/apis/policy/v1/namespaces/ns/poddisruptionbudgets", {}, ""),
        ("POST", "/api/v1/namespaces/team/pods", {}, "application/json"),
        ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", {}, "application/json"),
        ("PUT", "/api/v1/namespaces/team/pods/a/status", {}, "application/json"),
        ("PATCH", "/api/v1/namespaces/x/pods/a/status", {}, "application/strategic-merge-patch+json"),
        ("PATCH", "/api/v1/nodes/n1", {}, "application/json-patch+json"),
        ("DELETE", "/api/v1/namespaces/default/pods/a", {"gracePeriodSeconds": "0"}, ""),
        ("POST", "/api/v1/namespaces/ns/pods/a/binding", {}, "application/json"),
    ]
    bodies = [msgspec.json.decode(body) if body else None for *_, body in seen]
    assert bodies[4]["metadata"] == {"name": "a", "namespace": "team"}
    assert bodies[7] == {"status": {}}
    assert bodies[10] == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "a"},
        "target": {"kind": "Node", "name": "n1"},
    }


def test_replies_decode_into_lightkube_structs(serve, client_for):
    page = {
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "12", "continue": "next", "remainingItemCount": 3},
        "items": [POD, {**POD, "metadata": {"name": "b", "creationTimestamp": "2026-01-01T00:00:00Z"}}],
    }

    def reply(request, body):
        if request.query.get("limit"):
            return web.json_response(page)
        if request.path == "/api/v1/nodes":
            return web.json_response({"kind": "NodeList", "metadata": {"resourceVersion": "12"}, "items": None})
        return web.json_response(POD)

    async def main():
        app, _ = recording_app(reply)
        async with serve(app) as url, client_for(url) as c:
            return await c.get(core_v1.Pod, "a"), await c.list(core_v1.Pod, limit=2), await c.list(core_v1.Node)

    pod, listed, nodes = asyncio.run(main())
    assert isinstance(pod, core_v1.Pod) and pod.metadata.resourceVersion == "7"
    assert [p.metadata.name for p in listed.items] == ["a", "b"]
    assert listed.items[1].metadata.creationTimestamp.year == 2026
    assert (listed.resource_version, listed.continue_token, listed.remaining) == ("12", "next", 3)
    assert (nodes.items, nodes.resource_version, nodes.continue_token, nodes.remaining) == ([], "12", None, None)


def test_error_replies_become_typed_errors(serve, client_for):
    def reply(request, body):
        name = request.path.rsplit("/", 1)[-1]
        if request.method == "POST":
            return status(409, "AlreadyExists", 'pods "a" already exists', name="a", kind="pods")
        if name == "invalid":
            return status(
                422,
                "Invalid",
                'Pod "invalid" is invalid: spec.nodeName: Forbidden',
                name="invalid",
                kind="Pod",
                causes=[{"reason": "FieldValueForbidden", "message": "Forbidden", "field": "spec.nodeName"}],
            )
        return status(404, "NotFound", f'pods "{name}" not found', name=name, kind="pods")

    async def main():
        app, _ = recording_app(reply)
        errors = []
        async with serve(app) as url, client_for(url) as c:
            for call in (
                c.get(core_v1.Pod, "missing"),
                c.create(make_pod("a").obj),
                c.patch(core_v1.Pod, "invalid", {}),
            ):
                try:
                    await call
                except Exception as e:
                    errors.append(e)
        return errors

    missing, exists, invalid = asyncio.run(main())
    assert type(missing) is NotFound and (str(missing), missing.name, missing.kind) == (
        'pods "missing" not found',
        "missing",
        "pods",
    )
    assert type(exists) is AlreadyExists
    assert type(invalid) is Invalid and invalid.causes() == [
        {"reason": "FieldValueForbidden", "message": "Forbidden", "field": "spec.nodeName"}
    ]


def test_a_kind_the_server_does_not_serve_is_not_served(serve, client_for):
    unknown = {"kind": "Status", "status": "Failure", "message": "the server could not find the requested resource"}
    discovery = {"kind": "APIResourceList", "groupVersion": "v1", "resources": [{"name": "pods"}]}

    async def handle(request):
        if request.path == "/api/v1":
            return web.json_response(discovery)
        if request.path.startswith("/api/v1/namespaces/default/pods/"):
            return status(404, "NotFound", "the server could not find the requested resource")
        return web.json_response({**unknown, "reason": "NotFound", "code": 404}, status=404)

    async def main():
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        async with serve(app) as url, client_for(url) as c:
            results = []
            for call in (
                c.list(policy_v1.PodDisruptionBudget),
                c.list(core_v1.Node),
                c.get(core_v1.Pod, "a"),
            ):
                try:
                    await call
                except NotFound as e:
                    results.append(e)
            served = [await c.serves(k) for k in (core_v1.Pod, core_v1.Node, policy_v1.PodDisruptionBudget)]
            return results, served

    (pdbs, nodes, pod), served = asyncio.run(main())
    assert type(pdbs) is NotServed and str(pdbs) == "the server does not serve poddisruptionbudgets.policy (policy/v1)"
    assert type(nodes) is NotServed and nodes.kind == "nodes"
    assert type(pod) is NotFound  # pods are in discovery: this 404 is about the object
    assert served == [True, False, False]


def test_binding_replies(serve, client_for):
    replies = iter(
        [
            success(201),
            web.json_response({"kind": "Status", "status": "Success", "code": 200}),
            web.json_response(
                {
                    "kind": "Status",
                    "status": "Failure",
                    "reason": "Conflict",
                    "code": 409,
                    "message": ASSIGNED,
                }
            ),
            status(409, "Conflict", 'Operation cannot be fulfilled on pods/binding "a": already assigned'),
        ]
    )
    binding = core_v1.Binding(metadata=meta_v1.ObjectMeta(name="a"), target=m.ObjectReference(kind="Node", name="n"))

    async def main():
        app, _ = recording_app(lambda r, b: next(replies))
        outcomes = []
        async with serve(app) as url, client_for(url) as c:
            for _ in range(4):
                try:
                    outcomes.append(await c.bind(binding))
                except Conflict as e:
                    outcomes.append(e.message)
        return outcomes

    assert asyncio.run(main()) == [
        None,
        None,
        ASSIGNED,
        'Operation cannot be fulfilled on pods/binding "a": already assigned',
    ]


def test_delete_returns_the_object_or_none_for_a_status(serve, client_for):
    replies = iter([web.json_response(POD, status=202), success(200)])

    async def main():
        app, _ = recording_app(lambda r, b: next(replies))
        async with serve(app) as url, client_for(url) as c:
            return await c.delete(core_v1.Pod, "a"), await c.delete(core_v1.Pod, "a")

    pod, gone = asyncio.run(main())
    assert pod.metadata.name == "a" and gone is None


def test_retry_after_is_honoured_and_plain_429_is_not_retried(serve, client_for):
    replies = iter(
        [
            web.json_response({}, status=429, headers={"Retry-After": "0"}),
            web.json_response({}, status=503, headers={"Retry-After": "0"}),
            web.json_response(POD),
            status(429, "TooManyRequests", "Cannot evict pod"),
        ]
    )

    async def main():
        app, seen = recording_app(lambda r, b: next(replies))
        async with serve(app) as url, client_for(url) as c:
            pod = await c.get(core_v1.Pod, "a")
            with pytest.raises(TooManyRequests, match="Cannot evict pod"):
                await c.get(core_v1.Pod, "a")
        return pod, len(seen)

    pod, requests = asyncio.run(main())
    assert pod.metadata.name == "a" and requests == 4


def test_client_side_checks_need_no_request(client_for):
    async def main():
        async with client_for("http://127.0.0.1:9") as c:
            with pytest.raises(BadRequest, match="unsupported patch type 'apply'"):
                await c.patch(core_v1.Pod, "a", {}, patch_type="apply")
            with pytest.raises(Invalid, match=r'Pod "" is invalid: metadata.name: Required value: name is required'):
                await c.update(core_v1.Pod(metadata=meta_v1.ObjectMeta()))
            with pytest.raises(NotFound, match='pods "" not found'):
                await c.get(core_v1.Pod, "")
            with pytest.raises(TypeError):
                await c.get(dict, "a")

    asyncio.run(main())


def test_an_unreachable_server_is_connection_failed(client_for):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def main():
        async with client_for(f"http://127.0.0.1:{port}") as c:
            with pytest.raises(ConnectionFailed, match=f"GET http://127.0.0.1:{port}/api/v1/nodes"):
                await c.list(core_v1.Node)

    asyncio.run(main())


def test_requests_are_rate_limited_but_watches_are_not(serve, client_for):
    async def main():
        app, _ = recording_app()
        async with serve(app) as url, client_for(url, qps=20, burst=2) as c:
            start = time.perf_counter()
            for _ in range(5):
                await c.get(core_v1.Pod, "a")
            limited = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(3):
                (await c.transport.stream("/api/v1/pods", {"watch": "1"}, timeout=5)).close()
            return limited, time.perf_counter() - start

    limited, watches = asyncio.run(main())
    assert 0.14 <= limited < 1.0  # 3 requests beyond the burst, 50 ms apart
    assert watches < 0.1
