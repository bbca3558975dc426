"""Preemption end to end on the memory cluster, with fake kubelets, on the virtual clock."""

from __future__ import annotations

import pytest
from lightkube.models import meta_v1
from lightkube.resources import core_v1, scheduling_v1

from builders import binding, make_pod
from kubesched.framework.features import Features
from kubesched.lab.victim_deletion import SlowPodCalls
from kubesched.sim import FakeKubelets, KubeletConfig, NodeTemplate
from kubesched.trace import Tracer


def _classes(h):
    for name, value in (("low", 0), ("high", 1000)):
        h.store.create(scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name=name), value=value))


def _running(h, name, node, cpu, cls="low"):
    pod = make_pod(name).req(cpu=cpu).grace(5).obj
    pod.spec.priorityClassName = cls
    h.store.post(core_v1.Pod, "binding", binding(h.store.create(pod), node))


def test_a_high_priority_pod_evicts_a_victim_gracefully_and_binds_to_the_nominated_node(harness, clock):
    h = harness()
    h.store.create(NodeTemplate(capacity={"cpu": "2", "memory": "4Gi", "pods": "110"}, zones=()).make("n1", 0))
    _classes(h)
    kubelets = FakeKubelets(h.cluster, clock, config=KubeletConfig(stop_seconds=3))
    clock.loop.create_task(kubelets.run())
    clock.advance(0.1)  # the kubelets watch from here
    _running(h, "victim", "n1", "1500m")
    _running(h, "small", "n1", "500m")
    clock.advance(2)
    h.start()
    urgent = make_pod("urgent").req(cpu="1").obj
    urgent.spec.priorityClassName = "high"
    h.store.create(urgent)
    clock.advance(1)
    assert h.pod("urgent").status.nominatedNodeName == "n1"  # a claim, not the node
    assert h.pod("urgent").spec.nodeName is None
    victim = h.pod("victim")
    assert victim.metadata.deletionTimestamp is not None  # terminating gracefully
    assert any(c.type == "DisruptionTarget" and c.reason == "PreemptionByScheduler" for c in victim.status.conditions)
    assert ("Preempted", f"Preempted by pod {h.pod('urgent').metadata.uid} on node n1") in h.events("victim")
    first = h.scheduler.results.attempts("default/urgent")[0].to_json()  # what explain shows of it
    assert first["result"] == "unschedulable" and first["preemption"]["nominatedNode"] == "n1"
    assert first["preemption"]["victims"] == ["default/victim"]
    assert first["preemption"]["candidates"] == [{"node": "n1", "victims": ["default/victim"], "pdbViolations": 0}]
    clock.advance(10)
    assert h.pod("urgent").spec.nodeName == "n1"
    assert h.pod("small").metadata.deletionTimestamp is None  # only what was needed
    rejected = [e for e in h.store.list(core_v1.Event).items if e.reason and e.reason.startswith("OutOf")]
    assert rejected == []  # the kubelet never had to refuse an overcommitted pod
    metrics = h.scheduler.metrics.exposition().decode()
    assert "scheduler_preemption_attempts_total 1.0" in metrics
    assert "scheduler_preemption_victims_count 1.0" in metrics
    assert 'scheduler_pod_scheduling_sli_duration_seconds_count{attempts="2"} 1.0' in metrics
    assert (
        'scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="unschedulable"} 1.0'
        in metrics
    )


def test_preemption_never_evicts_equal_priority_pods(harness, clock):
    h = harness()
    h.node("n1", cpu=1)
    _classes(h)
    _running(h, "peer", "n1", "1", cls="high")
    h.start()
    pod = make_pod("same").req(cpu="1").obj
    pod.spec.priorityClassName = "high"
    h.store.create(pod)
    clock.advance(2)
    assert h.pod("peer").metadata.deletionTimestamp is None
    message = next(m for reason, m in h.events("same") if reason == "FailedScheduling")
    assert message.endswith("preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def test_other_pods_keep_being_scheduled_while_victims_terminate_slowly(harness, clock):
    h = harness()
    for i, cpu in enumerate(("2", "1")):  # the urgent pod fits n0 only, and only without its victim
        h.store.create(NodeTemplate(capacity={"cpu": cpu, "memory": "4Gi", "pods": "110"}, zones=()).make(f"n{i}", i))
    _classes(h)
    kubelets = FakeKubelets(h.cluster, clock, config=KubeletConfig(stop_seconds=None))  # ignores SIGTERM
    clock.loop.create_task(kubelets.run())
    clock.advance(0.1)
    slow = make_pod("slow").req(cpu="2").grace(60).obj
    slow.spec.priorityClassName = "low"
    h.store.post(core_v1.Pod, "binding", binding(h.store.create(slow), "n0"))
    clock.advance(2)
    h.start()
    urgent = make_pod("urgent").req(cpu="2").obj
    urgent.spec.priorityClassName = "high"
    h.store.create(urgent)
    clock.advance(1)
    assert h.pod("urgent").status.nominatedNodeName == "n0"
    assert h.pod("slow").metadata.deletionTimestamp is not None
    for i in range(4):  # meanwhile, small pods land on the other node
        h.store.create(make_pod(f"other-{i}").req(cpu="250m").obj)
    clock.advance(2)
    assert {h.pod(f"other-{i}").spec.nodeName for i in range(4)} == {"n1"}
    assert h.pod("urgent").spec.nodeName is None  # its victim still holds n0 for its grace period
    clock.advance(60)
    assert h.pod("urgent").spec.nodeName == "n0"


@pytest.mark.parametrize(
    ("asynchronous", "other_starts_after"),
    [
        (True, 0.0),  # v1.36's default: the victims go in the background, the next pod at once
        (False, 2.0),  # synchronous: the thread waits for the condition patch and the deletion, 1 s each
    ],
)
def test_without_async_preemption_the_next_pod_waits_for_the_victims_api_calls(
    harness, clock, asynchronous, other_starts_after
):
    tracer = Tracer(clock.now, keep=True)
    h = harness(
        features=Features(async_preemption=asynchronous),
        tracer=tracer,
        link=lambda store, clock: SlowPodCalls(store, clock, latency=1.0),
    )
    h.node("n0", cpu=2)
    h.node("n1", cpu=1)
    _classes(h)
    _running(h, "victim", "n0", "2")
    h.start()
    for name, cpu, cls in (("urgent", "2", "high"), ("other", "250m", "high")):
        pod = make_pod(name).req(cpu=cpu).obj
        pod.spec.priorityClassName = cls
        h.store.create(pod)
    clock.advance(5)
    started = {r.pod: r.time for r in reversed(tracer.records) if r.kind == "cycle.start"}
    victim = next(r.time for r in tracer.records if r.kind == "preemption.victim")
    assert started["default/other"] - victim == pytest.approx(other_starts_after, abs=0.05)
    assert h.pod("other").spec.nodeName == "n1"
    assert h.pod("victim").metadata.deletionTimestamp is not None
