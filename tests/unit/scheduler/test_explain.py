"""What `explain` concludes from a pod's records: who decided between the top two nodes, and how far
each node is from fitting a pod that fits nowhere."""

from __future__ import annotations

import json

import pytest

from builders import make_node, make_pod
from kubesched.cache import NodeInfo, PodInfo
from kubesched.cli.main import main
from kubesched.scheduler.explain import deciding_plugins, shortfalls


def scored(node, **weighted):
    plugins = {p: {"raw": w, "normalized": w, "weight": 1, "weighted": w} for p, w in weighted.items()}
    return {"node": node, "plugins": plugins, "total": sum(weighted.values())}


def test_the_plugins_with_a_positive_weighted_difference_decided_it():
    scores = [
        scored("a", Fit=60, Spread=10, Affinity=5),
        scored("b", Fit=40, Spread=20, Affinity=5),
        scored("c", Fit=1),
    ]
    assert deciding_plugins(scores, "a") == {
        "runnerUp": "b",
        "margin": 10,
        "differences": {"Fit": 20, "Affinity": 0, "Spread": -10},
        "decidedBy": ["Fit"],
    }


def node_with(name: str, *, cpu: int, memory: str, used_cpu: str, used_memory: str, pods: int = 110) -> NodeInfo:
    info = NodeInfo(make_node(name).capacity(cpu=cpu, memory=memory, pods=pods).obj)
    info.add_pod(PodInfo(make_pod(f"{name}-used").req(cpu=used_cpu, memory=used_memory).node(name).obj))
    return info


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        (
            [
                node_with("n1", cpu=4, memory="8Gi", used_cpu="3", used_memory="1Gi"),
                node_with("n2", cpu=4, memory="8Gi", used_cpu="3500m", used_memory="7Gi"),
            ],
            [{"node": "n1", "short": {"cpu": "1"}}, {"node": "n2", "short": {"cpu": "1500m", "memory": "1Gi"}}],
        ),
        (
            [node_with("full", cpu=8, memory="8Gi", used_cpu="1", used_memory="1Gi", pods=1)],
            [{"node": "full", "short": {"pods": "1"}}],
        ),
    ],
    ids=["cpu-and-memory", "pod-slots"],
)
def test_closest_to_fitting_says_what_each_node_lacks(nodes, expected):
    pod = PodInfo(make_pod("big").req(cpu="2", memory="2Gi").obj)
    assert shortfalls(pod, nodes) == expected


def test_explain_names_the_rejecting_plugin_with_the_counts_of_the_message(capsys):
    assert main(["explain", "default/huge", "--output", "json"]) == 0
    last = json.loads(capsys.readouterr().out)["attempts"][-1]
    assert last["message"].startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert [(g["plugin"], len(g["nodes"])) for g in last["filter"]] == [("NodeResourcesFit", 3)]


def test_explain_of_a_bound_pod_shows_its_node_with_the_best_total(capsys):
    assert main(["explain", "pod-003", "--output", "json"]) == 0
    last = json.loads(capsys.readouterr().out)["attempts"][-1]
    best = max(s["total"] for s in last["scores"])
    assert next(s["total"] for s in last["scores"] if s["node"] == last["selectedNode"]) == best
    assert last["decision"]["runnerUp"] != last["selectedNode"]


def test_explain_of_a_pod_never_tried_is_one_line(capsys):
    assert main(["explain", "default/nobody"]) == 1
    assert capsys.readouterr().err.startswith("default/nobody: no attempt recorded in the simulation")


def test_explain_expands_one_node_its_filter_verdict_or_its_scores(capsys):
    assert main(["explain", "default/huge", "--node", "node-1"]) == 0
    out = capsys.readouterr().out
    assert "node-1: ruled out by NodeResourcesFit at Filter: Insufficient cpu" in out
    assert "What would make it fit: kubesched fit --kubeconfig K --pod default/huge" in out
    assert "KS/framework/interface.go:540-565" in out  # FilterPlugin's declaration
    assert main(["explain", "pod-003", "--output", "json"]) == 0
    host = json.loads(capsys.readouterr().out)["attempts"][-1]["selectedNode"]
    assert main(["explain", "pod-003", "--node", host]) == 0
    out = capsys.readouterr().out
    assert f"{host}: passed Filter; its scores" in out
    assert "What would make it fit" not in out
    assert "rank 1 of 3 (the chosen node)" in out
    assert "NodeResourcesBalancedAllocation" in out


def test_explain_cites_upstream_beside_each_part(capsys):
    assert main(["explain", "default/huge"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for site in ("S/framework/types.go:926-978", "S/schedule_one.go:864-890", "S/schedule_one.go:628-717"):
        assert site in out
