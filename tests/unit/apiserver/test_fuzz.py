"""Fuzzed requests against the embedded API server: random verbs, paths, query parameters,
content types and bodies — valid objects of every served kind with one part replaced by random
JSON among them — must never get a 5xx, must leave the server answering, and when refused must
change nothing. KUBESCHED_FUZZ_EXAMPLES runs more (and new) examples than `make test` does."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import msgspec
import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod
from kubesched.apiserver.server import ApiServer
from kubesched.clock import RealClock
from kubesched.cluster.kinds import KINDS, Kind
from kubesched.storage import MemoryStore

EXAMPLES = int(os.environ.get("KUBESCHED_FUZZ_EXAMPLES", "0"))
SERVED: list[Kind] = sorted(KINDS.values(), key=lambda k: (k.group, k.plural))
NAMES = ["fz", "fz-2", "default", "kube-system", "node-0", "", "a" * 300, "Bad_Name", "%2e%2e"]
CONTENT_TYPES = [
    "application/json",
    "application/yaml",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/vnd.kubernetes.protobuf",
    "text/plain",
    "",
    "application/json; charset=utf-8",
]
PARAMS = [
    "resourceVersion",
    "resourceVersionMatch",
    "labelSelector",
    "fieldSelector",
    "limit",
    "continue",
    "fieldValidation",
    "propagationPolicy",
    "gracePeriodSeconds",
    "dryRun",
    "includeObject",
    "timeoutSeconds",
    "pretty",
    "fieldManager",
    "force",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["100m", "1Gi", "-1", "1e400", "0x10", "", "Always", "default", "node-0", "In", "Exists"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


def seed(kind: Kind) -> dict[str, Any]:
    """A valid object of `kind` to mutate: rich ones for pods and nodes, a bare one otherwise."""
    if kind.kind == "Pod":
        pod = (
            make_pod("fz")
            .req(cpu="100m", memory="64Mi")
            .labels(app="web")
            .toleration(key="k", operator="Exists")
            .node_affinity_in("zone", ["a", "b"])
            .obj
        )
        return msgspec.to_builtins(pod)
    if kind.kind == "Node":
        return msgspec.to_builtins(make_node("fz").capacity(cpu=4).labels(zone="a").taint("k", "v").obj)
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": {"name": "fz", "labels": {"a": "b"}}}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, kind: Kind) -> Any:
    """`kind`'s seed with one part (any depth) replaced by random JSON, or a key added beside it."""
    obj = seed(kind)
    paths = _paths(obj)[1:]
    path = draw(st.sampled_from(paths))
    target = obj
    for step in path[:-1]:
        target = target[step]
    if isinstance(target, dict) and draw(st.booleans()):
        target[draw(st.text(max_size=8))] = draw(json_values)
    else:
        target[path[-1]] = draw(json_values)
    return obj


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, dict[str, str], str, bytes | None]:
    kind = draw(st.sampled_from(SERVED))
    method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]))
    prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    namespace = draw(st.sampled_from(["default", "nowhere", "kube-system"]))
    path = prefix + (f"/namespaces/{namespace}" if kind.namespaced else "") + f"/{kind.plural}"
    if method in ("PUT", "PATCH", "DELETE") or draw(st.booleans()):
        path += "/" + draw(st.sampled_from(NAMES))
        if draw(st.integers(0, 3)) == 0:
            path += "/" + draw(st.sampled_from([*kind.subresources, "status", "binding", "eviction", "nope"]))
    params = draw(st.dictionaries(st.sampled_from(PARAMS), st.text(max_size=12), max_size=3))
    content_type = draw(st.sampled_from(CONTENT_TYPES))
    body: bytes | None = None
    if method in ("POST", "PUT", "PATCH") or draw(st.integers(0, 4)) == 0:
        which = draw(st.integers(0, 4))
        if which <= 2:
            body = json.dumps(draw(mutated(kind)), allow_nan=False).encode()
        elif which == 3:
            body = json.dumps(draw(json_values), allow_nan=False).encode()
        else:
            body = draw(st.binary(max_size=64))
    return method, path, params, content_type, body


@pytest.fixture(scope="module")
def server():
    runner = asyncio.Runner()
    store = MemoryStore(clock=RealClock())
    for i in range(2):
        store.create(make_node(f"node-{i}").capacity(cpu=4).obj)

    async def start() -> TestClient:
        client = TestClient(TestServer(ApiServer(store).app))
        await client.start_server()
        return client

    client = runner.run(start())
    yield runner, client, store
    runner.run(client.close())
    runner.close()


@settings(
    max_examples=EXAMPLES or 250,
    derandomize=not EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(requests())
def test_no_request_gets_a_5xx_and_a_refused_one_changes_nothing(server, request):
    runner, client, store = server
    method, path, params, content_type, body = request
    headers = {"Content-Type": content_type} if content_type else {}

    async def send() -> tuple[int, bytes]:
        async with client.request(method, path, params=params, data=body, headers=headers) as response:
            if response.headers.get("Transfer-Encoding") == "chunked":
                response.close()  # a watch streams on: drop its connection
                return response.status, b""
            return response.status, await response.read()

    before = store.resource_version
    status, answer = runner.run(send())
    # the one 5xx kube-apiserver answers a good request with: a version newer than any it has
    too_large = status == 504 and b"Too large resource version" in answer
    assert status < 500 or too_large, (method, path, params, content_type, body, answer[:300])
    if status >= 400:
        assert store.resource_version == before, (status, method, path, params, body)

    async def alive() -> int:
        async with client.get("/api/v1/namespaces/default") as response:
            return response.status

    assert runner.run(alive()) == 200
