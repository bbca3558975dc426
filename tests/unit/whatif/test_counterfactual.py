"""What would make it fit: for unschedulable pods of different causes, the changes found, each
applied and the pod scheduled again; and none where nothing in the space helps."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from builders import make_node, make_pod, snapshot_of
from kubesched.cli.main import main
from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.whatif.capacity import Template, simulate
from kubesched.whatif.counterfactual import Search, common_node, pending_pod, search

REGISTRY = in_tree_registry()
CONFIG = default_config(REGISTRY)
HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}


def zone(name: str, z: str) -> Any:
    return make_node(name).labels(**{"topology.kubernetes.io/zone": z})


def spread(pod: Any) -> Any:
    pod.obj.spec.topologySpreadConstraints = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "s"}},
        }
    ]
    return pod


@dataclass
class Case:
    id: str
    cluster: list[Any]
    pod: Any
    kinds: list[str]  # the kinds of change proposed, in order
    options: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case("requests above any node", [make_node("a")], make_pod("big").req(cpu="6"), ["lower-requests"]),
    Case(
        "full of lower-priority pods",
        [make_node("a"), make_pod("low").req(cpu="3").node("a"), HIGH],
        make_pod("vip").req(cpu="2").priority_class("high"),
        ["add-nodes", "lower-requests", "evict"],
    ),
    Case(
        "an untolerated taint",
        [make_node("a").taint("dedicated", "gpu")],
        make_pod("web").req(cpu="1"),
        ["remove-taint", "tolerate"],
    ),
    Case("a node selector no node matches", [make_node("a")], make_pod("web").node_selector(disk="ssd"), ["relax"]),
    Case(
        "self anti-affinity on every node",
        [make_node("a"), make_pod("db-0").labels(app="db").node("a")],
        make_pod("db-1").labels(app="db").pod_affinity(anti=True, app="db"),
        ["add-nodes", "relax"],
    ),
    Case(
        "a spread constraint pointing at a full zone",
        [
            zone("a", "z1"),
            zone("b", "z2"),
            make_pod("s-0").labels(app="s").node("a"),
            make_pod("s-1").labels(app="s").node("a"),
            make_pod("hog").req(cpu="4").node("b"),
        ],
        spread(make_pod("s-2").labels(app="s").req(cpu="1")),
        ["relax", "lower-requests"],
    ),
    Case(
        "a host port taken",
        [make_node("a"), make_pod("proxy").host_port(80).node("a")],
        make_pod("proxy-2").host_port(80),
        ["add-nodes", "relax"],
    ),
    Case(
        "no pod slots left",
        [make_node("a").capacity(pods=1), make_pod("one").node("a")],
        make_pod("two"),
        ["add-nodes"],
    ),
    Case(
        "affinity to pods that do not exist",
        [make_node("a")],
        make_pod("web").pod_affinity(app="cache"),
        ["relax"],
    ),
    Case(
        "more memory than the shape has, with a bigger node to add",
        [make_node("a")],
        make_pod("mem").req(memory="12Gi"),
        ["add-nodes", "lower-requests"],
        {"node_template": make_node("big").capacity(memory="64Gi").obj.to_dict()},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_proposal_applied_makes_the_pod_fit(case):
    snapshot, pod = snapshot_of(*case.cluster), case.pod.obj.to_dict()
    space = Search(snapshot, CONFIG, REGISTRY, **case.options)
    assert space.placed(snapshot, pod) is None
    found = search(space, pod)
    assert [p.kind for p in found] == case.kinds
    for proposal in found:
        [result] = simulate(proposal.cluster, [Template(proposal.pod, 1)], config=CONFIG, registry=REGISTRY)
        assert result.nodes == [proposal.node], proposal.change


def test_nothing_is_proposed_when_nothing_in_the_space_helps():
    pod = make_pod("fpga").req(cpu="1", **{"example.com/fpga": "1"}).obj.to_dict()
    assert search(Search(snapshot_of(make_node("a"), make_node("b")), CONFIG, REGISTRY), pod) == []


def test_the_changes_say_what_they_are():
    snapshot = snapshot_of(make_node("a").taint("dedicated", "gpu"), make_node("b").taint("dedicated", "gpu"))
    [remove, tolerate] = search(Search(snapshot, CONFIG, REGISTRY), make_pod("web").obj.to_dict())
    assert remove.change == f"remove taint dedicated=gpu:NoSchedule from node {remove.node}"
    assert [n["spec"].get("taints") for n in remove.cluster.of_kind("Node")].count(None) == 1
    assert tolerate.change == "add to the pod a toleration of dedicated=gpu:NoSchedule"


def test_lower_requests_keeps_the_largest_fraction_that_fits():
    snapshot = snapshot_of(make_node("a"))
    [proposal] = search(Search(snapshot, CONFIG, REGISTRY), make_pod("big").req(cpu="8").obj.to_dict())
    assert proposal.change == "lower requests to app: cpu=4 (32/64 of now)"


def test_add_nodes_copies_the_most_common_shape():
    nodes = [make_node("small"), make_node("x").capacity(cpu="6"), make_node("y").capacity(cpu="6")]
    full = [make_pod(f"on-{n}").req(cpu="6").node(n) for n in ("x", "y")]
    snapshot = snapshot_of(*nodes, *full)
    assert common_node(snapshot)["metadata"]["name"] == "x"
    [add, lower] = search(Search(snapshot, CONFIG, REGISTRY), make_pod("p").req(cpu="5").obj.to_dict())
    assert (add.change, add.node) == ("add 1 node(s) like x", "whatif-node-0")
    assert lower.change == "lower requests to app: cpu=3984m (51/64 of now)" and lower.node == "small"


def test_a_pending_pod_of_the_cluster_is_taken_out_to_be_placed():
    snapshot = snapshot_of(make_node("a"), make_pod("stuck", "team").req(cpu="6"))
    rest, pod = pending_pod(snapshot, "team/stuck")
    assert pod["metadata"]["name"] == "stuck" and "status" not in pod
    assert [i["kind"] for i in rest.items] == ["Node"]
    with pytest.raises(KeyError):
        pending_pod(snapshot, "team/missing")


def test_fit_command_lists_the_changes_and_names_a_missing_pod(tmp_path, capsys):
    snapshot_of(make_node("a").taint("dedicated", "gpu"), make_pod("stuck").req(cpu="1")).save(tmp_path / "c.yaml")
    args = ["fit", "--snapshot", str(tmp_path / "c.yaml")]
    assert main([*args, "--pod", "default/stuck", "--output", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["pod"] == "default/stuck" and body["fitsNow"] is None
    assert [p["kind"] for p in body["proposals"]] == ["remove-taint", "tolerate"]
    assert main([*args, "--pod", "stuck"]) == 0
    assert "remove taint dedicated=gpu:NoSchedule from node a" in capsys.readouterr().out
    assert main([*args, "--pod", "default/gone"]) == 2
    assert capsys.readouterr().err == "--pod: no pod default/gone in the cluster\n"


def budget(name: str, allowed: int | None, **labels: str) -> dict[str, Any]:
    pdb: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}},
    }
    if allowed is not None:
        pdb["status"] = {"disruptionsAllowed": allowed}
    return pdb


@pytest.mark.parametrize(
    ("budgets", "change"),
    [
        ([], "evict 1 lower-priority pod(s) from a: default/low-a"),
        ([budget("guard", 1, app="guarded")], "evict 1 lower-priority pod(s) from a: default/low-a"),
        ([budget("guard", 0, app="guarded")], "evict 1 lower-priority pod(s) from b: default/low-b"),
        ([budget("guard", None, app="guarded")], "evict 1 lower-priority pod(s) from b: default/low-b"),
        ([budget("guard", 0, app="guarded"), budget("all", 0, tier="low")], None),
    ],
)
def test_evictions_leave_the_pods_their_budgets_protect(budgets, change):
    cluster = [
        make_node("a"),
        make_node("b"),
        make_pod("low-a").labels(app="guarded", tier="low").req(cpu="3").node("a"),
        make_pod("low-b").labels(app="free", tier="low").req(cpu="2500m").node("b"),
        HIGH,
        *budgets,
    ]
    snapshot, pod = snapshot_of(*cluster), make_pod("vip").req(cpu="3").priority_class("high").obj.to_dict()
    found = [p for p in search(Search(snapshot, CONFIG, REGISTRY, max_nodes=0), pod) if p.kind == "evict"]
    assert [p.change for p in found] == ([change] if change else [])
