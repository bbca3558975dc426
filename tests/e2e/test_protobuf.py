"""Protobuf over HTTP, as client-go speaks it (kube-scheduler's and kube-controller-manager's
default content type): bodies in, answers and watch frames out, chosen by Content-Type and Accept."""

from __future__ import annotations

import json
import struct
import urllib.error
import urllib.request

from kubesched.storage.protobuf import envelope

PROTOBUF = "application/vnd.kubernetes.protobuf"
CLIENT_GO = f"{PROTOBUF}, application/json"  # client-go's Accept with ContentType protobuf


def call(url, method="GET", body=None, *, content_type=PROTOBUF, accept=CLIENT_GO):
    req = urllib.request.Request(
        url, data=body, method=method, headers={"Content-Type": content_type, "Accept": accept}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


def pod(name):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "proto"}},
        "spec": {"containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]},
    }


def test_a_protobuf_pod_is_created_bound_and_read_back_in_either_encoding(cluster):
    base = f"{cluster.url}/api/v1/namespaces/default/pods"
    code, content_type, body = call(base, "POST", envelope.encode_object(pod("pb-1")))
    assert (code, content_type) == (201, PROTOBUF)
    created = envelope.decode_object(body)
    assert created["metadata"]["uid"] and created["spec"]["schedulerName"] == "default-scheduler"
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "pb-1"},
        "target": {"kind": "Node", "name": "node-1"},
    }
    code, _, body = call(f"{base}/pb-1/binding", "POST", envelope.encode_object(binding))
    assert code == 201 and envelope.decode_object(body)["status"] == "Success"
    code, content_type, body = call(f"{base}/pb-1", accept="application/json")
    assert (code, content_type) == (200, "application/json")
    assert json.loads(body)["spec"]["nodeName"] == "node-1"
    code, content_type, body = call(f"{base}?labelSelector=app%3Dproto")
    listed = envelope.decode_object(body)
    assert listed["kind"] == "PodList" and [p["metadata"]["name"] for p in listed["items"]] == ["pb-1"]


def test_an_error_answers_a_protobuf_client_with_a_protobuf_status(cluster):
    code, content_type, body = call(f"{cluster.url}/api/v1/namespaces/default/pods/nowhere")
    assert (code, content_type) == (404, PROTOBUF)
    status = envelope.decode_object(body)
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "NotFound", 404)
    assert status["message"] == 'pods "nowhere" not found'


def test_a_watch_in_protobuf_is_length_prefixed_frames(cluster):
    base = f"{cluster.url}/api/v1/namespaces/default/pods"
    code, _, body = call(base, "POST", envelope.encode_object(pod("pb-watch")), accept="application/json")
    assert code == 201
    rv = json.loads(body)["metadata"]["resourceVersion"]
    req = urllib.request.Request(
        f"{base}?watch=true&resourceVersion={int(rv) - 1}&fieldSelector=metadata.name%3Dpb-watch&timeoutSeconds=1",
        headers={"Accept": f"{PROTOBUF};stream=watch"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.headers["Content-Type"] == f"{PROTOBUF};stream=watch"
        (length,) = struct.unpack(">I", resp.read(4))
        event_type, wrapped = envelope.read_watch_frame(resp.read(length))
    assert event_type == "ADDED"
    assert envelope.decode_object(wrapped)["metadata"]["name"] == "pb-watch"


def test_a_table_or_json_preferred_first_is_answered_in_json(cluster):
    url = f"{cluster.url}/api/v1/nodes"
    table = "application/json;as=Table;v=v1;g=meta.k8s.io, application/json"
    for accept in (table, f"application/json, {PROTOBUF}", f"{PROTOBUF};q=0.5, application/json"):
        code, content_type, body = call(url, accept=accept)
        assert (code, content_type) == (200, "application/json"), accept
        json.loads(body)
