"""The result store on the virtual clock: what an attempt records, and the budget it keeps."""

from __future__ import annotations

from builders import make_pod, verdict_filter
from kubesched.framework import Registry, Status
from kubesched.framework.status import Code
from kubesched.scheduler.results import ResultStore

Broken = verdict_filter("Broken", Status(Code.UNSCHEDULABLE, "broken on purpose"))  # retried on every flush


def test_an_unschedulable_attempt_records_each_nodes_verdict_and_the_message(harness):
    h = harness()
    h.node("small", cpu=1)
    h.node("tiny", cpu="500m")
    h.start()
    h.store.create(make_pod("big").req(cpu=2).obj)
    h.clock.advance(1)
    (record,) = h.scheduler.results.attempts("default/big")
    assert record.result == "unschedulable" and record.evaluated == 2 and record.feasible == 0
    assert record.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert record.to_json()["filter"] == [
        {"plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"], "nodes": ["small", "tiny"]}
    ]


def test_a_scheduled_attempt_records_scores_whose_best_total_is_the_host(harness):
    h = harness()
    for name, cpu in (("a", 2), ("b", 4), ("c", 8)):
        h.node(name, cpu=cpu)
    h.start()
    h.store.create(make_pod("p").req(cpu=1).obj)
    h.clock.advance(1)
    (record,) = h.scheduler.results.attempts("default/p")
    scores = record.to_json()["scores"]
    best = max(s["total"] for s in scores)
    assert record.selected == h.pod("p").spec.nodeName
    assert {s["node"] for s in scores if s["total"] == best} == set(record.top) and record.selected in record.top
    for s in scores:
        assert s["total"] == sum(p["weighted"] for p in s["plugins"].values())
    assert record.outcomes["Reserve"] == {"code": "Success"} and record.outcomes["Bind"] == {"code": "Success"}


def test_twenty_thousand_attempts_stay_within_the_budget_and_the_drops_are_counted(harness):
    extra = Registry()
    extra.register(Broken.name, Broken)
    config = {
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "Broken"}]}}}]
    }
    h = harness(config=config, extra=extra)
    for i in range(4):
        h.node(f"n{i}")
    store = h.scheduler.results = ResultStore(budget=400_000, per_pod=8)
    h.start()
    for i in range(2_000):
        h.store.create(make_pod(f"p{i}").obj)
    attempts = 0
    while attempts < 20_000:
        h.clock.advance(300)  # the unschedulable pods' flush
        attempts = sum(h.scheduler.attempt_results.values())
    assert store.bytes <= store.budget
    assert store.dropped == attempts - len(store) > 0
    assert max(len(store.attempts(f"default/p{i}")) for i in range(2_000)) <= 8
    assert sum(r.nbytes for r in store) == store.bytes


def test_nodes_a_prefilter_result_left_out_are_counted_apart_from_nodes_never_reached(harness):
    from lightkube.models import core_v1 as m

    h = harness()
    for i in range(200):
        h.node(f"n{i:03d}")
    h.start()
    pod = make_pod("picky").obj
    terms = [  # one name a term, as matchFields wants: PreFilter's result is these 150 nodes
        m.NodeSelectorTerm(matchFields=[m.NodeSelectorRequirement(key="metadata.name", operator="In", values=[name])])
        for name in (f"n{i:03d}" for i in range(150))
    ]
    required = m.NodeSelector(nodeSelectorTerms=terms)
    pod.spec.affinity = m.Affinity(nodeAffinity=m.NodeAffinity(requiredDuringSchedulingIgnoredDuringExecution=required))
    h.store.create(pod)
    h.clock.advance(1)
    (record,) = h.scheduler.results.attempts("default/picky")
    # 100 feasible found among the 150 PreFilter left: 50 never reached, and 50 ruled out beforehand
    assert (record.result, record.candidates, record.to_find, record.feasible) == ("scheduled", 150, 100, 100)
    assert record.to_json()["filter"] == [
        {"plugin": "", "reasons": ["node(s) didn't satisfy plugin(s) [NodeAffinity]"], "count": 50}
    ]
