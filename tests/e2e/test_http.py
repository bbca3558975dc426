"""Raw HTTP against the embedded API server: the one-POST binding, and errors as Status objects."""

from __future__ import annotations

import json
import ssl
import subprocess
import urllib.error
import urllib.request

import pytest

from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.cluster.kinds import KINDS

JSON = "application/json"


def call(url, method="GET", body=None, content_type="application/json", token=None, ca=None):
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    context = ssl.create_default_context(cadata=ca.decode()) if ca else None
    try:
        with urllib.request.urlopen(req, context=context) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def pod(name, cpu="100m", **metadata):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **metadata},
        "spec": {"containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]},
    }


DECODE = 'Pod in version "v1" cannot be handled as a Pod: '
LABEL = DECODE + "json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.labels of type string"
QUANTITY = DECODE + "spec.containers.resources.requests[cpu]: quantities must match the regular expression"


def pods_url(cluster, name=""):
    return f"{cluster.url}/api/v1/namespaces/default/pods" + (f"/{name}" if name else "")


def curl_binding(cluster, name, node):
    binding = json.dumps(
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": node}}
    )
    out = subprocess.run(
        [
            "curl",
            "-s",
            "-w",
            "\n%{http_code}",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data",
            binding,
            f"{pods_url(cluster, name)}/binding",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    ).stdout
    body, code = out.rsplit("\n", 1)
    return int(code), json.loads(body)


def test_one_post_binds_a_pod_and_a_second_is_refused(cluster):
    assert call(pods_url(cluster), "POST", pod("one-post"))[0] == 201
    code, status = curl_binding(cluster, "one-post", "node-2")
    assert (code, status["status"]) == (201, "Success")
    assert call(pods_url(cluster, "one-post"))[1]["spec"]["nodeName"] == "node-2"
    code, status = curl_binding(cluster, "one-post", "node-1")
    assert code == 409
    assert status["reason"] == "Conflict"
    assert (
        status["message"]
        == 'Operation cannot be fulfilled on pods/binding "one-post": pod one-post is already assigned to node "node-2"'
    )


def _count(cluster):
    return len(call(pods_url(cluster))[1]["items"])


@pytest.mark.parametrize(
    ("method", "path", "body", "content_type", "code", "reason", "message"),
    [
        (
            "POST",
            "/api/v1/namespaces/default/pods",
            b"{not json",
            "application/json",
            400,
            "BadRequest",
            "could not be decoded",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/widgets",
            pod("w"),
            "application/json",
            404,
            "NotFound",
            "could not find the requested resource",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/pods",
            pod("q", cpu="lots"),
            "application/json",
            422,
            "Invalid",
            'Pod "q" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "lots"',
        ),
        (
            "POST",
            "/api/v1/namespaces/default/pods",
            b"\x08\x01",
            "application/cbor",
            415,
            "UnsupportedMediaType",
            "unknown format",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/pods",
            b"\x08\x01",
            "application/vnd.kubernetes.protobuf",
            400,
            "BadRequest",
            "does not start with the protobuf prefix",
        ),
        (
            "POST",
            "/api/v1/namespaces/nowhere/pods",
            pod("n"),
            "application/json",
            404,
            "NotFound",
            'namespaces "nowhere" not found',
        ),
        (
            "GET",
            "/api/v1/namespaces/default/pods/missing",
            None,
            "application/json",
            404,
            "NotFound",
            'pods "missing" not found',
        ),
        (
            "GET",
            "/api/v1/namespaces/default/pods?watch=true&resourceVersion=abc",
            None,
            "application/json",
            400,
            "BadRequest",
            "invalid resource version",
        ),
        (
            "GET",
            "/api/v1/namespaces/default/pods?resourceVersion=9000000000000000000",
            None,
            JSON,
            504,
            "Timeout",
            "Timeout: Too large resource version: 9000000000000000000, current: ",
        ),
        *[
            ("POST", "/api/v1/namespaces/default/pods", pod("t", labels={"a": value}), JSON, 400, "BadRequest", text)
            for value, text in [
                (1, LABEL.format("number")),
                (True, LABEL.format("bool")),
                ([1], LABEL.format("array")),
                ({"b": 1}, LABEL.format("object")),
            ]
        ],
        (
            "POST",
            "/api/v1/namespaces/default/pods",
            pod("t", annotations={"a": 2}),
            JSON,
            400,
            "BadRequest",
            DECODE
            + "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.annotations of type string",
        ),
        *[
            ("POST", "/api/v1/namespaces/default/pods", pod("t", cpu=value), JSON, 400, "BadRequest", QUANTITY)
            for value in ([1], {"a": 1}, True)
        ],
        *[
            ("POST", "/api/v1/namespaces/default/pods", body, content_type, 400, "BadRequest", "nested too deeply")
            for body, content_type in [
                (b"[" * 1000 + b"]" * 1000, JSON),
                (b'{"a":' * 1000 + b"1" + b"}" * 1000, JSON),
                (b"a: " + b"[" * 1000 + b"]" * 1000, "application/yaml"),
            ]
        ],
        (
            "PATCH",
            "/api/v1/namespaces/default/pods/fixture",
            {"metadata": {"labels": {"a": 1}}},
            "application/merge-patch+json",
            400,
            "BadRequest",
            "the patch could not be applied: json: cannot unmarshal number into Go struct field "
            "ObjectMeta.metadata.labels of type string",
        ),
    ],
)
def test_bad_requests_get_status_objects_and_change_nothing(
    cluster, method, path, body, content_type, code, reason, message
):
    call(pods_url(cluster), "POST", pod("fixture", cpu="0"))  # what a PATCH targets (201, or 409 once there)

    def state():
        names = {p["metadata"]["name"] for p in call(pods_url(cluster))[1]["items"]}
        return names, call(pods_url(cluster, "fixture"))[1]["metadata"]["resourceVersion"]

    before = state()
    got, status = call(cluster.url + path, method, body, content_type)
    assert got == code
    assert status["kind"] == "Status" and status["reason"] == reason and status["code"] == code
    assert message in status["message"]
    assert state() == before


def test_invalid_status_lists_field_causes(cluster):
    code, status = call(pods_url(cluster), "POST", pod("bad-cpu", cpu="-1"))
    assert code == 422
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "-1": must be greater than or equal to 0',
            "field": "spec.containers[0].resources.requests[cpu]",
        }
    ]


