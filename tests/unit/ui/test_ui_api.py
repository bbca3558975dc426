"""The UI's JSON (`/ui/api/...`) over a scheduler on the memory cluster: what each page is drawn
from, the filters, and the answers to what does not exist or does not parse."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

from builders import call_all, fetch_all, make_node, make_pod, namespace
from kubesched.scheduler.explain import explain_pod
from kubesched.ui import Mirror, mount


def cluster(harness: Any, clock: Any) -> tuple[Any, Mirror]:
    """Two nodes (n2 cordoned and tainted), a pod bound to n1, a pod too big for any node, a gated
    pod, and a pod of another scheduler; the UI mounted before the scheduler starts."""
    h = harness()
    mirror = Mirror(h.scheduler)
    h.store.create(make_node("n1").capacity(cpu=4, memory="8Gi", pods=10).labels(zone="a").obj)
    h.store.create(make_node("n2").capacity(cpu=4, memory="8Gi", pods=10).cordon().taint("gpu").obj)
    h.start()
    h.store.create(make_pod("small").req(cpu="1", memory="1Gi").labels(app="web").obj)
    h.store.create(make_pod("huge").req(cpu="6").labels(app="batch").obj)
    h.store.create(make_pod("held").req(cpu="1").gates("example.com/hold").obj)
    h.store.create(namespace("other"))
    h.store.create(make_pod("theirs", "other").scheduler("other-scheduler").obj)
    clock.advance(5)
    assert h.pod("small").spec.nodeName == "n1"
    return h, mirror


def served(mirror: Mirror) -> web.Application:
    app = web.Application()
    mount(app, mirror)
    return app


def get(mirror: Mirror, path: str) -> tuple[int, Any]:
    status, content_type, body = fetch_all(served(mirror), path)[path]
    assert content_type.startswith("application/json"), (path, content_type)
    return status, json.loads(body)


def test_the_cluster_page_has_each_node_with_its_gauges_and_pods_and_the_pods_without_a_node(harness, clock):
    _, mirror = cluster(harness, clock)
    status, document = get(mirror, "/ui/api/cluster")
    assert status == 200
    n1, n2 = document["nodes"]
    assert (n1["name"], n1["cordoned"], n1["taints"], n1["labels"]["zone"]) == ("n1", False, [], "a")
    assert n1["allocatable"] == {"cpu": 4000, "memory": 8 * 2**30, "pods": 10}
    assert n1["requested"] == {"cpu": 1000, "memory": 2**30, "pods": 1}
    assert n1["pods"] == ["default/small"]
    assert (n2["cordoned"], n2["taints"], n2["pods"]) == (
        True,
        [{"key": "gpu", "value": "", "effect": "NoSchedule"}],
        [],
    )
    assert [p["key"] for p in document["pods"]] == ["default/small"]
    waiting = {p["key"]: (p["chip"], p["queue"], p["scheduler"]) for p in document["unscheduled"]}
    assert waiting == {
        "default/held": ("SchedulingGated", "gated", "default-scheduler"),
        "default/huge": ("Unschedulable", "unschedulablePods", "default-scheduler"),
        "other/theirs": ("Pending", None, "other-scheduler"),  # not this scheduler's: in no queue of its
    }
    assert document["pending"] == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 1}


@pytest.mark.parametrize(
    ("query", "bound", "unscheduled"),
    [
        ("namespace=other", [], ["other/theirs"]),
        ("label=app%3Dweb", ["default/small"], []),
        ("label=app%20in%20(web,batch)", ["default/small"], ["default/huge"]),
        ("scheduler=other-scheduler", [], ["other/theirs"]),
        ("namespace=default&scheduler=default-scheduler", ["default/small"], ["default/held", "default/huge"]),
    ],
)
def test_the_cluster_page_shows_the_pods_its_filters_admit(harness, clock, query, bound, unscheduled):
    _, mirror = cluster(harness, clock)
    status, document = get(mirror, f"/ui/api/cluster?{query}")
    assert status == 200
    assert [p["key"] for p in document["pods"]] == bound
    assert [p["key"] for p in document["unscheduled"]] == unscheduled
    assert {n["name"]: n["pods"] for n in document["nodes"]}["n1"] == bound  # every node, its admitted pods


def test_a_pod_page_holds_the_attempts_kubesched_explain_prints_and_its_timeline(harness, clock):
    h, mirror = cluster(harness, clock)
    get(mirror, "/ui/api/cluster")  # the UI opened: timelines are kept from now on
    h.store.create(make_pod("late").req(cpu="1").obj)
    clock.advance(5)
    status, document = get(mirror, "/ui/api/pods/default/late")
    assert status == 200
    assert document["pod"]["node"] == "n1" and document["queue"] is None
    assert document["explain"] == explain_pod(h.scheduler, "default/late")
    attempt = document["explain"]["attempts"][-1]
    assert attempt["selectedNode"] == "n1" and attempt["filter"][0]["nodes"] == ["n2"]
    kinds = [row["kind"] for row in document["timeline"]]
    assert kinds.index("queue.move") < kinds.index("cycle.start") < kinds.index("bind.done")
    assert all(row["site"].startswith("kubesched.") for row in document["timeline"])
    assert any(row["upstream"] for row in document["timeline"])
    _, huge = get(mirror, "/ui/api/pods/default/huge")
    assert huge["queue"]["queue"] == "unschedulablePods"
    assert huge["queue"]["rejected_by"] == ["NodeResourcesFit", "NodeUnschedulable"]
    assert "Insufficient cpu" in huge["explain"]["attempts"][-1]["message"]
    assert [(e["type"], e["reason"]) for e in document["events"]] == [("Normal", "Scheduled")]
    assert document["events"][0]["message"] == "Successfully assigned default/late to n1"
    (failed,) = huge["events"]
    assert failed["reason"] == "FailedScheduling"
    assert failed["message"] == huge["explain"]["attempts"][-1]["message"]
    assert [c["type"] for c in huge["conditions"]] == ["PodScheduled"]


def test_the_queue_page_counts_the_pending_pods_and_what_wakes_each(harness, clock):
    _, mirror = cluster(harness, clock)
    status, document = get(mirror, "/ui/api/queue")
    assert status == 200
    assert document["pending"] == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 1}
    pods = {p["key"]: p for p in document["pods"]}
    assert any("NodeResourcesFit" in event for event in pods["default/huge"]["wake_on"])
    assert "backoffSeconds" not in pods["default/huge"]  # waiting for an event, not backing off


def test_the_scheduler_page_lists_each_points_plugins_and_the_score_weights(harness, clock):
    _, mirror = cluster(harness, clock)
    status, document = get(mirror, "/ui/api/scheduler")
    assert status == 200
    (profile,) = document["profiles"]
    assert profile["name"] == "default-scheduler"
    assert profile["points"]["queueSort"] == ["PrioritySort"] and profile["points"]["bind"] == ["DefaultBinder"]
    assert profile["weights"]["TaintToleration"] == 3 and profile["weights"]["NodeResourcesFit"] == 1
    assert document["cache"] == {"nodes": 2, "pods": 1, "assumed_pods": 0}


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/ui/api/pods/default/nobody", 404, "pod default/nobody is not known to this scheduler"),
        ("/ui/api/cluster?label=app%3D%3D%3D", 400, "label: "),
        ("/ui/api/stream?since=soon", 400, "since: expected a version (an integer), got 'soon'"),
        ("/ui/api/stream?since=-1", 400, "since: expected a version of 0 or more, got -1"),
    ],
)
def test_what_does_not_exist_is_404_and_what_does_not_parse_is_400(harness, clock, path, status, message):
    _, mirror = cluster(harness, clock)
    got, document = get(mirror, path)
    assert got == status and document["message"].startswith(message)


def test_the_pages_are_served_from_the_package(harness, clock):
    _, mirror = cluster(harness, clock)
    answers = fetch_all(served(mirror), "/ui", "/ui/", "/ui/static/app.js", "/ui/static/app.css", "/ui/static/nope.js")
    assert answers["/ui"][0] == 301
    status, content_type, body = answers["/ui/"]
    assert status == 200 and content_type == "text/html" and '<script src="/ui/static/app.js">' in body
    assert answers["/ui/static/app.js"][:2] in ((200, "text/javascript"), (200, "application/javascript"))
    assert answers["/ui/static/app.css"][:2] == (200, "text/css")
    assert answers["/ui/static/nope.js"][0] == 404


def test_with_the_clusters_token_the_ui_is_only_for_whoever_shows_it(harness, clock):
    _, mirror = cluster(harness, clock)
    app = web.Application()

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app.router.add_get("/healthz", healthz)
    mount(app, mirror, token="s3cret")
    bearer = {"Authorization": "Bearer s3cret"}
    answers = call_all(
        app,
        ("GET", "/ui/api/cluster", None, {}),
        ("GET", "/ui/api/cluster", None, {"Authorization": "Bearer guess"}),
        ("GET", "/ui/api/cluster", None, bearer),
        ("GET", "/ui/?token=guess", None, {}),
        ("GET", "/ui/?token=s3cret", None, {}),
        ("GET", "/ui/api/queue", None, {"Cookie": "kubesched-ui-token=s3cret"}),
        ("GET", "/healthz", None, {}),  # the scheduler's other endpoints are as they were
    )
    assert [status for status, _, _ in answers] == [401, 401, 200, 401, 302, 200, 200]
    assert json.loads(answers[0][1])["message"] == "the UI needs the cluster's token: open /ui/?token=TOKEN once"
    _, _, headers = answers[4]
    assert headers["Location"] == "/ui/" and "kubesched-ui-token=s3cret" in headers["Set-Cookie"]
    assert "HttpOnly" in headers["Set-Cookie"] and "SameSite=Strict" in headers["Set-Cookie"]
