"""NodeResourcesFit: filter verdicts, the three scoring strategies, arguments, and golden cases."""

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
from kubesched.framework.events import NODE, POD, ActionType
from kubesched.framework.status import Code, Status
from kubesched.plugins import noderesources_fit as fit
from kubesched.plugins.resource_scoring import ArgsError, UtilizationShapePoint, broken_linear

Mi = 1024 * 1024
Gi = 1024 * Mi


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


def run_filter(plugin: fit.NodeResourcesFit, incoming: PodInfo, target: NodeInfo) -> Status | None:
    state = CycleState()
    assert plugin.pre_filter(state, incoming, [target]) == (None, None)
    return plugin.filter(state, incoming, target)


def run_score(plugin: fit.NodeResourcesFit, incoming: PodInfo, target: NodeInfo) -> int:
    state = CycleState()
    assert plugin.pre_score(state, incoming, [target]) is None
    return plugin.score(state, incoming, target)


def plugin(**args: Any) -> fit.NodeResourcesFit:
    return fit.new(msgspec.convert(args, fit.Args), None)


# -- Filter ---------------------------------------------------------------------------------------

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
SMALL = {"cpu": "4", "memory": "8Gi"}

FILTER_CASES = [
    # (id, args, node allocatable, existing pods' requests, incoming requests, expected code, reasons)
    ("fits", {}, SMALL, [{"cpu": "3"}], {"cpu": "1", "memory": "1Gi"}, None, []),
    ("too many pods", {}, {**SMALL, "pods": "1"}, [None], {"cpu": "1"}, U, ["Too many pods"]),
    ("cpu short, resolvable", {}, SMALL, [{"cpu": "3"}], {"cpu": "2"}, U, ["Insufficient cpu"]),
    ("cpu beyond allocatable", {}, SMALL, [], {"cpu": "5"}, UU, ["Insufficient cpu"]),
    ("memory short", {}, SMALL, [{"memory": "7Gi"}], {"memory": "2Gi"}, U, ["Insufficient memory"]),
    # One unresolvable resource makes the whole node unresolvable, whatever the others are.
    (
        "any unresolvable wins",
        {},
        SMALL,
        [{"memory": "7Gi"}],
        {"cpu": "5", "memory": "2Gi"},
        UU,
        ["Insufficient cpu", "Insufficient memory"],
    ),
    (
        "fixed order",
        {},
        {"cpu": "2", "memory": "4Gi", "ephemeral-storage": "20Gi", "pods": "2"},
        [{"cpu": "1500m", "memory": "3Gi", "ephemeral-storage": "15Gi"}, {"cpu": "200m"}],
        {"cpu": "1", "memory": "2Gi", "ephemeral-storage": "10Gi"},
        U,
        ["Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage"],
    ),
    ("extended missing on node", {}, SMALL, [], {"example.com/gpu": "1"}, UU, ["Insufficient example.com/gpu"]),
    (
        "extended in use",
        {},
        {**SMALL, "example.com/gpu": "2"},
        [{"example.com/gpu": "2"}],
        {"example.com/gpu": "1"},
        U,
        ["Insufficient example.com/gpu"],
    ),
    ("ignored resource", {"ignoredResources": ["example.com/gpu"]}, SMALL, [], {"example.com/gpu": "1"}, None, []),
    ("ignored group", {"ignoredResourceGroups": ["example.com"]}, SMALL, [], {"example.com/gpu": "1"}, None, []),
    # Hugepages are scalars but not extended resources: they cannot be ignored.
    (
        "hugepages not ignorable",
        {"ignoredResources": ["hugepages-2Mi"]},
        SMALL,
        [],
        {"hugepages-2Mi": "4Mi", "memory": "4Mi"},
        UU,
        ["Insufficient hugepages-2Mi"],
    ),
    (
        "scalars by name",
        {},
        SMALL,
        [],
        {"z.example/b": "1", "a.example/a": "1"},
        UU,
        ["Insufficient a.example/a", "Insufficient z.example/b"],
    ),
    # Nothing requested: only the pod count matters, even on an over-committed node.
    ("best effort on full node", {}, SMALL, [{"cpu": "4", "memory": "8Gi"}], None, None, []),
    ("best effort, no pod slot", {}, {**SMALL, "pods": "1"}, [{"cpu": "4"}], None, U, ["Too many pods"]),
    # A zero request never fails, even where the node is already over its allocatable.
    ("zero cpu on overcommitted node", {}, SMALL, [{"cpu": "5"}], {"memory": "1Gi"}, None, []),
]