def test_too_large_body_is_refused(cluster):
    big = pod("huge")
    big["metadata"]["annotations"] = {"blob": "x" * (4 * 1024 * 1024)}
    code, status = call(pods_url(cluster), "POST", big)
    assert code == 413 and status["reason"] == "RequestEntityTooLarge"


def test_too_old_watch_is_an_error_event():
    with ClusterThread(ClusterSpec(nodes=0, port=0, history=5)) as small:
        for i in range(8):
            call(pods_url(small), "POST", pod(f"churn-{i}"))
        with urllib.request.urlopen(f"{pods_url(small)}?watch=true&resourceVersion=1") as resp:
            event = json.loads(resp.readline())
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
    assert event["object"]["message"].startswith("too old resource version: 1 (")


def test_token_is_required_when_configured():
    with ClusterThread(ClusterSpec(nodes=1, port=0, token="s3cret")) as secured:
        ca = secured.ca_pem
        nodes_url = f"{secured.url}/api/v1/nodes"
        code, status = call(nodes_url, ca=ca)
        assert (code, status["reason"], status["message"]) == (401, "Unauthorized", "Unauthorized")
        assert call(nodes_url, token="wrong", ca=ca)[0] == 401
        code, nodes = call(nodes_url, token="s3cret", ca=ca)
        assert code == 200 and [n["metadata"]["name"] for n in nodes["items"]] == ["node-0"]
        pods = f"{secured.url}/api/v1/namespaces/default/pods"
        assert call(pods, "POST", pod("x"), token="wrong", ca=ca)[0] == 401
        assert call(pods, token="s3cret", ca=ca)[1]["items"] == []
        with pytest.raises(urllib.error.URLError):  # the certificate is not trusted without its CA
            call(nodes_url, token="s3cret")


def test_no_files_are_served(cluster):
    for path in ("/etc/passwd", "/../../etc/passwd", "/static/../../pyproject.toml", "/api/v1/../../../etc/hosts"):
        code, status = call(cluster.url + path)
        assert code == 404 and status["kind"] == "Status"


