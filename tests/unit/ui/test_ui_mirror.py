"""The UI's mirror of the cluster: what changed, in order, for the live stream, and where its log no
longer reaches back."""

from __future__ import annotations

import pytest

from builders import make_node, make_pod
from kubesched.ui import Mirror
from kubesched.ui import mirror as mirror_module


def test_each_pod_and_node_change_is_logged_once_in_order(harness, clock):
    h = harness()
    mirror = Mirror(h.scheduler)
    h.node("n1", cpu=4)
    h.start()
    start = mirror.version
    h.store.create(make_pod("a").req(cpu="1").obj)
    clock.advance(5)
    changes = mirror.changes_since(start)
    assert changes is not None
    seen = [(c.what, c.key) for c in changes]
    assert seen[0] == ("pod", "default/a")  # created, waiting
    assert ("node", "n1") in seen  # bound: what n1 holds changed
    assert [c.version for c in changes] == list(range(start + 1, mirror.version + 1))
    assert mirror.on_node == {"n1": {"default/a"}}
    assert mirror.changes_since(mirror.version) == []
    h.store.delete(type(h.pod("a")), "a", namespace="default", grace_period_seconds=0)
    clock.advance(5)
    assert "default/a" not in mirror.pods and mirror.on_node == {}


@pytest.mark.parametrize(("log_length", "behind_by", "told_to_start_over"), [(50, 10, False), (5, 10, True)])
def test_a_reader_further_behind_than_the_log_is_told_to_start_over(
    harness, clock, log_length, behind_by, told_to_start_over
):
    h = harness()
    mirror = Mirror(h.scheduler, log_length=log_length)
    h.start()
    for i in range(behind_by):
        h.store.create(make_node(f"n{i}").obj)
    clock.advance(1)
    changes = mirror.changes_since(mirror.version - behind_by)
    assert (changes is None) == told_to_start_over
    if changes is not None:
        assert [c.key for c in changes] == [f"n{i}" for i in range(behind_by)]


def test_timelines_past_their_budget_lose_the_least_recently_recorded_pods(harness, clock, monkeypatch):
    monkeypatch.setattr(mirror_module, "TIMELINE_RECORDS", 40)
    h = harness()
    mirror = Mirror(h.scheduler)
    mirror.follow_trace()
    h.node("n1", cpu=64)
    h.start()
    for i in range(12):
        h.store.create(make_pod(f"p{i}").req(cpu="100m").obj)
        clock.advance(1)
    assert mirror.recorded == sum(len(t) for t in mirror.timelines.values()) <= 40
    assert "default/p11" in mirror.timelines and "default/p0" not in mirror.timelines
