"""What the UI may change (`cluster up --ui-actions`): each action through the cluster's API, and
the answers to a request the UI refuses: actions off (403), a body that is not JSON (415, 400), a
field that is wrong (400), and the API's own refusals passed on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web
from lightkube.resources import core_v1

from builders import call_all, make_node
from kubesched.cluster import AlreadyExists
from kubesched.sim import NodeTemplate
from kubesched.ui import Actions, Mirror, mount
from kubesched.ui.actions import ActionError


def acting(harness: Any) -> tuple[Any, Actions]:
    h = harness()
    h.store.create(make_node("node-0").obj)
    template = NodeTemplate()
    return h, Actions(h.cluster, lambda i: template.make(f"node-{i}", i))


def run(clock: Any, coroutine: Any) -> Any:
    task = clock.loop.create_task(coroutine)
    clock.advance(0.1)
    return task.result()


def test_each_action_changes_the_cluster_through_its_api(harness, clock):
    h, actions = acting(harness)
    h.start()
    created = run(clock, actions.create_pod({"name": "web", "cpu": "250m", "memory": "64Mi", "labels": {"app": "w"}}))
    assert (created.metadata.namespace, created.metadata.labels) == ("default", {"app": "w"})
    assert created.spec.containers[0].resources.requests == {"cpu": "250m", "memory": "64Mi"}
    clock.advance(2)
    assert h.pod("web").spec.nodeName == "node-0"  # scheduled as any pod is
    assert run(clock, actions.cordon("node-0", cordoned=True)).spec.unschedulable is True
    assert not run(clock, actions.cordon("node-0", cordoned=False)).spec.unschedulable
    assert run(clock, actions.add_nodes({"count": 2}, {"node-0"})) == ["node-1", "node-2"]
    assert len(h.store.list(core_v1.Node).items) == 3
    run(clock, actions.delete_pod("default", "web"))
    assert h.pod("web").metadata.deletionTimestamp is not None  # deleted gracefully: its kubelet ends it
    run(clock, actions.create_pod({"name": "twin"}))
    with pytest.raises(AlreadyExists):
        run(clock, actions.create_pod({"name": "twin"}))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "name: required"),
        ({"name": 5}, "name: expected a string, got 5"),
        ({"name": "p", "labels": ["a"]}, "labels: expected an object of strings"),
    ],
)
def test_a_pod_the_ui_cannot_make_names_its_field(harness, clock, body, message):
    _, actions = acting(harness)
    with pytest.raises(ActionError, match=message):
        run(clock, actions.create_pod(body))


@pytest.mark.parametrize("count", [0, 101, "2", True])
def test_nodes_are_added_one_to_a_hundred_at_a_time(harness, clock, count):
    _, actions = acting(harness)
    with pytest.raises(ActionError, match="count: expected a number of nodes from 1 to 100"):
        run(clock, actions.add_nodes({"count": count}, set()))


def test_requests_the_ui_refuses_before_acting(harness):
    h, actions = acting(harness)
    off, on = web.Application(), web.Application()
    mount(off, Mirror(h.scheduler))
    mount(on, Mirror(h.scheduler), actions=actions)
    (refused,) = call_all(off, ("POST", "/ui/api/nodes/node-0/cordon", None, {}))
    assert refused[0] == 403 and "cluster up --ui-actions" in json.loads(refused[1])["message"]
    as_json = {"Content-Type": "application/json"}
    answers = call_all(
        on,
        ("POST", "/ui/api/pods", b"name=x", {"Content-Type": "application/x-www-form-urlencoded"}),  # a form
        ("POST", "/ui/api/pods", b"{nope", as_json),
        ("POST", "/ui/api/pods", [1], as_json),
        ("POST", "/ui/api/pods", {"namespace": "default"}, as_json),
        ("DELETE", "/ui/api/pods/default/nobody", None, {}),  # the API's own answer
    )
    assert [status for status, _, _ in answers] == [415, 400, 400, 400, 404]
    messages = [json.loads(text)["message"] for _, text, _ in answers]
    assert messages[0] == "expected a JSON body (application/json), got application/x-www-form-urlencoded"
    assert messages[2] == "the body is not a JSON object" and messages[3] == "name: required"
    assert "nobody" in messages[4]