def test_list_paging(cluster):
    for i in range(5):
        call(pods_url(cluster), "POST", pod(f"page-{i}"))
    code, first = call(f"{pods_url(cluster)}?limit=2&labelSelector=")
    assert code == 200 and len(first["items"]) == 2 and first["metadata"]["continue"]
    names = [p["metadata"]["name"] for p in first["items"]]
    token = first["metadata"]["continue"]
    while token:
        _, page = call(f"{pods_url(cluster)}?limit=2&continue={token}")
        names += [p["metadata"]["name"] for p in page["items"]]
        token = page["metadata"].get("continue")
    assert names == sorted(names) and len(names) == len(set(names)) == _count(cluster)


def _watch_lines(url, count):
    with urllib.request.urlopen(url) as resp:
        assert resp.headers["Content-Type"] == "application/json"
        return [json.loads(resp.readline()) for _ in range(count)]


def test_watch_bookmarks_carry_the_current_version(cluster):
    _, listed = call(pods_url(cluster))
    rv = listed["metadata"]["resourceVersion"]
    quiet = "labelSelector=nothing%3Dmatches"  # no event but bookmarks
    url = f"{pods_url(cluster)}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=3&{quiet}"
    (event,) = _watch_lines(url, 1)
    assert event["type"] == "BOOKMARK"
    assert event["object"]["kind"] == "Pod" and int(event["object"]["metadata"]["resourceVersion"]) >= int(rv)


def test_watch_with_initial_events_ends_them_with_a_bookmark(cluster):
    call(
        pods_url(cluster), "POST", {**pod("initial-a"), "metadata": {"name": "initial-a", "labels": {"set": "initial"}}}
    )
    url = (
        f"{pods_url(cluster)}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        "&allowWatchBookmarks=true&labelSelector=set%3Dinitial&timeoutSeconds=3"
    )
    added, bookmark = _watch_lines(url, 2)
    assert (added["type"], added["object"]["metadata"]["name"]) == ("ADDED", "initial-a")
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_discovery_lists_short_names_and_subresources(cluster):
    _, core = call(f"{cluster.url}/api/v1")
    pods = next(r for r in core["resources"] if r["name"] == "pods")
    assert pods["shortNames"] == ["po"] and "all" in pods["categories"]
    assert {r["name"] for r in core["resources"]} >= {"pods/binding", "pods/status", "pods/eviction", "nodes/status"}
    _, groups = call(f"{cluster.url}/apis")
    names = {g["name"] for g in groups["groups"]}
    assert names >= {
        "apps",
        "policy",
        "scheduling.k8s.io",
        "coordination.k8s.io",
        "events.k8s.io",
        "resource.k8s.io",
        "storage.k8s.io",
    }


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=lambda k: k.qualified)
def test_a_watch_list_ends_its_initial_events_with_a_bookmark_on_every_served_kind(cluster, kind):
    """Bookmarks carry only the kind and a resourceVersion: no kind's required fields can break a stream."""
    base = f"{cluster.url}/{'api' if not kind.group else 'apis/' + kind.group}/{kind.version}/{kind.plural}"
    url = (
        f"{base}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        "&labelSelector=nothing%3Dmatches&timeoutSeconds=2"
    )
    with urllib.request.urlopen(url) as resp:
        assert resp.status == 200
        body = resp.read().decode()  # the whole stream, to its end: nothing but events
    events = [json.loads(line) for line in body.splitlines() if line]
    assert events and events[0]["type"] == "BOOKMARK"
    assert events[0]["object"]["kind"] == kind.kind and events[0]["object"]["apiVersion"] == kind.api_version
    assert events[0]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert all(e["type"] == "BOOKMARK" for e in events)


