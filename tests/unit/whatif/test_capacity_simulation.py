"""`kubesched capacity`'s simulation: cluster-capacity's semantics, case by case — counts, stop
reasons with the scheduler's FailedScheduling message, and the distribution over nodes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml

from builders import make_node, make_pod, snapshot_of
from kubesched.cli.main import main
from kubesched.config import default_config, load_text
from kubesched.plugins.registry import in_tree_registry
from kubesched.whatif.capacity import CapacityError, Template, simulate
from kubesched.whatif.counterfactual import Search, nodes_needed

REGISTRY = in_tree_registry()


def prediction_nodes() -> list[Any]:
    """cluster-capacity's TestPrediction cluster: three nodes of 3 pods and 300m, 400m, 1200m cpu."""
    return [
        make_node(name).capacity(cpu=cpu, pods=3) for name, cpu in (("n1", "300m"), ("n2", "400m"), ("n3", "1200m"))
    ]


def small(name: str = "small") -> Any:
    return make_pod(name).req(cpu="100m", memory="5e6")


def unschedulable(n: int, reasons: str, preemption: str = "") -> str:
    """The PodScheduled message: the Filter reasons, then DynamicResources' and DefaultPreemption's
    PostFilter words (`preemption`: its reasons, by default no victims on any node)."""
    preemption = preemption or f"{n} No preemption victims found for incoming pod"
    postfilter = f"no new claims to deallocate, preemption: 0/{n} nodes are available: {preemption}."
    return f"0/{n} nodes are available: {reasons}. {postfilter}"


