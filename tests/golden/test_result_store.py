"""The result store's record of a live scheduling cycle against what `kubesched golden` computes
for the same case: the same verdicts, per-plugin scores, host or tie set, and victims by two routes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kubesched.golden.loader import case_names
from kubesched.golden.runner import TABLE_PREFIX, live_record, run_case
from kubesched.plugins.registry import in_tree_registry

HERE = Path(__file__).parent
CORPUS = Path(os.environ.get("KUBESCHED_GOLDEN_DIR", HERE / "corpus"))
CASES = [n for n in case_names(CORPUS) if not n.startswith(TABLE_PREFIX)]


@pytest.mark.parametrize("name", CASES)
def test_the_live_record_says_what_golden_computes(name):
    registry = in_tree_registry()
    expected = run_case(CORPUS, name, registry)
    record = live_record(CORPUS, name, registry)
    assert record is not None
    nodes = {n["name"]: n for n in expected["nodes"]}
    # every node the live search ruled out carries the verdict golden's probe found for it
    for group in record.to_json()["filter"]:
        for node in group.get("nodes", ()):
            verdict = nodes[node]["filter"]
            assert (group["plugin"], group["reasons"]) == (verdict.get("plugin", ""), verdict.get("reasons", []))
    if expected.get("schedulable"):
        assert record.result == "scheduled" and sorted(record.top) == expected["topNodes"]
        assert record.selected in expected["topNodes"]
        for scored in record.to_json().get("scores", ()):
            assert scored["plugins"] == nodes[scored["node"]]["scores"]
            assert scored["total"] == nodes[scored["node"]]["totalScore"]
        assert record.evaluated == expected["evaluatedNodes"] and record.feasible == expected["feasibleNodes"]
    else:
        assert record.message == expected.get("message")
        victims = expected.get("preemption", {}).get("victims")
        assert (sorted(record.preemption.victims) if record.preemption else None) == victims