def _replica_set(name):
    labels = {"app": name}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    spec = {"replicas": 0, "selector": {"matchLabels": labels}, "template": template}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize(
    ("method", "body", "content_type", "code", "replicas"),
    [
        ("PUT", {"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": 2}}, JSON, 200, 2),
        ("PATCH", {"spec": {"replicas": 4}}, "application/merge-patch+json", 200, 4),
        ("PATCH", [{"op": "replace", "path": "/spec/replicas", "value": 1}], "application/json-patch+json", 200, 1),
        ("PUT", {"spec": {"replicas": -1}}, JSON, 422, 0),
        ("PATCH", {"spec": {"replicas": 3}}, "text/plain", 415, 0),
    ],
)
def test_the_scale_subresource_reads_and_writes_spec_replicas(cluster, method, body, content_type, code, replicas):
    name = f"scaled-{method.lower()}-{code}-{replicas}"
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "scaling"}}
    assert call(f"{cluster.url}/api/v1/namespaces", "POST", namespace)[0] in (201, 409)  # its pods out of others' way
    base = f"{cluster.url}/apis/apps/v1/namespaces/scaling/replicasets"
    assert call(base, "POST", _replica_set(name))[0] == 201
    status, scale = call(f"{base}/{name}/scale")
    assert status == 200 and scale["kind"] == "Scale" and scale["status"]["selector"] == f"app={name}"
    assert call(f"{base}/{name}/scale", method, body, content_type=content_type)[0] == code
    assert call(f"{base}/{name}")[1]["spec"]["replicas"] == replicas


def _config_map(name, value):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"value": value}}


def _unsupported_dry_run(value):
    return 'is invalid: dryRun: Unsupported value: []string{"' + value + '"}: supported values: "All"'


@pytest.mark.parametrize(
    ("method", "name", "query", "body", "content_type", "code", "answered"),
    [
        ("POST", "", "?dryRun=All", _config_map("fresh", "1"), JSON, 201, "1"),
        ("PUT", "settings", "?dryRun=All", _config_map("settings", "2"), JSON, 200, "2"),
        ("PATCH", "settings", "?dryRun=All", {"data": {"value": "3"}}, "application/merge-patch+json", 200, "3"),
        ("DELETE", "settings", "?dryRun=All", None, JSON, 200, "0"),
        ("DELETE", "settings", "", {"kind": "DeleteOptions", "dryRun": ["All"]}, JSON, 200, "0"),
        ("DELETE", "", "?dryRun=All", None, JSON, 200, None),
        ("POST", "", "?dryRun=Some", _config_map("fresh", "1"), JSON, 422, _unsupported_dry_run("Some")),
        ("PATCH", "settings", "?dryRun=", {"data": {}}, "application/merge-patch+json", 422, "supported values"),
        ("DELETE", "settings", "", {"dryRun": ["Later"]}, JSON, 422, _unsupported_dry_run("Later")),
    ],
)
def test_a_dry_run_answers_what_would_be_and_changes_nothing(
    cluster, method, name, query, body, content_type, code, answered
):
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dry-run"}}
    assert call(f"{cluster.url}/api/v1/namespaces", "POST", namespace)[0] in (201, 409)
    base = f"{cluster.url}/api/v1/namespaces/dry-run/configmaps"
    assert call(base, "POST", _config_map("settings", "0"))[0] in (201, 409)
    before = call(base)[1]["items"]
    got, answer = call(f"{base}/{name}{query}" if name else f"{base}{query}", method, body, content_type)
    assert got == code
    if code >= 400:
        assert answer["reason"] == "Invalid" and answered in answer["message"]
    elif answered is not None:
        assert answer["data"]["value"] == answered
    assert call(base)[1]["items"] == before
    assert call(f"{base}/fresh")[0] == 404


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"dryRun": 5}, "number into Go struct field DeleteOptions.dryRun of type []string"),
        ({"preconditions": "x"}, "string into Go struct field DeleteOptions.preconditions of type v1.Preconditions"),
        ({"preconditions": {"uid": 7}}, "number into Go struct field DeleteOptions.preconditions.uid of type string"),
        ({"gracePeriodSeconds": "x"}, "string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"),
        ({"gracePeriodSeconds": True}, "bool into Go struct field DeleteOptions.gracePeriodSeconds of type int64"),
        ({"orphanDependents": "yes"}, "string into Go struct field DeleteOptions.orphanDependents of type bool"),
        ({"propagationPolicy": 1}, "number into Go struct field DeleteOptions.propagationPolicy"),
    ],
    ids=["dry-run", "preconditions", "precondition-uid", "grace", "grace-bool", "orphan", "propagation"],
)
def test_mistyped_delete_options_are_refused_and_delete_nothing(cluster, options, said):
    base = f"{cluster.url}/api/v1/namespaces/default/configmaps"
    assert call(base, "POST", _config_map("kept", "1"))[0] in (201, 409)
    got, answer = call(f"{base}/kept", "DELETE", options)
    assert (got, answer["reason"]) == (400, "BadRequest") and said in answer["message"]
    assert call(f"{base}/kept")[0] == 200