@pytest.mark.parametrize(
    ("args", "allocatable", "existing", "requests", "code", "reasons"),
    [c[1:] for c in FILTER_CASES],
    ids=[c[0] for c in FILTER_CASES],
)
def test_filter(
    args: dict[str, Any],
    allocatable: dict[str, str],
    existing: list[dict[str, str] | None],
    requests: dict[str, str] | None,
    code: Code | None,
    reasons: list[str],
) -> None:
    status = run_filter(plugin(**args), pod("incoming", requests), node(allocatable, *existing))
    if code is None:
        assert status is None
    else:
        assert status == Status(code, *reasons)


def test_filter_counts_init_containers_and_overhead() -> None:
    incoming = pod(
        "p",
        {"cpu": "1"},
        initContainers=[{"name": "i", "resources": {"requests": {"cpu": "3"}}}],
        overhead={"cpu": "500m"},
    )
    # max(1 app, 3 init) + 0.5 overhead = 3.5 cpu
    assert incoming.requests.cpu == 3500
    assert run_filter(plugin(), incoming, node(SMALL, {"cpu": "500m"})) is None
    assert run_filter(plugin(), incoming, node(SMALL, {"cpu": "501m"})) == Status(U, "Insufficient cpu")


def test_filter_without_prefilter_is_an_error() -> None:
    status = fit.new(None, None).filter(CycleState(), pod(), node(SMALL))
    assert status is not None and status.code == Code.ERROR
    assert status.message == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


def test_fits_request_reports_amounts() -> None:
    missing = fit.fits_request(pod("p", {"cpu": "2"}).requests, node(SMALL, {"cpu": "3"}))
    assert missing == [fit.InsufficientResource("cpu", "Insufficient cpu", 2000, 3000, 4000, False)]


# -- Score ----------------------------------------------------------------------------------------

NODE_4_8 = {"cpu": "4", "memory": "8Gi"}

SCORE_CASES = [
    # (id, args, node allocatable, existing pods, incoming requests, expected score)
    # cpu (4000-1500)*100/4000 = 62, memory (8-2)*100/8 = 75 -> (62+75)/2 = 68
    ("least", {}, NODE_4_8, [{"cpu": "1", "memory": "1Gi"}], {"cpu": "500m", "memory": "1Gi"}, 68),
    # weights cpu 2, memory 1: (62*2 + 75)/3 = 66
    (
        "least weighted",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 2}, {"name": "memory"}],
            }
        },
        NODE_4_8,
        [{"cpu": "1", "memory": "1Gi"}],
        {"cpu": "500m", "memory": "1Gi"},
        66,
    ),
    # best effort counts 100m / 200Mi: cpu 3900*100/4000 = 97, memory 7992*100/8192 = 97
    ("least non-zero pod", {}, NODE_4_8, [], None, 97),
    # best-effort existing pods count too: cpu 4000-100-100 -> 95, memory 8192-400 -> 95
    ("least non-zero node", {}, NODE_4_8, [None], None, 95),
    # over-committed cpu scores 0: (0 + (8192-200-200)*100/8192=95)/2 = 47
    ("least overcommitted", {}, NODE_4_8, [{"cpu": "4"}], {"cpu": "1"}, 47),
    # cpu 1500*100/4000 = 37, memory 2048*100/8192 = 25 -> 31
    (
        "most",
        {"scoringStrategy": {"type": "MostAllocated"}},
        NODE_4_8,
        [{"cpu": "1", "memory": "1Gi"}],
        {"cpu": "500m", "memory": "1Gi"},
        31,
    ),
    # requests beyond allocatable are capped at 100: (100 + 4)/2 = 52 (memory: 400Mi of 8Gi -> 4)
    ("most capped", {"scoringStrategy": {"type": "MostAllocated"}}, NODE_4_8, [{"cpu": "4"}], {"cpu": "1"}, 52),
    # utilization cpu 37, memory 26 on the identity shape -> round(63/2 = 31.5) = 32
    (
        "ratio",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            }
        },
        NODE_4_8,
        [{"cpu": "1", "memory": "1Gi"}],
        {"cpu": "500m", "memory": "1106Mi"},
        32,
    ),
    # Resources scoring 0 leave the average: cpu 75% -> 50, memory 25% -> 0 (left out) -> 50
    (
        "ratio skips zero scores",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 50, "score": 0}, {"utilization": 100, "score": 10}]
                },
            }
        },
        NODE_4_8,
        [{"cpu": "2500m", "memory": "1Gi"}],
        {"cpu": "500m", "memory": "1Gi"},
        50,
    ),
    # over-committed: utilization 100 -> last score (0 here), so only memory (400Mi: util 4, score 96) counts
    (
        "ratio overcommitted",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                },
            }
        },
        NODE_4_8,
        [{"cpu": "4"}],
        {"cpu": "1"},
        96,
    ),
    # An extended resource the pod does not request is left out: cpu 62, memory 75 -> 68
    (
        "unrequested extended resource skipped",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu"}],
            }
        },
        {**NODE_4_8, "example.com/gpu": "4"},
        [{"cpu": "1", "memory": "1Gi"}],
        {"cpu": "500m", "memory": "1Gi"},
        68,
    ),
    # ... a requested one counts: gpu (4-1)*100/4 = 75 with weight 2 -> (62 + 75 + 150)/4 = 71
    (
        "requested extended resource",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "example.com/gpu", "weight": 2}],
            }
        },
        {**NODE_4_8, "example.com/gpu": "4"},
        [{"cpu": "1", "memory": "1Gi"}],
        {"cpu": "500m", "memory": "1Gi", "example.com/gpu": "1"},
        71,
    ),
    # A resource the node does not offer (allocatable 0) is left out: only cpu counts -> 62
    (
        "no allocatable skipped",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu"}, {"name": "ephemeral-storage", "weight": 5}],
            }
        },
        NODE_4_8,
        [{"cpu": "1"}],
        {"cpu": "500m", "ephemeral-storage": "1Gi"},
        62,
    ),
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
    assert run_score(plugin(**args), pod("incoming", requests), node(allocatable, *existing)) == expected


