"""Replies decoded into lightkube structs, including the nulls the API server writes for zero values."""

from __future__ import annotations

import msgspec
import pytest
from lightkube.resources import core_v1, events_v1

from kubesched.client.codec import decode, decode_list, is_status
from kubesched.cluster.errors import InternalError

CONVERTED = {  # a core/v1 Event read through events.k8s.io/v1: no eventTime
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "e", "namespace": "default"},
    "eventTime": None,
    "reason": "Started",
    "regarding": {"kind": "Pod", "name": "a"},
}


def test_a_null_required_field_decodes_as_none():
    event = decode(msgspec.json.encode(CONVERTED), events_v1.Event)
    assert isinstance(event, events_v1.Event)
    assert (event.eventTime, event.reason, event.regarding.name) == (None, "Started", "a")


def test_nulls_deep_inside_and_in_list_items():
    pod = {"metadata": {"name": "a"}, "spec": {"containers": [{"name": None, "image": "i"}, {"name": "b"}]}}
    decoded = decode(msgspec.json.encode(pod), core_v1.Pod)
    assert [c.name for c in decoded.spec.containers] == [None, "b"]
    listed = {
        "metadata": {"resourceVersion": "5"},
        "items": [{**CONVERTED, "eventTime": "2026-01-01T00:00:00Z"}, CONVERTED, {**CONVERTED, "reason": "Pulled"}],
    }
    page = decode_list(msgspec.json.encode(listed), events_v1.Event)
    assert [(e.eventTime is None, e.reason) for e in page.items] == [
        (False, "Started"),
        (True, "Started"),
        (True, "Pulled"),
    ]
    assert page.metadata.resourceVersion == "5"


@pytest.mark.parametrize(
    "body",
    [
        b'{"metadata": {"name": 5}}',  # not a null: a wrong type
        b'{"spec": {"containers": [{"name": "a", "livenessProbe": {"httpGet": {"port": null}}}]}}',  # int or string
        b'{"metadata": ',  # not JSON
    ],
)
def test_replies_that_do_not_fit_are_server_errors(body):
    with pytest.raises(InternalError, match="the server's reply is not a valid Pod"):
        decode(body, core_v1.Pod)
    with pytest.raises(InternalError, match="the server's reply is not a valid Pod"):
        decode_list(b'{"items": [' + body + b"]}", core_v1.Pod)


def test_status_replies_are_told_from_objects():
    assert is_status(b'{"kind": "Status", "status": "Success"}')
    assert not is_status(b'{"kind": "Pod", "status": {"phase": "Running"}}')
