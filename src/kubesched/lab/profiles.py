"""Plugins and profiles of your own.

5.1.5 — a Filter plugin is two methods and a string: the smallest plugin, written to a file and
loaded from it (`--plugin path/to/nosundays.py:spec`), keeps pods off the nodes it rejects.
5.5.7 — one process, two scheduler names: two profiles in one scheduler share its queue and cache,
and each pod is scheduled by the profile its `schedulerName` names."""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from kubesched.lab.harness import NODE, LabCluster, lab_cluster
from kubesched.lab.result import Check, LabResult, site_of
from kubesched.scheduler.discovery import from_module
from kubesched.sim import make_nodes
from kubesched.trace import extension_point
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

FILTER_ID, FILTER_TITLE = "5.1.5", "A Filter plugin is two methods and a string"
PROFILES_ID, PROFILES_TITLE = "5.5.7", "Stage 2, shape two: one process, two scheduler names"
# The plugin of docs/plugins.md, as a learner writes it in a file of their own.
NOSUNDAYS = """\
from typing import ClassVar

from kubesched.plugin import CycleState, FilterPlugin, NodeInfo, PluginSpec, PodInfo, Status


class NoSundays(FilterPlugin):
    name: ClassVar[str] = "NoSundays"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if (node.node.metadata.labels or {}).get("day") == "sunday":
            return Status.unresolvable("node(s) rest on Sundays")
        return None


def new(args, handle):
    return NoSundays()


spec = PluginSpec(new, name="NoSundays")
"""


def _placed(lab: LabCluster, names: list[str]) -> dict[str, str | None]:
    return {name: lab.node_of(name) for name in names}


def _spread_pods(lab: LabCluster, names: list[str], **spec: Any) -> None:  # Any: make_pod's spec fields
    async def body() -> None:
        await lab.clock.sleep(0.5)
        for name in names:
            await lab.cluster.create(make_pod(name, {"cpu": "500m"}, **spec))
            await lab.clock.sleep(0.1)
        await lab.clock.sleep(5.0)

    lab.run(body)


def run_filter(*, seed: int = 1, enabled: bool = True) -> LabResult:
    """Three nodes, node-1 labelled day=sunday; six pods, once without the plugin and once with
    NoSundays enabled at Filter (loaded from a file). With `enabled` False the second profile does
    not enable it, which makes the claim false."""
    names = [f"pod-{i}" for i in range(6)]
    nodes = [replace(NODE, labels={"day": "sunday"} if i == 1 else {}).make(f"node-{i}", i) for i in range(3)]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "nosundays.py"
        path.write_text(NOSUNDAYS)
        module = f"{path}:spec"
        plugins = {"filter": {"enabled": [{"name": "NoSundays"}]}} if enabled else {}
        runs = {}
        for label, profile in (("without", {}), ("with", plugins)):
            lab = lab_cluster(
                seed=seed,
                nodes=nodes,
                modules=[module],
                profiles=[{"schedulerName": "default-scheduler", "plugins": profile}],
            )
            _spread_pods(lab, names)
            runs[label] = (lab, Counter(n for n in _placed(lab, names).values()))
    lab, placed = runs["with"]
    steps = [
        Step(
            0.0,
            f"loaded NoSundays from {path.name} (--plugin {path.name}:spec)",
            site_of(from_module),
            (extension_point("filter"),),
        ),
        Step(
            0.0,
            f"without the plugin: pods per node {dict(sorted(runs['without'][1].items()))}",
            "",
            (extension_point("filter"),),
        ),
        Step(
            0.0,
            f"with NoSundays at Filter: pods per node {dict(sorted(placed.items()))}",
            "",
            (extension_point("filter"),),
        ),
        *lab.told(names[0], kinds=("cycle.filtered", "cycle.selected")),
    ]
    check = Check(
        claim="with the plugin loaded from a file and enabled at Filter no pod lands on the Sunday node; without it "
        "some do",
        evidence={"without": dict(runs["without"][1]), "with": dict(placed)},
        passed=runs["without"][1].get("node-1", 0) > 0
        and placed.get("node-1", 0) == 0
        and sum(placed.values()) == len(names),
    )
    return LabResult(FILTER_ID, FILTER_TITLE, steps, check)


def run_profiles(*, seed: int = 1, packer: str = "MostAllocated") -> LabResult:
    """Four nodes; one scheduler with two profiles: `default-scheduler` (LeastAllocated) and
    `packer` (NodeResourcesFit scoring with `packer`'s strategy). Four pods for each, created in
    turn. The default's pods spread, the packer's share a node. With `packer` LeastAllocated the
    packer spreads too, which makes the claim false."""
    fit = {"scoringStrategy": {"type": packer, "resources": [{"name": "cpu", "weight": 1}]}}
    profiles = [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "packer", "pluginConfig": [{"name": "NodeResourcesFit", "args": fit}]},
    ]
    lab = lab_cluster(seed=seed, nodes=make_nodes(4, NODE), profiles=profiles)
    names = {"default-scheduler": [f"spread-{i}" for i in range(4)], "packer": [f"packed-{i}" for i in range(4)]}

    async def body() -> None:
        await lab.clock.sleep(0.5)
        for i in range(4):
            for scheduler, pods in names.items():
                await lab.cluster.create(make_pod(pods[i], {"cpu": "500m"}, schedulerName=scheduler))
                await lab.clock.sleep(0.1)
        await lab.clock.sleep(5.0)

    lab.run(body)
    by_profile = {r.pod: r.details["profile"] for r in lab.records("cycle.start")}
    nodes = {scheduler: sorted({lab.node_of(p) or "" for p in pods}) for scheduler, pods in names.items()}
    right_profile = all(by_profile.get(f"default/{p}") == s for s, pods in names.items() for p in pods)
    told = lab.told(*names["default-scheduler"][:2], *names["packer"][:2], kinds=("cycle.start", "cycle.selected"))
    check = Check(
        claim="each pod is scheduled by the profile its schedulerName names, in one process with one queue and one "
        "cache: the default profile's pods spread over the nodes, the MostAllocated profile's share one",
        evidence={"nodes": nodes, "eachByItsProfile": right_profile},
        passed=right_profile and len(nodes["default-scheduler"]) >= 3 and len(nodes["packer"]) == 1,
    )
    return LabResult(PROFILES_ID, PROFILES_TITLE, told, check)
