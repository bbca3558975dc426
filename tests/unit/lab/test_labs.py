"""`kubesched lab`: the book of 37 labs, and each lab kubesched runs ends with a check that holds as
it is and fails when its claim is made false."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from kubesched.cli.lab import SKIPPED
from kubesched.cli.main import main
from kubesched.lab import (
    archaeology,
    artifact,
    cycles,
    distributions,
    drills,
    floor,
    gates,
    insufficient,
    late_failure,
    measured,
    owned,
    plugin_set,
    points,
    preemption,
    profiles,
    queue_moves,
    refusals,
    revert,
    shared_state,
    stale_cache,
    state_machine,
    tour,
    victim_deletion,
)
from kubesched.lab.book import BOOK
from kubesched.lab.references import DOCUMENTS, UPSTREAM, references_markdown
from kubesched.queue.machine import MACHINE
from kubesched.trace.upstream import SITES, is_ours_only

ROOT = Path(__file__).resolve().parents[3]

CHECKED = {
    "5.1.1": tour.run_tour,
    "5.1.2": points.run,
    "5.1.3": cycles.run_cycles,
    "5.1.5": profiles.run_filter,
    "5.5.7": profiles.run_profiles,
    "5.3.3": shared_state.run,
    "5.5.5": late_failure.run,
    "5.6.5": measured.run,
    "5.4.1": archaeology.run,
    "5.6.2": distributions.run,
    "5.2.4": drills.run_race,
    "5.3.2": cycles.run_while_bound,
    "5.4.5": drills.run_backlog,
    "5.5.1": preemption.run_claim,
    "5.5.2": preemption.run_budget,
    "5.6.3": drills.run_victim,
    "5.6.4": drills.run_spread,
    "5.1.4": plugin_set.run,
    "5.1.6": refusals.run,
    "5.2.1": stale_cache.run_memory,
    "5.2.3": artifact.run,
    "5.2.5": stale_cache.run,
    "5.3.1": tour.run_detail,
    "5.3.4": insufficient.run,
    "5.3.5": floor.run_below_floor,
    "5.3.6": floor.run_above_floor,
    "5.4.3": queue_moves.run_path,
    "5.4.4": queue_moves.run_backoff,
    "5.4.6": queue_moves.run_retries,
    "5.4.7": gates.run,
    "5.5.4": owned.run,
    "5.6.1": revert.run,
    "5.5.3": victim_deletion.run,
    "5.4.2": state_machine.run,
}


def test_the_book_holds_the_curriculums_37_labs_in_its_six_modules():
    ids = [lab.id for lab in BOOK]
    assert len(ids) == len(set(ids)) == 37
    per_module = {
        m: sum(1 for i in ids if i.rsplit(".", 1)[0] == m) for m in ("5.1", "5.2", "5.3", "5.4", "5.5", "5.6")
    }
    assert per_module == {"5.1": 6, "5.2": 5, "5.3": 6, "5.4": 7, "5.5": 8, "5.6": 5}
    assert {lab.id: lab.command for lab in BOOK if lab.command} == {
        "5.2.4": "kubesched drill c4",
        "5.4.5": "kubesched drill c1",
        "5.6.3": "kubesched drill c2",
        "5.6.4": "kubesched drill c3",
        "5.6.5": "kubesched capstone",
    }
    assert {lab.id for lab in BOOK if lab.runnable and not lab.live} == set(CHECKED)


@pytest.mark.parametrize(
    ("lab_id", "falsified"),
    [
        ("5.1.1", {"nodes": 1}),  # one feasible node: nothing is scored
        ("5.1.1", {"refuse_once": True}),  # the first binding fails: the pod goes round twice
        # the common misreading: a rejection at PreScore waits in unschedulablePods like one at Filter
        ("5.1.2", {"answers": {("PreScore", "Unschedulable"): ("unschedulablePods", False)}}),
        # the same misreading as a reading of the source: a line RunPreScorePlugins does not have
        (
            "5.1.2",
            {
                "failures": tuple(
                    replace(f, line=replace(f.line, text="diagnosis.AddPluginStatus(s)"), names_rejector=True)
                    if (f.point, f.code) == ("PreScore", "Unschedulable")
                    else f
                    for f in points.FAILURES
                )
            },
        ),
        ("5.1.3", {"slow": False}),  # bindings end as they begin: none overlap
        ("5.1.3", {"retell": cycles.as_two_workers_would_tell}),  # two cycles interleaved, as two workers would
        ("5.1.5", {"enabled": False}),  # the plugin loaded but not enabled: the Sunday node gets pods
        ("5.5.7", {"packer": "LeastAllocated"}),  # the second profile spreads too
        ("5.5.5", {"late": "Filter"}),  # the same refusal twice: the same cost
        ("5.3.3", {"slow": False}),  # no binding cycle still open: the package variable happens to be right
        ("5.4.1", {"layout": archaeology.as_articles_cite}),  # the layout articles cite: internal/queue/
        ("5.4.1", {"layout": archaeology.renamed_file}),  # a queue file v1.36.2 does not have
        ("5.6.5", {"retell": lambda moments: moments[::-1]}),  # the story told backwards: bound before pending
        ("5.6.5", {"retell": lambda moments: moments[1:]}),  # the pod never seen entering unschedulablePods
        ("5.6.2", {"second": "LeastAllocated"}),  # the same distribution twice
        ("5.2.4", {"links": (0.0, 0.0)}),  # instant links: the from-scratch scheduler wins every race
        ("5.3.2", {"slow": False}),  # a is bound before b's cycle begins
        ("5.4.5", {"horizon": 200.0}),  # ended before the five-minute flush
        ("5.4.5", {"deaf": ("NodeAffinity",)}),  # no hint for node-5's arrival: the nvme pods wait for the flush
        ("5.4.5", {"deaf": ("NodeAffinity", "TaintToleration")}),  # the infra pods too
        ("5.4.5", {"reword": lambda m: m.replace("had untolerated taint(s)", "were unavailable")}),  # a reason lost
        ("5.5.1", {"spare_node": True}),  # room on a fourth node: bound at once, nothing nominated
        ("5.5.2", {"pdb_blocks": False}),  # a candidate without violations exists and is chosen
        ("5.6.3", {"pdb_blocks": True}),  # the victim is node-2's cache pod
        ("5.6.4", {"taints_policy": "Honor"}),  # the tainted zone leaves the skew: all replicas schedule
        ("5.2.1", {"interval": 2.0}),  # the watch catches up between pods: nothing overcommitted
        ("5.2.3", {"module": "kubesched.scheduler.scheduler"}),  # the framework scheduler is no artifact 1
        ("5.3.1", {"strategy": "MostAllocated"}),  # the fullest node wins instead
        ("5.3.1", {"weighted": False}),  # the misreading that weights do not count
        ("5.3.4", {"resource": "memory"}),  # the messages name memory
        ("5.4.3", {"free_at": 5.0}),  # freed after the backoff: straight to activeQ
        ("5.4.4", {"initial": 2}),  # gaps of 2, 4, 8... s, not 1, 2, 4
        ("5.4.6", {"taint": True}),  # a taint change retries it too (no hint function for it)
        (  # a profile without ImageLocality's score
            "5.1.4",
            {"profiles": [{"schedulerName": "x", "plugins": {"score": {"disabled": [{"name": "ImageLocality"}]}}}]},
        ),
        (  # a restatement of the defaults with a wrong weight: its line is in no function of the source
            "5.1.4",
            {
                "restated": tuple(
                    replace(d, weight=1) if d.name == "TaintToleration" else d for d in plugin_set.UPSTREAM
                )
            },
        ),
        ("5.1.6", {"node_cpu": "16"}),  # the big pod fits: one refusal fewer
        ("5.2.5", {"interval": 2.0}),  # one pod every 2 s: the watch catches up between them
        ("5.3.5", {"nodes": 150}),  # above the floor the knob moves
        ("5.3.6", {"sizes": (50,)}),  # below the floor every node is evaluated, not 100
        ("5.3.6", {"empty": 5}),  # room on five nodes only: a sample of a tenth of the cluster misses them
        ("5.4.7", {"gated": False}),  # no gate: the pod is attempted at once
        ("5.5.4", {"mode": "Most"}),  # the plugin prefers the largest nodes, as the default's scores do
        ("5.6.1", {"revert_to": "2560Mi"}),  # nothing shrinks: the late pod is bound, nobody is rejected
        ("5.5.3", {"latency": 0.0}),
        (
            "5.4.2",
            {"machine": tuple(t for t in MACHINE if t.trigger != "backoffCompleted")},
        ),  # a move left out  # the API answers at once: waiting for it costs the thread nothing
    ],
)
def test_a_labs_check_holds_and_fails_once_its_claim_is_made_false(lab_id, falsified):
    run = CHECKED[lab_id]
    held = run(seed=1)
    assert held.id == lab_id and held.check is not None and held.check.passed, held.check
    assert held.steps and all(s.upstream or is_ours_only(s.kind) for s in held.steps)  # steps cite upstream
    broken = run(seed=1, **falsified)
    assert broken.check is not None and not broken.check.passed


@pytest.mark.parametrize("lab_id", sorted(CHECKED))
def test_a_lab_cites_only_the_upstream_sites_the_book_gives_it(lab_id):
    printed = {u for step in CHECKED[lab_id](seed=1).steps for u in step.upstream}
    declared = {SITES[s].cite for s in UPSTREAM[lab_id]}
    assert printed and printed <= declared, sorted(printed - declared)


def test_the_lab_book_lists_each_labs_upstream_sites_and_design_documents():
    assert set(UPSTREAM) == set(DOCUMENTS) == {lab.id for lab in BOOK}
    text = (ROOT / "docs" / "labs.md").read_text()
    sections = dict(re.findall(r"(?ms)^### (5\.\d\.\d) (.*?)(?=^##)", text + "\n##"))
    assert set(sections) == {lab.id for lab in BOOK}
    missing = [lab_id for lab_id, body in sections.items() if references_markdown(lab_id) not in body]
    assert missing == [], references_markdown(missing[0])


def test_the_capstone_lab_fails_when_the_measured_profile_is_the_default(tmp_path):
    held = measured.run()
    assert held.check.passed and held.check.evidence["outOfTree"], held.check
    default = tmp_path / "default.yaml"
    default.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    broken = measured.run(config=default)
    assert not broken.check.passed and broken.check.evidence["outOfTree"] == []


def test_three_refusals_carry_upstreams_messages():
    evidence = refusals.run().check.evidence
    assert evidence["messages"]["intolerant"] == (
        "0/3 nodes are available: 3 node(s) had untolerated taint(s). no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"), [(50, 10, 50), (150, 0, 100), (5000, 0, 500), (5000, 20, 1000), (1000, 1, 100)]
)
def test_the_restated_formula_is_upstreams(nodes, percentage, expected):
    assert floor.upstream_count(nodes, percentage) == expected


def test_lab_run_json_is_the_same_for_the_same_seed(capsys):
    outputs = []
    for _ in range(2):
        assert main(["lab", "run", "5.4.7", "--output", "json"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["check"]["passed"] is True


@pytest.mark.parametrize("lab_id", sorted(CHECKED))
def test_every_lab_reports_the_same_for_the_same_seed(lab_id):
    first, second = (json.dumps(CHECKED[lab_id](seed=3).to_json(), sort_keys=True) for _ in range(2))
    assert first == second


def test_the_late_failure_lab_fails_on_cost_alone_when_both_refusals_cost_the_same():
    broken = late_failure.run(seed=1, late="Filter").check
    assert broken is not None and not broken.passed
    assert broken.evidence["factor"] == 1.0 and broken.evidence["holds"]["costs more"] is False


def test_the_archaeology_lab_reads_the_queue_files_from_upstreams_source():
    held = archaeology.run(seed=1).check
    assert held is not None and held.evidence["upstream files"] == [
        "active_queue.go",
        "backoff_queue.go",
        "nominator.go",
        "scheduling_queue.go",
        "testing.go",
        "unschedulable_pods.go",
    ]
    broken = archaeology.run(seed=1, layout=archaeology.renamed_file).check
    assert broken is not None and not broken.passed
    assert broken.evidence["not upstream's"] == ["S/backend/queue/unschedulable_entities.go:27-112"]


def test_lab_check_all_passes_says_what_it_skipped_and_exits_apart(capsys):
    assert main(["lab", "check", "--all"]) == SKIPPED  # every check held, but not every lab ran
    out = capsys.readouterr().out
    assert out.count("PASS") == len(CHECKED)
    assert out.count("SKIP") == 3
    assert "SKIP 5.5.8 Both artifacts, two replicas each, one lease: lab 5.5.8 runs against a live cluster" in out
    assert out.splitlines()[-1] == (
        f"{len(CHECKED)} passed, 0 failed, 3 skipped (5.2.2, 5.5.6, 5.5.8: they run against a live cluster; "
        "give --kubeconfig)"
    )
    assert main(["lab", "list", "--output", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 37


def test_require_all_makes_a_skipped_lab_a_failure(capsys):
    assert main(["lab", "check", "--all", "--require-all"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f"{len(CHECKED)} passed, 0 failed, 3 skipped (5.2.2, 5.5.6, 5.5.8")
    assert "--require-all counts them as failed" in last


def test_a_failed_check_fails_lab_check_all_and_is_named(capsys, monkeypatch):
    # the reading docs once gave: a rejection at PreBind waits in unschedulablePods
    misread = [replace(f, names_rejector=True) if f.point == "PreBind" else f for f in points.FAILURES]
    monkeypatch.setattr(points, "FAILURES", tuple(misread))
    assert main(["lab", "check", "--all"]) == 1
    out = capsys.readouterr().out
    assert "FAIL 5.1.2 The extension points" in out
    assert out.splitlines()[-1].startswith(f"{len(CHECKED) - 1} passed, 1 failed, 3 skipped")
    assert out.splitlines()[-1].endswith("; failed: 5.1.2")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["lab", "run", "9.9"], "lab: no lab '9.9' (see `kubesched lab list`)"),
        (
            ["lab", "run", "5.5.6"],
            "lab 5.5.6 runs against a live cluster deciding by RBAC (cluster up --authorization rbac): "
            "give --kubeconfig",
        ),
        (
            ["lab", "run", "5.2.2"],
            "lab 5.2.2 runs against a live cluster (cluster up): give --kubeconfig",
        ),
        (["lab", "check", "5.1.1", "--answer", "a.yaml"], "--answer: only lab 5.4.2 takes an answer file, not 5.1.1"),
        (["lab", "check", "--all", "--answer", "a.yaml"], "--answer: only lab 5.4.2 takes an answer file, not --all"),
        (
            ["lab", "run", "5.1.1", "--kubeconfig", "k"],
            "--kubeconfig: lab 5.1.1 runs on the memory cluster, not against one",
        ),
        (["lab", "check"], "lab check: give a lab's id or --all"),
        (["lab", "check", "5.1.6", "--all"], "lab check: give a lab's id or --all, not both"),
        (["lab", "check", "5.1.6", "--require-all"], "--require-all: only with --all"),
    ],
)
def test_a_lab_that_cannot_run_is_one_clear_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == message


@pytest.mark.parametrize(
    ("edit", "passed", "missing", "extra"),
    [
        (lambda ts: ts, True, [], []),  # the queue's machine, every transition
        (lambda ts: ts[1:], False, ["new activeQ add"], []),  # one left out
        (lambda ts: [*ts, {"from": "gated", "to": "inFlight", "trigger": "pop"}], False, [], ["gated inFlight pop"]),
    ],
)
def test_an_answer_file_is_compared_transition_by_transition(tmp_path, capsys, edit, passed, missing, extra):
    path = tmp_path / "queue.yaml"
    path.write_text(yaml.safe_dump({"transitions": edit(state_machine.machine_yaml()["transitions"])}))
    result = state_machine.run(answer=path)
    assert result.check.passed is passed
    assert (result.check.evidence["missing"], result.check.evidence["notInTheQueue"]) == (missing, extra)
    assert main(["lab", "check", "5.4.2", "--answer", str(path)]) == (0 if passed else 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("transitions: [{from: new, to: limbo, trigger: add}]", "transitions[0].to: unknown 'limbo' (one of new, "),
        ("transitions: [{from: new, to: activeQ}]", "Object missing required field `trigger`"),
        ("transitions: [", "not YAML"),
    ],
)
def test_a_bad_answer_file_is_one_line_naming_the_field(tmp_path, capsys, text, message):
    path = tmp_path / "queue.yaml"
    path.write_text(text)
    assert main(["lab", "check", "5.4.2", "--answer", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"--answer {path}: ") and message in err and "\n" not in err
