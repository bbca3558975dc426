"""Scenario runs as JUnit XML, the report CI systems read: a testsuite per run (a scenario under
one configuration), a testcase per step, a failing step's message in its <failure> (or <error>,
for a step the API refused). Times are real seconds; each step's virtual times are its system-out."""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree as ET

from kubesched.whatif.scenario.runner import ERROR, FAILED, SKIPPED, ScenarioRun


def junit_xml(runs: Sequence[ScenarioRun]) -> bytes:
    suites = ET.Element("testsuites", name="kubesched scenario run")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    wall = 0.0
    for run in runs:
        counts = {
            "tests": len(run.steps),
            "failures": run.count(FAILED),
            "errors": run.count(ERROR),
            "skipped": run.count(SKIPPED),
        }
        attributes = {"name": f"{run.scenario.name} [{run.config}]", "file": str(run.scenario.path)}
        attributes |= {k: str(v) for k, v in counts.items()} | {"time": f"{run.wall:.3f}"}
        suite = ET.SubElement(suites, "testsuite", attributes)
        for result in run.steps:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=run.scenario.name,
                name=result.step.title,
                file=str(run.scenario.path),
                time=f"{result.wall:.3f}",
            )
            if result.outcome in (FAILED, ERROR):
                tag = "failure" if result.outcome == FAILED else "error"
                ET.SubElement(case, tag, message=result.message).text = result.message
            elif result.outcome == SKIPPED:
                ET.SubElement(case, "skipped", message="an earlier step failed")
            if result.outcome != SKIPPED:
                out = ET.SubElement(case, "system-out")
                out.text = f"virtual time {result.started:.3f}s to {result.ended:.3f}s"
        for key, value in counts.items():
            totals[key] += value
        wall += run.wall
    for key, value in totals.items():
        suites.set(key, str(value))
    suites.set("time", f"{wall:.3f}")
    ET.indent(suites)
    written: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
    return written + b"\n"
