"""NodeResourcesAllocatable: Least prefers the smallest node, Most the largest; the batch path
agrees with the per-node one; arguments are checked with scheduler-plugins' messages."""

from __future__ import annotations

import pytest

from kubesched.plugin.testing import check_plugin, framework
from kubesched_scheduler_plugins.allocatable import NAME, SPEC, NodeResourcesAllocatableArgs
from objects import node, pod

NODES = [
    node("small", cpu="2", memory="4Gi"),
    node("medium", cpu="8", memory="32Gi"),
    node("large", cpu="32", memory="128Gi"),
]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("Least", {"small": 100, "medium": 77, "large": 0}),  # (163071 - 40767) * 100 // (163071 - 6095)
        ("Most", {"small": 0, "medium": 22, "large": 100}),
    ],
)
def test_least_prefers_the_smallest_node_and_most_the_largest(mode: str, expected: dict[str, int]) -> None:
    (verdicts,) = check_plugin(SPEC, name=NAME, nodes=NODES, pending=[pod("p")], args={"mode": mode})
    assert verdicts.scores == expected
    # The raw score: (cpu milli * 2^20 + memory bytes) / (2^20 + 1), the sum of the weights; negated for Least.
    small = (2000 * (1 << 20) + 4 * (1 << 30)) // ((1 << 20) + 1)
    assert verdicts.raw_scores["small"] == (-small if mode == "Least" else small)


def test_what_runs_on_a_node_does_not_matter() -> None:
    busy = [pod(f"r{i}", cpu="1", nodeName="small") for i in range(2)]
    (verdicts,) = check_plugin(SPEC, name=NAME, nodes=NODES, pods=busy, pending=[pod("p")])
    assert max(verdicts.scores, key=verdicts.scores.__getitem__) == "small"


def test_resource_weights_choose_what_counts() -> None:
    nodes = [node("cpu-rich", cpu="64", memory="8Gi"), node("memory-rich", cpu="4", memory="512Gi")]
    args = {"mode": "Most", "resources": [{"name": "cpu", "weight": 1}]}
    (verdicts,) = check_plugin(SPEC, name=NAME, nodes=nodes, pending=[pod("p")], args=args)
    assert verdicts.scores == {"cpu-rich": 100, "memory-rich": 0}
    args = {"mode": "Most", "resources": [{"name": "memory", "weight": 1}]}
    (verdicts,) = check_plugin(SPEC, name=NAME, nodes=nodes, pending=[pod("p")], args=args)
    assert verdicts.scores == {"cpu-rich": 0, "memory-rich": 100}


def test_equal_nodes_all_score_the_minimum() -> None:
    (verdicts,) = check_plugin(SPEC, name=NAME, nodes=[node("a"), node("b")], pending=[pod("p")])
    assert verdicts.scores == {"a": 0, "b": 0}


def test_the_defaults_are_upstreams() -> None:
    args = NodeResourcesAllocatableArgs()
    assert args.mode == "Least"
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1 << 20), ("memory", 1)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"mode": "Biggest"}, "invalid mode, got Biggest"),
        ({"resources": [{"name": "cpu", "weight": 0}]}, "resource Weight of cpu should be a positive value, got 0"),
        ({"resource": []}, "unknown field `resource`"),
    ],
)
def test_bad_arguments_are_refused_naming_the_problem(args: dict[str, object], message: str) -> None:
    with pytest.raises(Exception, match=message):
        framework({NAME: SPEC}, args={NAME: args})