def test_a_dry_run_binding_leaves_the_pod_unbound(cluster):
    assert call(pods_url(cluster), "POST", pod("dry-bound"))[0] == 201
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "dry-bound"}, "target": {"name": "node-0"}}
    assert call(f"{pods_url(cluster, 'dry-bound')}/binding?dryRun=All", "POST", binding)[0] == 201
    assert "nodeName" not in call(pods_url(cluster, "dry-bound"))[1]["spec"]
    code, status = call(f"{pods_url(cluster, 'dry-bound')}/binding?dryRun=All", "POST", {**binding, "target": {}})
    assert code == 422 and "target.name: Required value" in status["message"]


APPLY = "application/apply-patch+yaml"


@pytest.mark.parametrize(
    ("query", "body", "content_type", "code", "said"),
    [
        ("?fieldManager=alice", _config_map("applied", "2"), APPLY, 200, None),
        ("?fieldManager=bob", _config_map("applied", "3"), APPLY, 409, 'conflict with "alice": .data.value'),
        ("?fieldManager=bob&force=true", _config_map("applied", "3"), APPLY, 200, None),
        ("", _config_map("applied", "3"), APPLY, 422, "fieldManager: Required value: is required for apply patch"),
        ("?fieldManager=" + "m" * 129, _config_map("applied", "3"), APPLY, 422, "may not be more than 128 bytes"),
        ("?force=true", {"data": {}}, "application/merge-patch+json", 422, "force: Forbidden"),
        ("?fieldManager=alice", {**_config_map("applied", "3"), "apiVersion": "v2"}, APPLY, 400, "expected: v1"),
        ("?fieldManager=alice", b"data: [unclosed", APPLY, 400, "could not be decoded"),
        (
            "?fieldManager=alice&fieldValidation=Strict",
            {**_config_map("applied", "3"), "bogus": 1},
            APPLY,
            400,
            'strict decoding error: unknown field "bogus"',
        ),
    ],
    ids=[
        "same-manager",
        "conflict",
        "forced",
        "no-manager",
        "long-manager",
        "force-not-apply",
        "version",
        "yaml",
        "strict",
    ],
)
def test_server_side_apply_over_http(cluster, query, body, content_type, code, said):
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "applied"}}
    assert call(f"{cluster.url}/api/v1/namespaces", "POST", namespace)[0] in (201, 409)
    url = f"{cluster.url}/api/v1/namespaces/applied/configmaps/applied"
    call(url, "DELETE")
    first = call(f"{url}?fieldManager=alice", "PATCH", _config_map("applied", "1"), APPLY)
    assert first[0] == 201 and [e["manager"] for e in first[1]["metadata"]["managedFields"]] == ["alice"]
    got, answer = call(f"{url}{query}", "PATCH", body, content_type)
    assert got == code, answer
    if said is not None:
        assert said in answer["message"]
        assert call(url)[1]["data"] == {"value": "1"}  # refused: unchanged
    if code == 409:
        assert answer["reason"] == "Conflict"
        assert answer["details"]["causes"] == [
            {"type": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".data.value"}
        ]


def test_writes_are_recorded_for_their_manager_or_user_agent(cluster):
    base = f"{cluster.url}/api/v1/namespaces/default/configmaps"
    call(f"{base}/agent", "DELETE")
    req = urllib.request.Request(
        base,
        data=json.dumps(_config_map("agent", "1")).encode(),
        method="POST",
        headers={"Content-Type": JSON, "User-Agent": "my-controller/0.3 (linux)"},
    )
    with urllib.request.urlopen(req) as resp:
        created = json.loads(resp.read())
    assert [(e["manager"], e["operation"]) for e in created["metadata"]["managedFields"]] == [
        ("my-controller", "Update")
    ]
    got, patched = call(
        f"{base}/agent?fieldManager=editor", "PATCH", {"data": {"other": "x"}}, "application/merge-patch+json"
    )
    assert got == 200
    editor = next(e for e in patched["metadata"]["managedFields"] if e["manager"] == "editor")
    assert editor["fieldsV1"] == {"f:data": {"f:other": {}}}