def test_score_without_prescore_computes_requests() -> None:
    target = node(NODE_4_8, {"cpu": "1", "memory": "1Gi"})
    assert fit.new(None, None).score(CycleState(), pod("p", {"cpu": "500m", "memory": "1Gi"}), target) == 68


@pytest.mark.parametrize(
    ("points", "x", "expected"),
    [
        ([(0, 0), (100, 100)], 37, 37),
        ([(20, 30), (100, 100)], 5, 30),  # before the first point: its score
        ([(0, 0), (50, 100)], 80, 100),  # after the last point: its score
        ([(0, 100), (30, 0)], 10, 67),  # 100 + (-100*10)/30 truncates toward zero: 100 - 33
        ([(0, 0), (30, 50), (100, 100)], 37, 55),  # 50 + 50*7/70
    ],
)
def test_broken_linear(points: list[tuple[int, int]], x: int, expected: int) -> None:
    assert broken_linear(points)(x) == expected


def test_no_normalize_score_and_no_prefilter_extensions() -> None:
    p = fit.new(None, None)
    assert not hasattr(p, "normalize_score")
    assert not hasattr(p, "add_pod")


def test_events_to_register() -> None:
    events = [e.event for e in fit.new(None, None).events_to_register()]
    assert (events[0].resource, events[0].action) == (POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN)
    assert (events[1].resource, events[1].action) == (NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)
    assert (events[2].resource, events[2].action) == ("resource.k8s.io/DeviceClass", ActionType.ADD | ActionType.UPDATE)
    assert all(e.hint is not None for e in fit.new(None, None).events_to_register())


# -- Args -----------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    p = fit.new(None, None)
    assert (p.strategy, p.resources, p.weights) == ("LeastAllocated", ["cpu", "memory"], [1, 1])
    args = msgspec.convert(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}, {"name": "x/y"}]}},
        fit.Args,
    ).defaulted()
    assert args.scoring_strategy is not None
    assert [(r.name, r.weight) for r in args.scoring_strategy.resources] == [("cpu", 1), ("x/y", 1)]
    empty = msgspec.convert({"scoringStrategy": {"type": "MostAllocated", "resources": []}}, fit.Args).defaulted()
    assert empty.scoring_strategy is not None
    assert [(r.name, r.weight) for r in empty.scoring_strategy.resources] == [("cpu", 1), ("memory", 1)]
    assert fit.Args().defaulted() == fit.Args().defaulted().defaulted()


def test_args_decode_upstream_names() -> None:
    args = msgspec.convert(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "NodeResourcesFitArgs",
            "ignoredResources": ["a.com/x"],
            "ignoredResourceGroups": ["b.com"],
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "cpu", "weight": 3}],
                "requestedToCapacityRatio": {"shape": [{"utilization": 10, "score": 2}]},
            },
        },
        fit.Args,
    )
    assert args.ignored_resources == ["a.com/x"] and args.ignored_resource_groups == ["b.com"]
    assert args.scoring_strategy is not None and args.scoring_strategy.requested_to_capacity_ratio is not None
    assert args.scoring_strategy.requested_to_capacity_ratio.shape == [UtilizationShapePoint(10, 2)]
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"scoringStrategy": {"typo": "x"}}, fit.Args)


