"""Scenarios with assertions: the example suite passes, a failing step is named with why, a file
that cannot run is one line naming the field, and each condition says what is so instead."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml
from lightkube.models import core_v1 as m

from builders import make_node, make_pod
from kubesched.cli.main import main
from kubesched.clock import VirtualClock
from kubesched.storage import MemoryStore
from kubesched.whatif.scenario import load
from kubesched.whatif.scenario.conditions import World, read_condition

EXAMPLES = Path(__file__).parents[3] / "examples" / "scenarios"
SUITE = sorted(EXAMPLES.glob("*.yaml"))

DEFAULT_CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def junit(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


def test_the_example_suite_has_at_least_eight_scenarios():
    assert len(SUITE) >= 8


@pytest.mark.parametrize("path", SUITE, ids=[p.stem for p in SUITE])
def test_each_example_scenario_passes(path, tmp_path, capsys):
    report = tmp_path / "junit.xml"
    assert main(["scenario", "run", str(path), "--junit", str(report)]) == 0
    out = capsys.readouterr().out
    assert "1 of 1 scenario runs passed" in out
    suites = junit(report)
    steps = len(load(path).steps)
    assert (suites.get("tests"), suites.get("failures"), suites.get("errors")) == (str(steps), "0", "0")
    assert len(suites.findall("testsuite/testcase")) == steps


def test_a_failing_assertion_names_the_step_and_exits_1(tmp_path, capsys):
    config = tmp_path / "default.yaml"
    config.write_text(DEFAULT_CONFIG)
    report = tmp_path / "junit.xml"
    scenario = EXAMPLES / "bin-packing.yaml"
    assert main(["scenario", "run", str(scenario), "--config", str(config), "--junit", str(report)]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        "FAIL step 2 (assert pod default/first bound to small-0 within 2s) at 2.000s: "
        "not within 2s: pod default/first is bound to big-0, not small-0"
    )
    assert "0 of 1 scenario runs passed" in captured.out
    suite = junit(report).find("testsuite")
    assert suite is not None
    assert (suite.get("failures"), suite.get("skipped"), suite.get("tests")) == ("1", "4", "6")
    cases = suite.findall("testcase")
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == "not within 2s: pod default/first is bound to big-0, not small-0"
    assert all(c.find("skipped") is not None for c in cases[2:])


def test_each_config_runs_every_scenario_once(tmp_path, capsys):
    default = tmp_path / "default.yaml"
    default.write_text(DEFAULT_CONFIG)
    packing = yaml.safe_load((EXAMPLES / "bin-packing.yaml").read_text())["scheduler"]["config"]
    most = tmp_path / "most.yaml"
    most.write_text(yaml.safe_dump(packing))
    scenario = str(EXAMPLES / "bin-packing.yaml")
    code = main(["scenario", "run", scenario, "--config", str(default), "--config", str(most), "--output", "json"])
    assert code == 1
    body = json.loads(capsys.readouterr().out)
    outcomes = {r["config"]: (r["passed"], [s["outcome"] for s in r["steps"]][:3]) for r in body["runs"]}
    assert outcomes == {
        str(default): (False, ["passed", "failed", "skipped"]),
        str(most): (True, ["passed", "passed", "passed"]),
    }
    assert body["passed"] is False


def test_steps_run_at_their_virtual_times(capsys):
    assert main(["scenario", "run", str(EXAMPLES / "room-freed.yaml"), "--output", "json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    started = {s["step"]: s["started"] for s in run["steps"]}
    assert started[5] == 60.0  # `at: 60s`
    assert started[6] == 60.0  # the delete right after it
    assert 60.0 < run["steps"][6]["ended"] < 61.0  # bound within the second, not at the 5-minute flush


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]},
}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"steps": [{"create": POD}], "nodez": []}, "the scenario: unknown field 'nodez' (known: cluster, "),
        ({"cluster": {}}, "steps: a scenario needs steps"),
        ({"steps": []}, "steps: a scenario needs at least one step"),
        ({"steps": [{"create": POD, "delete": {"kind": "Pod", "name": "p"}}]}, "steps[0]: 2 actions (create, delete)"),
        ({"steps": [{"at": "5s"}]}, "steps[0]: no action; a step does one of create, addNodes, patch, delete"),
        ({"steps": [{"assert": {"podbound": "p"}}]}, "steps[0].assert: no condition; give one of podBound,"),
        ({"steps": [{"assert": {"podBound": "p"}, "within": "5 s"}]}, 'steps[0].within: time: invalid duration "5 s"'),
        ({"steps": [{"wait": {"podBound": "p"}, "within": "5s"}]}, "steps[0].within: belongs with assert, not wait"),
        ({"steps": [{"create": POD, "at": 1, "after": 2}]}, "steps[0]: give at or after, not both"),
        ({"steps": [{"assert": {"pods": "sleeping", "equals": 1}}]}, "steps[0].assert.pods: 'sleeping' is not a pod"),
        ({"steps": [{"assert": {"pods": "bound"}}]}, "steps[0].assert: needs one of atLeast, atMost, equals"),
        (
            {"steps": [{"assert": {"pods": "bound", "labels": {"tier": 1}, "equals": 1}}]},
            "steps[0].assert.labels.tier: a label value is a string; quote it (1)",
        ),
        ({"steps": [{"create": {"kind": "Pod", "metadata": {"name": "p"}}}]}, "steps[0].create.apiVersion: expected"),
        ({"steps": [{"patch": {"kind": "Pod", "name": "p"}}]}, "steps[0].patch.patch: the patch to apply is missing"),
        (
            {"steps": [{"patch": {"kind": "Pod", "name": "p", "type": "apply", "patch": {}}}]},
            "steps[0].patch.type: 'apply' is not a patch type (known: merge, strategic, json)",
        ),
        ({"steps": [{"create": POD, "copies": 0}]}, "steps[0].copies: must be at least 1, got 0"),
        (
            {"cluster": {"nodes": [{"count": 1}, {"count": 2}]}, "steps": [{"create": POD}]},
            "cluster.nodes: each group needs a name of its own",
        ),
        (
            {"cluster": {"nodes": [{"capacity": {"cpu": True}}]}, "steps": [{"create": POD}]},
            "cluster.nodes[0].capacity.cpu: expected a quantity such as 4 or 16Gi, got True",
        ),
        ({"scheduler": {"plugins": ["nocolon"]}, "steps": [{"create": POD}]}, "scheduler.plugins[0]: expected module"),
        ({"scheduler": {"config": "absent.yaml"}, "steps": [{"create": POD}]}, "absent.yaml: No such file"),
        ({"cluster": {"controllers": "deployment,cron"}, "steps": [{"create": POD}]}, "cluster.controllers: unknown"),
        (
            {"cluster": {"objects": [{"apiVersion": "v9", "kind": "Gizmo", "metadata": {"name": "g"}}]}, "steps": []},
            "steps: a scenario needs at least one step",
        ),
        (
            {
                "cluster": {"objects": [{"apiVersion": "v9", "kind": "Gizmo", "metadata": {"name": "g"}}]},
                "steps": [{"create": POD}],
            },
            "cluster.objects[0]: v9 Gizmo is not a kind the cluster serves",
        ),
    ],
)
def test_a_file_that_cannot_run_is_one_line_naming_the_field(document, message, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(document))
    assert main(["scenario", "run", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"{path}: ") or captured.err.startswith(str(tmp_path))
    assert message in captured.err


def test_a_step_the_api_refuses_is_an_error_and_ends_the_run(tmp_path, capsys):
    path = tmp_path / "refused.yaml"
    steps = [
        {"patch": {"kind": "Pod", "name": "ghost", "patch": {"metadata": {"labels": {"a": "b"}}}}},
        {"create": POD},
    ]
    path.write_text(yaml.safe_dump({"steps": steps}))
    assert main(["scenario", "run", str(path), "--output", "json"]) == 1
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert [(s["outcome"], s["message"]) for s in run["steps"]] == [
        ("error", 'pods "ghost" not found'),
        ("skipped", ""),
    ]


def world(*objs) -> World:
    store = MemoryStore(clock=VirtualClock())
    for obj in objs:
        store.restore(getattr(obj, "obj", obj))  # as they are, status and all
    return World(store, preempted={"default/low": 10, "default/mid": 500})


def waiting(pod, reason: str, message: str):
    pod.obj.status = m.PodStatus(
        phase="Pending",
        conditions=[m.PodCondition(type="PodScheduled", status="False", reason=reason, message=message)],
    )
    return pod


CLUSTER = (
    make_node("a").labels(zone="z1"),
    make_node("b").labels(zone="z2"),
    make_pod("on-a").labels(app="web").node("a"),
    make_pod("on-a-too").labels(app="web").node("a"),
    waiting(make_pod("stuck").labels(app="web"), "Unschedulable", "0/2 nodes are available: 2 Insufficient cpu."),
)


@pytest.mark.parametrize(
    ("condition", "why"),
    [
        ({"podBound": "on-a"}, None),
        ({"podBound": "on-a", "node": "b"}, "pod default/on-a is bound to a, not b"),
        (
            {"podBound": "on-a", "nodeLabels": {"zone": "z2"}},
            "pod default/on-a is bound to a, which has zone=z1, not zone=z2",
        ),
        (
            {"podBound": "on-a", "nodeLabels": {"rack": "r1"}},
            "pod default/on-a is bound to a, which has no label rack, not rack=r1",
        ),
        (
            {"podBound": "stuck"},
            "pod default/stuck is not bound (Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.)",
        ),
        ({"podBound": "other/stuck"}, "pod other/stuck does not exist"),
        ({"podPending": "stuck", "reason": "Unschedulable", "contains": "Insufficient cpu"}, None),
        (
            {"podPending": "stuck", "reason": "SchedulingGated"},
            "pod default/stuck is pending as Unschedulable, not SchedulingGated "
            "(0/2 nodes are available: 2 Insufficient cpu.)",
        ),
        ({"podPending": "on-a"}, "pod default/on-a is bound to a"),
        ({"podRunning": "on-a"}, "pod default/on-a has no phase"),
        ({"podGone": "on-a"}, "pod default/on-a is still there on a"),
        ({"podGone": "never-made"}, None),
        ({"pods": "bound", "labels": {"app": "web"}, "equals": 2}, None),
        ({"pods": "unschedulable", "atMost": 0}, "1 unschedulable pods (default/stuck), expected <= 0"),
        ({"pods": "bound", "nodeLabels": {"zone": "z2"}, "atLeast": 1}, "0 bound pods, expected >= 1"),
        (
            {"pods": "all", "atLeast": 1, "atMost": 2},
            "3 all pods (default/on-a, default/on-a-too, default/stuck), expected >= 1 and <= 2",
        ),
        ({"spread": {"app": "web"}, "topologyKey": "zone", "maxSkew": 2}, None),
        (
            {"spread": {"app": "web"}, "topologyKey": "zone", "maxSkew": 1},
            "skew 2 over zone (z1: 2, z2: 0), expected <= 1",
        ),
        ({"spread": {"app": "web"}, "topologyKey": "rack", "maxSkew": 1}, "no node has the label rack"),
        ({"preemptions": {"atMost": 2}}, None),
        (
            {"preemptions": {"minPriority": 100, "equals": 0}},
            "1 preemption victims: default/mid (priority 500), expected = 0",
        ),
        ({"event": "Preempted"}, "0 Preempted events, expected >= 1"),
    ],
)
def test_each_condition_says_what_is_so_instead(condition, why):
    assert read_condition(condition, "assert").check(world(*CLUSTER)) == why