def _access_review(**spec):
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec}


@pytest.mark.parametrize(
    ("path", "body", "code", "said"),
    [
        ("selfsubjectaccessreviews", _access_review(resourceAttributes={"verb": "get", "resource": "pods"}), 201, None),
        (
            "selfsubjectaccessreviews",
            _access_review(),
            422,
            "exactly one of nonResourceAttributes or resourceAttributes",
        ),
        (
            "selfsubjectaccessreviews",
            _access_review(resourceAttributes={"verb": "get"}, nonResourceAttributes={"path": "/x", "verb": "get"}),
            422,
            "cannot be specified in combination with resourceAttributes",
        ),
        (
            "subjectaccessreviews",
            {"spec": {"resourceAttributes": {"verb": "get"}}},
            422,
            "at least one of user or group",
        ),
        (
            "namespaces/default/localsubjectaccessreviews",
            {"spec": {"user": "bob", "resourceAttributes": {"verb": "get", "namespace": "other"}}},
            422,
            "must match metadata.namespace",
        ),
        ("subjectaccessreviews", {"spec": {"groups": 5, "resourceAttributes": {"verb": "get"}}}, 400, "spec.groups"),
        ("subjectaccessreviews", {"spec": {"groups": [5], "resourceAttributes": {"verb": "get"}}}, 400, "[]string"),
        ("selfsubjectaccessreviews", [1, 2], 400, "must be an object"),
        ("namespaces/default/selfsubjectaccessreviews", _access_review(), 404, None),
    ],
)
def test_access_reviews_allow_everything_well_formed(cluster, path, body, code, said):
    got, answer = call(f"{cluster.url}/apis/authorization.k8s.io/v1/{path}", "POST", body)
    assert got == code, answer
    if code == 201:
        assert answer["status"] == {"allowed": True} and answer["spec"] == body["spec"]
    elif said:
        assert said in answer["message"]


def _pdb(api_version, name, selector):
    return {
        "apiVersion": api_version,
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"minAvailable": 1, "selector": selector},
    }


V1BETA1_LABEL = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"


@pytest.mark.parametrize(
    ("written_as", "selector", "read_as", "seen"),
    [
        ("v1beta1", {}, "v1", {"matchExpressions": [{"key": V1BETA1_LABEL, "operator": "Exists"}]}),
        ("v1", {}, "v1beta1", {"matchExpressions": [{"key": V1BETA1_LABEL, "operator": "DoesNotExist"}]}),
        ("v1beta1", {"matchLabels": {"app": "a"}}, "v1", {"matchLabels": {"app": "a"}}),
        ("v1beta1", {}, "v1beta1", {}),
    ],
    ids=["empty-beta-selects-none", "empty-v1-selects-all", "labels-unchanged", "round-trip"],
)
def test_policy_v1beta1_pdbs_are_a_view_of_policy_v1(cluster, written_as, selector, read_as, seen):
    name = f"legacy-{written_as}-{read_as}-{len(selector)}"
    base = f"{cluster.url}/apis/policy/%s/namespaces/default/poddisruptionbudgets"
    got, created = call(base % written_as, "POST", _pdb(f"policy/{written_as}", name, selector))
    assert got == 201 and created["apiVersion"] == f"policy/{written_as}"
    got, read = call(f"{base % read_as}/{name}")
    assert (got, read["apiVersion"], read["spec"]["selector"]) == (200, f"policy/{read_as}", seen)
    listed = call(base % read_as)[1]
    assert listed["kind"] == "PodDisruptionBudgetList" and name in [i["metadata"]["name"] for i in listed["items"]]


def test_the_policy_group_prefers_v1_and_still_lists_v1beta1(cluster):
    group = call(f"{cluster.url}/apis/policy")[1]
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    assert group["preferredVersion"]["version"] == "v1"
    resources = call(f"{cluster.url}/apis/policy/v1beta1")[1]["resources"]
    assert [r["name"] for r in resources] == ["poddisruptionbudgets", "poddisruptionbudgets/status"]
