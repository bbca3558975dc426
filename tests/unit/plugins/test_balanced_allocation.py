"""NodeResourcesBalancedAllocation: the with/without-pod balance score, the best-effort skip,
arguments, and golden cases."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
import yaml
from lightkube.resources import core_v1

from golden_corpus import CORPUS as GOLDEN
from golden_corpus import golden_nodes, golden_pod
from kubesched.cache import NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import SKIP
from kubesched.plugins import balanced_allocation as ba
from kubesched.plugins.resource_scoring import ArgsError, ResourceSpec, balance


def pod(name: str = "p", requests: dict[str, str] | None = None, **spec: Any) -> PodInfo:
    container: dict[str, Any] = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    if requests:
        container["resources"] = {"requests": requests}
    body = {"containers": [container], **spec}
    return PodInfo(msgspec.convert({"metadata": {"name": name, "uid": name}, "spec": body}, core_v1.Pod))


def node(allocatable: dict[str, str], *pods: dict[str, str] | None) -> NodeInfo:
    info = NodeInfo(
        msgspec.convert(
            {"metadata": {"name": "n"}, "status": {"allocatable": {"pods": "110", **allocatable}}}, core_v1.Node
        )
    )
    for i, requests in enumerate(pods):
        info.add_pod(pod(f"existing-{i}", requests, nodeName="n"))
    return info


def plugin(**args: Any) -> ba.NodeResourcesBalancedAllocation:
    return ba.new(msgspec.convert(args, ba.Args), None)


NODE_4_8 = {"cpu": "4", "memory": "8Gi"}

SCORE_CASES = [
    # (id, args, node allocatable, existing pods, incoming requests, expected score)
    # without: cpu .25, memory .125 -> std .0625 -> 93; with: .5/.5 -> 100; 50 + (50 + 100 - 93) // 2 = 78
    ("pod evens the node out", {}, NODE_4_8, [{"cpu": "1", "memory": "1Gi"}], {"cpu": "1", "memory": "3Gi"}, 78),
    # without: 0/0 -> 100; with: .5/0 -> std .25 -> 75; 50 + (50 + 75 - 100) // 2 = 62
    ("pod unbalances an empty node", {}, NODE_4_8, [], {"cpu": "2"}, 62),
    # same fractions with and without -> 75, whatever the balance
    ("no change", {}, NODE_4_8, [{"cpu": "2"}], {"cpu": "1", "memory": "2Gi"}, 75),
    # only actual requests count: an existing best-effort pod adds nothing (without: 0/0 -> 100)
    ("best-effort neighbours ignored", {}, NODE_4_8, [None, None], {"cpu": "2"}, 62),
    # fractions are capped at 1: cpu 5/4 -> 1 both times; memory 0 -> 2Gi/8Gi
    # without: std .5 -> 50; with: std (1 - .25)/2 = .375 -> 62; 50 + (50 + 62 - 50) // 2 = 81
    ("fractions capped", {}, NODE_4_8, [{"cpu": "5"}], {"cpu": "1", "memory": "2Gi"}, 81),
    # three resources: with .25/.25/1 -> population std .3536 -> 64; without 0/0/0 -> 100; 50 + 14 // 2 = 57
    (
        "three resources",
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu"}]},
        {**NODE_4_8, "example.com/gpu": "4"},
        [],
        {"cpu": "1", "memory": "2Gi", "example.com/gpu": "4"},
        57,
    ),
    # an extended resource the pod does not request is left out: back to the two-resource case
    (
        "unrequested extended resource",
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu"}]},
        {**NODE_4_8, "example.com/gpu": "4"},
        [{"cpu": "1", "memory": "1Gi"}],
        {"cpu": "1", "memory": "3Gi"},
        78,
    ),
    # a resource the node does not offer is left out; one fraction has std 0 -> 100 both ways -> 75
    ("one resource offered", {}, {"cpu": "4"}, [], {"cpu": "1", "memory": "1Gi"}, 75),
]


@pytest.mark.parametrize(
    ("args", "allocatable", "existing", "requests", "expected"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(
    args: dict[str, Any],
    allocatable: dict[str, str],
    existing: list[dict[str, str] | None],
    requests: dict[str, str] | None,
    expected: int,
) -> None:
    p, incoming = plugin(**args), pod("incoming", requests)
    state = CycleState()
    assert p.pre_score(state, incoming, []) is None
    assert p.score(state, incoming, node(allocatable, *existing)) == expected
    assert p.score(CycleState(), incoming, node(allocatable, *existing)) == expected  # without PreScore


@pytest.mark.parametrize(
    ("fractions", "expected"),
    [([], 100), ([0.7], 100), ([0.2, 0.7], 75), ([0.25, 0.25, 1.0], 64), ([0.1, 0.2, 0.3, 0.4], 88)],
)
def test_balance(fractions: list[float], expected: int) -> None:
    assert balance(fractions) == expected


@pytest.mark.parametrize(
    "requests",
    [None, {"ephemeral-storage": "1Gi"}, {"example.com/gpu": "1"}],
    ids=["no requests", "unscored resource", "unconfigured extended resource"],
)
def test_prescore_skips_best_effort(requests: dict[str, str] | None) -> None:
    state = CycleState()
    assert ba.new(None, None).pre_score(state, pod("p", requests), []) == SKIP
    assert ba.new(None, None).score(state, pod("p", requests), node(NODE_4_8)) == 0


def test_prescore_counts_init_containers() -> None:
    incoming = pod("p", None, initContainers=[{"name": "i", "resources": {"requests": {"cpu": "1"}}}])
    assert ba.new(None, None).pre_score(CycleState(), incoming, []) is None


def test_no_normalize_score() -> None:
    assert not hasattr(ba.new(None, None), "normalize_score")


def test_args_defaults() -> None:
    assert ba.new(None, None).resources == ["cpu", "memory"]
    assert ba.Args().defaulted().resources == [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
    args = msgspec.convert(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "resources": [{"name": "cpu"}, {"name": "x.io/y", "weight": 0}],
        },
        ba.Args,
    ).defaulted()
    assert args.resources == [ResourceSpec("cpu", 1), ResourceSpec("x.io/y", 1)]
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"resource": []}, ba.Args)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight: Invalid value: 2: must be 1"),
        ({"resources": [{"name": "cpu", "weight": -1}]}, "resources[0].weight: Invalid value: -1: must be 1"),
        ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, 'resources[1].name: Duplicate value: "cpu"'),
        (
            {"resources": [{"name": "cpu", "weight": 3}, {"name": "cpu"}]},
            '[resources[0].weight: Invalid value: 3: must be 1, resources[1].name: Duplicate value: "cpu"]',
        ),
    ],
)
def test_args_validation(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgsError) as exc:
        ba.new(msgspec.convert(args, ba.Args), None)
    assert str(exc.value) == message


# -- golden cases ---------------------------------------------------------------------------------


def golden_cases() -> list[str]:
    """Cases where at least one node was scored."""
    if not GOLDEN.is_dir():
        return []
    out = []
    for path in sorted(GOLDEN.glob("*.expected.json")):
        expected = json.loads(path.read_text())
        if any(n.get("scores") for n in expected.get("nodes") or []):
            out.append(path.name.removesuffix(".expected.json"))
    return out


@pytest.mark.skipif(not GOLDEN.is_dir(), reason="golden corpus not available")
@pytest.mark.parametrize("case", golden_cases())
def test_golden(case: str) -> None:
    """PreScore skips exactly when the recording skipped the plugin; raw scores match per node."""
    data = yaml.safe_load((GOLDEN / f"{case}.input.yaml").read_text())
    expected = json.loads((GOLDEN / f"{case}.expected.json").read_text())
    nodes = golden_nodes(data)
    incoming = golden_pod(data["pod"])
    p = ba.new(None, None)
    state = CycleState()
    skipped = p.pre_score(state, incoming, list(nodes.values())) == SKIP
    assert skipped == (ba.NAME in expected.get("skippedScorePlugins", []))
    for entry in expected["nodes"]:
        if ba.NAME in entry.get("scores", {}):
            assert p.score(state, incoming, nodes[entry["name"]]) == entry["scores"][ba.NAME]["raw"], entry["name"]


def test_golden_selection_is_not_empty() -> None:
    if GOLDEN.is_dir():
        assert len(golden_cases()) > 10