INVALID_ARGS = [
    (
        {"scoringStrategy": {"type": "Foo"}},
        'scoringStrategy.type: Unsupported value: "Foo": supported values: '
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
    ),
    (
        {"scoringStrategy": {"resources": [{"name": "cpu"}]}},  # a given strategy gets no default type
        'scoringStrategy.type: Unsupported value: "": supported values: '
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
    ),
    (
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": -1}]}},
        "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of cpu not in valid range (0, 100]",
    ),
    (
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "memory", "weight": 101}]}},
        "scoringStrategy.resources[0].weight: Invalid value: 101: "
        "resource weight of memory not in valid range (0, 100]",
    ),
    (
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 11}]},
            }
        },
        "scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
    ),
    (
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 50, "score": 1}, {"utilization": 101, "score": 1}]
                },
            }
        },
        "scoringStrategy.shape[1].utilization: Invalid value: 101: not in valid range [0, 100]",
    ),
    (
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]
                },
            }
        },
        "scoringStrategy.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
    ),
    (
        {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}},
        "scoringStrategy.shape: Required value: at least one point must be specified",
    ),
    (
        {"ignoredResourceGroups": ["example.com/gpu"]},
        "ignoredResourceGroups[0]: Invalid value: \"example.com/gpu\": resource group name can't contain '/'",
    ),
    (
        {"ignoredResources": ["bad name"]},
        'ignoredResources[0]: Invalid value: "bad name": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
        "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ),
    # Several problems are reported together, bracketed as upstream's aggregate error.
    (
        {"scoringStrategy": {"type": "Foo", "resources": [{"name": "cpu", "weight": -2}]}},
        '[scoringStrategy.type: Unsupported value: "Foo": supported values: "LeastAllocated", "MostAllocated", '
        '"RequestedToCapacityRatio", scoringStrategy.resources[0].weight: Invalid value: -2: '
        "resource weight of cpu not in valid range (0, 100]]",
    ),
]


@pytest.mark.parametrize(("args", "message"), INVALID_ARGS)
def test_args_validation(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as exc:
        fit.new(msgspec.convert(args, fit.Args), None)
    assert isinstance(exc.value, ArgsError)
    assert str(exc.value) == message


def test_args_validation_path_prefix() -> None:
    args = msgspec.convert({"scoringStrategy": {"type": "Foo"}}, fit.Args)
    with pytest.raises(ArgsError, match=r"^profiles\[0\]\.pluginConfig\[1\]\.args\.scoringStrategy\.type: "):
        args.validate("profiles[0].pluginConfig[1].args")


# -- golden cases ---------------------------------------------------------------------------------

# Filter plugins of the default profile that run after NodeResourcesFit: a node they rejected passed Fit.
AFTER_FIT = {
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "NodeDeclaredFeatures",
}


def golden_fit_args(data: dict[str, Any]) -> fit.Args | None:
    for profile in (data.get("schedulerConfig") or {}).get("profiles") or []:
        for entry in profile.get("pluginConfig") or []:
            if entry["name"] == fit.NAME:
                return msgspec.convert(entry["args"], fit.Args)
    return None


def golden_cases() -> list[str]:
    if not GOLDEN.is_dir():
        return []
    return sorted(p.name.removesuffix(".input.yaml") for p in GOLDEN.glob("*.input.yaml") if "table" not in p.name)


@pytest.mark.skipif(not GOLDEN.is_dir(), reason="golden corpus not available")
@pytest.mark.parametrize("case", golden_cases())
def test_golden(case: str) -> None:
    """Every node's Fit verdict (where Fit ran) and raw Fit score (where scored) match the recording."""
    data = yaml.safe_load((GOLDEN / f"{case}.input.yaml").read_text())
    expected = json.loads((GOLDEN / f"{case}.expected.json").read_text())
    if not data.get("nodes") or expected.get("preFilter", {}).get("code", "Success") != "Success":
        return
    nodes = golden_nodes(data)
    incoming = golden_pod(data["pod"])
    p = fit.new(golden_fit_args(data), None)
    state = CycleState()
    p.pre_filter(state, incoming, list(nodes.values()))
    p.pre_score(state, incoming, list(nodes.values()))
    for entry in expected["nodes"]:
        verdict, target = entry["filter"], nodes[entry["name"]]
        if verdict["stage"] != "Filter":
            continue
        status = p.filter(state, incoming, target)
        if verdict.get("plugin") == fit.NAME:
            assert status == Status(Code[_snake(verdict["code"])], *verdict["reasons"]), entry["name"]
        elif verdict["code"] == "Success" or verdict.get("plugin") in AFTER_FIT:
            assert status is None, entry["name"]
        if fit.NAME in entry.get("scores", {}):
            assert p.score(state, incoming, target) == entry["scores"][fit.NAME]["raw"], entry["name"]


def _snake(code: str) -> str:
    return "".join(f"_{ch}" if ch.isupper() and i else ch for i, ch in enumerate(code)).upper()


def test_golden_selection_is_not_empty() -> None:
    if GOLDEN.is_dir():
        assert any(c.startswith("fit-") for c in golden_cases())
        assert any(c.startswith("scores-") for c in golden_cases())
