"""`kubesched drill c3`: a spread constraint no node can satisfy, told apart from scarcity."""

from __future__ import annotations

import json

from kubesched.cli.drill import run_c3
from kubesched.cli.main import main

SPREAD_STUCK = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
    "2 node(s) didn't match pod topology spread constraints. no new claims to deallocate, "
    "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
    "2 No preemption victims found for incoming pod."
)
SCARCE = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. no new claims to deallocate, "
    "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
)


def test_replicas_stuck_by_spread_and_a_pod_stuck_by_scarcity_have_different_messages():
    pods = {p.name: p for p in run_c3().pods}
    assert pods["web-0"].node in ("a-1", "a-2")
    for name in ("web-1", "web-2", "web-3"):
        assert pods[name].node is None
        assert pods[name].message == SPREAD_STUCK
        assert pods[name].rejected_by == ["PodTopologySpread", "TaintToleration"]
    assert pods["big"].node is None
    assert pods["big"].message == SCARCE
    assert pods["big"].rejected_by == ["NodeResourcesFit", "TaintToleration"]


def test_honoring_taints_leaves_the_tainted_zone_out_and_the_replicas_schedule():
    pods = {p.name: p for p in run_c3(taints_policy="Honor").pods}
    assert all(pods[f"web-{i}"].node in ("a-1", "a-2") for i in range(4))
    assert pods["big"].node is None


def test_the_drill_command_prints_both_runs_as_json(capsys):
    assert main(["drill", "c3", "--output", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {p["name"]: p["message"] for p in out["ignore"]["pods"]}["web-1"] == SPREAD_STUCK
    assert all(p["node"] for p in out["honor"]["pods"] if p["name"].startswith("web-"))
