"""The from-scratch scheduler places pods, and overcommits a node under a burst."""

import io
import json

from kubesched.sim import NodeTemplate
from kubesched.trace import JsonLinesSink
from kubesched.workloads.burst import run_minimal

ROOMY = NodeTemplate(capacity={"cpu": "32", "memory": "64Gi", "pods": "110"})
TIGHT = NodeTemplate(capacity={"cpu": "2", "memory": "8Gi", "pods": "110"})


def test_binds_100_pods_on_10_roomy_nodes_without_rejection():
    result = run_minimal(nodes=10, pods=100, seed=3, template=ROOMY, interval=0.05)
    assert len(result.bound) == 100
    assert result.rejected == []
    assert all(p.phase == "Running" for p in result.placements)
    per_node = {n: sum(p.node == n for p in result.placements) for n in result.nodes}
    assert max(per_node.values()) - min(per_node.values()) <= 3  # spread by most-free-CPU


def test_a_burst_on_tight_nodes_overcommits_and_the_kubelet_rejects():
    result = run_minimal(nodes=3, pods=12, seed=1, template=TIGHT)
    assert result.rejected, "without assume, a burst must land on one node and overflow it"
    # Every pod went where the scheduler saw the whole node free: its own bindings were invisible.
    assert {p.node for p in result.placements} == {"node-0"}
    assert all(p.free_cpu_seen == 2000 for p in result.placements)
    assert {p.reason for p in result.rejected} == {"OutOfcpu"}
    assert all("Node didn't have enough resource: cpu" in p.message for p in result.rejected)
    admitted = sum(
        int(p.cpu[:-1]) if p.cpu.endswith("m") else int(p.cpu) * 1000 for p in result.placements if p.phase == "Running"
    )
    assert admitted <= 2000


def test_spaced_pods_are_seen_in_time_and_fit():
    result = run_minimal(nodes=3, pods=12, seed=1, template=TIGHT, interval=0.05)
    assert result.rejected == []
    assert {p.node for p in result.bound} == {"node-0", "node-1", "node-2"}
    assert all(p.phase == "Running" for p in result.bound)
    assert all(p.phase == "Pending" for p in result.placements if p.node is None)


def test_pods_that_fit_nowhere_stay_pending_with_an_event():
    result = run_minimal(nodes=1, pods=4, seed=0, template=TIGHT, cpu_choices=["1500m"], interval=0.05)
    assert [p.phase for p in result.placements] == ["Running", "Pending", "Pending", "Pending"]
    assert any(r.kind == "minimal.unschedulable" for r in result.trace)


def _trace_text(seed):
    out = io.StringIO()
    run_minimal(nodes=4, pods=30, seed=seed, template=TIGHT, sinks=[JsonLinesSink(out)])
    return out.getvalue()


def test_same_scenario_and_seed_give_the_same_trace():
    first, second = _trace_text(7), _trace_text(7)
    assert first == second
    records = [json.loads(line) for line in first.splitlines()]
    kinds = {r["kind"] for r in records}
    assert {"store.pod.added", "minimal.picked", "store.pod.bound", "kubelet.admitted", "kubelet.rejected"} <= kinds
    assert all(":" in r["site"] and r["site"].startswith("kubesched.") for r in records)
    assert _trace_text(8) != first
