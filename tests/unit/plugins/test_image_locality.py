"""ImageLocality: spread-scaled image sizes, thresholds, name normalization, and golden cases."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
import yaml
from lightkube.resources import core_v1

from golden_corpus import CORPUS as GOLDEN
from kubesched.cache import ImageState, NodeInfo, PodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins import image_locality as il

MB = 1024 * 1024


def pod(*images: str, init: tuple[str, ...] = (), volumes: tuple[str, ...] = ()) -> PodInfo:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]
    if volumes:
        spec["volumes"] = [{"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(volumes)]
    return PodInfo(msgspec.convert({"metadata": {"name": "p"}, "spec": spec}, core_v1.Pod))


def cluster(nodes: dict[str, dict[str, int]]) -> tuple[dict[str, NodeInfo], Any]:
    """Nodes holding images ({node: {image name: size}}), sharing one ImageState per image name as
    the cache does, and a handle whose snapshot lists them all."""
    states: dict[str, ImageState] = {}
    infos: dict[str, NodeInfo] = {}
    for name, images in nodes.items():
        info = infos[name] = NodeInfo(msgspec.convert({"metadata": {"name": name}}, core_v1.Node))
        for image, size in images.items():
            state = states.setdefault(image, ImageState(size))
            state.nodes.add(name)
            info.image_states[image] = state
    return infos, SimpleNamespace(snapshot=SimpleNamespace(node_info_list=list(infos.values())))


def score(incoming: PodInfo, nodes: dict[str, dict[str, int]], target: str) -> int:
    infos, handle = cluster(nodes)
    return il.new(None, handle).score(CycleState(), incoming, infos[target])


SCORE_CASES = [
    # (id, pod, {node: images}, scored node, expected)
    # on every node: full size 500 MiB -> 100 * (500 - 23) / (1000 - 23) = 48
    ("everywhere", pod("app:1"), {"a": {"app:1": 500 * MB}, "b": {"app:1": 500 * MB}}, "a", 48),
    # on 1 of 4 nodes: 400 MiB * 1/4 = 100 MiB -> 100 * 77 / 977 = 7
    ("spread scaling", pod("app:1"), {"a": {"app:1": 400 * MB}, "b": {}, "c": {}, "d": {}}, "a", 7),
    ("missing image", pod("app:1"), {"a": {"other:1": 900 * MB}}, "a", 0),
    ("below the minimum", pod("app:1"), {"a": {"app:1": 20 * MB}}, "a", 0),
    ("capped at the maximum", pod("app:1"), {"a": {"app:1": 3000 * MB}}, "a", 100),
    # two containers: maximum 2000 MiB -> 100 * (1200 - 23) / (2000 - 23) = 59
    ("two containers", pod("app:1", "side:1"), {"a": {"app:1": 1000 * MB, "side:1": 200 * MB}}, "a", 59),
    # init containers add to the sum and to the maximum, as containers do
    ("init container", pod("app:1", init=("init:1",)), {"a": {"init:1": 1200 * MB}}, "a", 59),
    # image volumes add to the sum but not to the maximum: 100 * (800 - 23) / 977 = 79
    ("image volume", pod("app:1", volumes=("data:1",)), {"a": {"data:1": 800 * MB}}, "a", 79),
    # an image used twice counts twice
    ("repeated image", pod("app:1", "app:1"), {"a": {"app:1": 600 * MB}}, "a", 59),
    # names without a tag are looked up as :latest (a registry port is not a tag)
    ("untagged", pod("nginx"), {"a": {"nginx:latest": 500 * MB}}, "a", 48),
    ("registry port", pod("reg:5000/app"), {"a": {"reg:5000/app:latest": 500 * MB}}, "a", 48),
    ("digest", pod("app@sha256:ab"), {"a": {"app@sha256:ab": 500 * MB}}, "a", 48),
    ("tag kept", pod("nginx:1.27"), {"a": {"nginx:latest": 500 * MB}}, "a", 0),
]


@pytest.mark.parametrize(
    ("incoming", "nodes", "target", "expected"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES]
)
def test_score(incoming: PodInfo, nodes: dict[str, dict[str, int]], target: str, expected: int) -> None:
    assert score(incoming, nodes, target) == expected


def test_scaled_image_score_truncates() -> None:
    state = ImageState(1000)
    state.nodes.update({"a", "b"})
    assert il.scaled_image_score(state, 3) == 666


def test_no_filter_and_no_normalize() -> None:
    plugin = il.new(None, None)
    assert plugin.name == "ImageLocality"
    assert not hasattr(plugin, "filter") and not hasattr(plugin, "normalize_score")


# -- golden cases ---------------------------------------------------------------------------------


def golden_cases() -> list[str]:
    if not GOLDEN.is_dir():
        return []
    return sorted(p.name.removesuffix(".input.yaml") for p in GOLDEN.glob("scores-image-locality-*.input.yaml"))


@pytest.mark.skipif(not GOLDEN.is_dir(), reason="golden corpus not available")
@pytest.mark.parametrize("case", golden_cases())
def test_golden(case: str) -> None:
    """The recorded raw ImageLocality score of every scored node."""
    data = yaml.safe_load((GOLDEN / f"{case}.input.yaml").read_text())
    expected = json.loads((GOLDEN / f"{case}.expected.json").read_text())
    images = {
        n["name"]: {name: image["sizeBytes"] for image in n.get("images") or [] for name in image["names"]}
        for n in data["nodes"]
    }
    infos, handle = cluster(images)
    spec = data["pod"].get("spec") or {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
    incoming = PodInfo(msgspec.convert({"metadata": {"name": data["pod"]["name"]}, "spec": spec}, core_v1.Pod))
    plugin = il.new(None, handle)
    checked = 0
    for entry in expected["nodes"]:
        if il.NAME in entry.get("scores", {}):
            assert plugin.score(CycleState(), incoming, infos[entry["name"]]) == entry["scores"][il.NAME]["raw"]
            checked += 1
    assert checked == len(data["nodes"])


def test_golden_selection_is_not_empty() -> None:
    if GOLDEN.is_dir():
        assert len(golden_cases()) >= 3