@dataclass
class Case:
    id: str
    cluster: list[Any]
    templates: list[Template]
    placed: list[int]  # copies of each template
    stops: list[tuple[str, str]]  # each template's (failType, failMessage)
    on_nodes: list[dict[str, int]] | None = None  # each template's distribution, when the case pins it
    options: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case(
        "max-limit stops with LimitReached",
        prediction_nodes(),
        [Template(small().obj.to_dict())],
        [6],
        [("LimitReached", "Maximum number of pods simulated: 6")],
        options={"max_limit": 6},
    ),
    Case(
        "unlimited stops at the first copy that does not fit",
        prediction_nodes(),
        [Template(small().obj.to_dict())],
        [9],
        [("Unschedulable", unschedulable(3, "1 Insufficient cpu, 3 Too many pods"))],
        [{"n1": 3, "n2": 3, "n3": 3}],
    ),
    Case(
        "excluded nodes are not in the copy",
        prediction_nodes(),
        [Template(small().obj.to_dict())],
        [6],
        [("Unschedulable", unschedulable(2, "1 Insufficient cpu, 2 Too many pods"))],
        [{"n1": 3, "n2": 3}],
        options={"exclude_nodes": ["n3"]},
    ),
    Case(
        "bound pods take their room",
        [*prediction_nodes(), make_pod("running").req(cpu="1").node("n3")],
        [Template(small().obj.to_dict())],
        [8],
        [("Unschedulable", unschedulable(3, "2 Insufficient cpu, 3 Too many pods"))],
        [{"n1": 3, "n2": 3, "n3": 2}],
    ),
    Case(
        "pending, succeeded and failed pods take none",
        [
            *prediction_nodes(),
            make_pod("pending").req(cpu="1"),
            make_pod("done").req(cpu="1").node("n3").phase("Succeeded"),
            make_pod("broke").req(cpu="1").node("n3").phase("Failed"),
        ],
        [Template(small().obj.to_dict())],
        [9],
        [("Unschedulable", unschedulable(3, "1 Insufficient cpu, 3 Too many pods"))],
    ),
    Case(
        "a node selector narrows the nodes",
        [make_node("a").labels(disk="ssd"), make_node("b"), make_node("c").labels(disk="ssd")],
        [Template(make_pod("fast").req(cpu="1").node_selector(disk="ssd").obj.to_dict())],
        [8],
        [
            (
                "Unschedulable",
                unschedulable(
                    3,
                    "1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu",
                    "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod",
                ),
            )
        ],
        [{"a": 4, "c": 4}],
    ),
    Case(
        "a taint keeps copies off unless tolerated",
        [make_node("a").taint("dedicated", "gpu"), make_node("b")],
        [Template(make_pod("web").req(cpu="2").obj.to_dict())],
        [2],
        [
            (
                "Unschedulable",
                unschedulable(
                    2,
                    "1 Insufficient cpu, 1 node(s) had untolerated taint(s)",
                    "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling",
                ),
            )
        ],
        [{"b": 2}],
    ),
    Case(
        "a host port allows one copy a node",
        [make_node("a"), make_node("b"), make_node("c")],
        [Template(make_pod("proxy").req(cpu="10m").host_port(8080).obj.to_dict())],
        [3],
        [("Unschedulable", unschedulable(3, "3 node(s) didn't have free ports for the requested pod ports"))],
        [{"a": 1, "b": 1, "c": 1}],
    ),
    Case(
        "self anti-affinity spreads one copy a node",
        [make_node("a"), make_node("b")],
        [Template(make_pod("db").labels(app="db").pod_affinity(anti=True, app="db").obj.to_dict())],
        [2],
        [("Unschedulable", unschedulable(2, "2 node(s) didn't match pod anti-affinity rules"))],
        [{"a": 1, "b": 1}],
    ),
    Case(
        "a replica count stops at the count",
        prediction_nodes(),
        [Template(small().obj.to_dict(), replicas=4)],
        [4],
        [("LimitReached", "Maximum number of pods simulated: 4")],
    ),
    Case(
        "later templates see the copies of earlier ones",
        prediction_nodes(),
        [Template(make_pod("big").req(cpu="1").obj.to_dict(), replicas=1), Template(small().obj.to_dict())],
        [1, 8],
        [
            ("LimitReached", "Maximum number of pods simulated: 1"),
            ("Unschedulable", unschedulable(3, "2 Insufficient cpu, 3 Too many pods")),
        ],
        [{"n3": 1}, {"n1": 3, "n2": 3, "n3": 2}],
    ),
    Case(
        "a replica count of zero places none",
        prediction_nodes(),
        [Template(small().obj.to_dict(), replicas=0)],
        [0],
        [("LimitReached", "Maximum number of pods simulated: 0")],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_capacity_matches_cluster_capacity(case):
    results = simulate(
        snapshot_of(*case.cluster), case.templates, config=default_config(REGISTRY), registry=REGISTRY, **case.options
    )
    assert [len(r.nodes) for r in results] == case.placed
    assert [(r.stop.fail_type, r.stop.fail_message) for r in results] == case.stops
    if case.on_nodes is not None:
        assert [dict(r.on_nodes()) for r in results] == case.on_nodes


PACKER = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}]
"""


def test_a_profile_named_by_the_template_decides_the_placement():
    config = load_text(PACKER, REGISTRY)
    nodes = [make_node(n) for n in ("a", "b", "c", "d")]
    spread, packed = (
        simulate(
            snapshot_of(*nodes),
            [Template(make_pod("w").req(cpu="1").scheduler(name).obj.to_dict(), 4)],
            config=config,
            registry=REGISTRY,
        )[0]
        for name in ("default-scheduler", "packer")
    )
    assert len(set(spread.nodes)) == 4
    assert len(set(packed.nodes)) == 1


@pytest.mark.parametrize(
    "template, message",
    [
        (make_pod("x").scheduler("nobody"), "pod x: spec.schedulerName 'nobody' is no profile of the configuration"),
        (make_pod("x").gates("wait"), "pod x: spec.schedulingGates: a gated copy is never scheduled"),
        (make_pod("").req(cpu="1"), "a pod spec needs metadata.name"),
    ],
)
def test_a_template_that_cannot_be_simulated_is_one_clear_error(template, message):
    with pytest.raises(CapacityError, match="^" + message):
        simulate(
            snapshot_of(make_node("a")),
            [Template(template.obj.to_dict())],
            config=default_config(REGISTRY),
            registry=REGISTRY,
        )


def test_the_cluster_read_is_not_changed():
    snapshot = snapshot_of(*prediction_nodes(), make_pod("running").req(cpu="1").node("n3"))
    before = snapshot.dumps()
    simulate(snapshot, [Template(small().obj.to_dict())], config=default_config(REGISTRY), registry=REGISTRY)
    assert snapshot.dumps() == before


@pytest.mark.parametrize("replicas, needed", [(9, 0), (12, 1), (15, 2), (16, 3)])
def test_nodes_needed_is_the_fewest_nodes_for_every_replica(replicas, needed):
    space = Search(snapshot_of(*prediction_nodes()), default_config(REGISTRY), REGISTRY, max_nodes=50)
    # the three shapes are one node each: the first, n1 (300m, 3 pods: three copies), is copied
    assert nodes_needed(space, [Template(small().obj.to_dict(), replicas)]) == needed


def test_nodes_needed_gives_up_past_the_bound_and_capacity_says_so(tmp_path, capsys):
    space = Search(snapshot_of(*prediction_nodes()), default_config(REGISTRY), REGISTRY, max_nodes=2)
    assert nodes_needed(space, [Template(small().obj.to_dict(), 30)]) is None
    snapshot_of(*prediction_nodes()).save(tmp_path / "c.yaml")
    rs = {
        "kind": "ReplicaSet",
        "metadata": {"name": "small"},
        "spec": {"replicas": 12, "template": small().obj.to_dict()},
    }
    (tmp_path / "rs.yaml").write_text(yaml.safe_dump(rs))
    args = [
        "capacity",
        "--snapshot",
        str(tmp_path / "c.yaml"),
        "--podspec",
        str(tmp_path / "rs.yaml"),
        "--nodes-needed",
    ]
    assert main(args) == 0
    assert capsys.readouterr().out == "9\n\nTo place every replica: add 1 node(s) like n1.\n"
    assert main([*args, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"]["nodesNeeded"] == {"nodes": 1, "like": "n1", "maxNodes": 1000}
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(small().obj.to_dict()))
    assert main(["capacity", "--snapshot", str(tmp_path / "c.yaml"), "--podspec", str(pod), "--nodes-needed"]) == 2
    assert "--nodes-needed: every --podspec needs a replica count" in capsys.readouterr().err
