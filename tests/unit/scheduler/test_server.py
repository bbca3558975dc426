"""The scheduler's endpoints (`SchedulerServer`) over a scheduler on the memory cluster."""

from __future__ import annotations

import json
from typing import Any

from builders import fetch_all as fetch_app
from builders import make_pod
from kubesched.clock.virtual import DEFAULT_EPOCH
from kubesched.queue import PendingPod
from kubesched.scheduler.metrics import CONTENT_TYPE
from kubesched.scheduler.server import SchedulerServer, queue_document


def fetch_all(scheduler: Any, *paths: str) -> dict[str, tuple[int, str, str]]:
    return fetch_app(SchedulerServer(scheduler, "127.0.0.1", 0).app, *paths)


def waiting(harness: Any, clock: Any) -> Any:
    """A scheduler with one 4-CPU node, a bound pod, a pod too big for the node and a gated pod."""
    h = harness()
    h.node("n1", cpu=4)
    h.start()
    h.store.create(make_pod("small").req(cpu="1").obj)
    h.store.create(make_pod("huge").req(cpu="6").obj)
    h.store.create(make_pod("held").req(cpu="1").gates("example.com/hold").obj)
    clock.advance(5)
    assert h.pod("small").spec.nodeName == "n1"
    return h.scheduler


def test_debug_queue_shows_the_gated_pod_and_the_pod_that_fits_nowhere(harness, clock):
    scheduler = waiting(harness, clock)
    status, content_type, body = fetch_all(scheduler, "/debug/queue")["/debug/queue"]
    assert status == 200 and content_type.startswith("application/json")
    document = json.loads(body)
    assert document["pending"] == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 1}
    pods = {p["key"]: p for p in document["pods"]}
    assert set(pods) == {"default/huge", "default/held"}
    held, huge = pods["default/held"], pods["default/huge"]
    assert held["queue"] == "gated" and held["rejected_by"] == ["SchedulingGates"] and held["attempts"] == 0
    assert huge["queue"] == "unschedulablePods" and huge["rejected_by"] == ["NodeResourcesFit"]
    assert huge["attempts"] == 1 and huge["backoff_until"] is None
    assert any("NodeResourcesFit" in event for event in huge["wake_on"])
    assert huge["since"].startswith("2026-01-01T00:00:0") and huge["since"].endswith("Z")


def test_healthz_metrics_and_unknown_paths(harness, clock):
    scheduler = waiting(harness, clock)
    answers = fetch_all(scheduler, "/healthz", "/metrics", "/nope")
    assert answers["/healthz"][0] == 200 and answers["/healthz"][2] == "ok"
    status, content_type, metrics = answers["/metrics"]
    assert status == 200 and content_type == CONTENT_TYPE
    assert 'scheduler_pending_pods{queue="gated"} 1.0' in metrics.splitlines()
    assert 'scheduler_pending_pods{queue="unschedulable"} 1.0' in metrics.splitlines()
    assert "scheduler_queue_incoming_pods_total{" in metrics
    assert answers["/nope"][0] == 404


def test_queue_document_writes_times_in_rfc3339():
    pod = PendingPod(
        key="default/p",
        queue="backoffQ",
        attempts=2,
        backoff_until=DEFAULT_EPOCH + 62.5,
        rejected_by=["NodeResourcesFit"],
        wake_on=[],
        since=DEFAULT_EPOCH,
    )
    document = queue_document({"active": 0, "backoff": 1, "unschedulable": 0, "gated": 0}, [pod])
    assert document["pods"][0]["backoff_until"] == "2026-01-01T00:01:02Z"
    assert document["pods"][0]["since"] == "2026-01-01T00:00:00Z"
    assert document["pending"]["backoff"] == 1


def test_debug_pods_explains_a_pod_and_is_404_for_one_never_tried(harness, clock):
    scheduler = waiting(harness, clock)
    answers = fetch_all(scheduler, "/debug/pods/default/huge", "/debug/pods/default/small", "/debug/pods/default/x")
    status, _, body = answers["/debug/pods/default/huge"]
    huge = json.loads(body)["attempts"][-1]
    assert status == 200 and huge["result"] == "unschedulable"
    assert huge["filter"] == [{"plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"], "nodes": ["n1"]}]
    assert huge["closestToFitting"] == [{"node": "n1", "short": {"cpu": "3"}}]  # 6 asked, 4 - 1 free
    small = json.loads(answers["/debug/pods/default/small"][2])["attempts"][-1]
    assert small["selectedNode"] == "n1" and small["outcomes"]["Bind"] == {"code": "Success"}
    status, _, body = answers["/debug/pods/default/x"]
    assert status == 404 and json.loads(body) == {"message": "no attempt of default/x is recorded"}
