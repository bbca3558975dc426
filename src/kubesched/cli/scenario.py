"""`kubesched scenario run`: scenario files run on virtual time, each under its own scheduler
configuration or under each `--config`, reported step by step, as JSON, and as JUnit XML."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from kubesched.cli.commands import Subparsers
from kubesched.console import options
from kubesched.whatif.scenario import ScenarioError, ScenarioRun, load, run, scheduler_setup
from kubesched.whatif.scenario.junit import junit_xml
from kubesched.whatif.scenario.runner import PASSED, SKIPPED

_MARKS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    scenario = sub.add_parser(name, help=help)
    scenario.set_defaults(run=scenario_command)
    scenario_sub = scenario.add_subparsers(dest="scenario_command", required=True)
    runs = scenario_sub.add_parser(
        "run",
        help="run scenario files: a cluster, a scheduler, steps at virtual times, waits and assertions",
        description="Each scenario starts a cluster of its own in memory (fake nodes and kubelets, the built-in "
        "controllers) with kubesched's scheduler over it, then runs its steps at their virtual times: create, "
        "patch and delete objects, wait for conditions, assert them. The first failing step ends a scenario. "
        "Exit status: 0 when every step of every run passed, 1 when one failed, 2 for a file that cannot run.",
    )
    runs.add_argument("files", nargs="+", metavar="FILE", help="scenario files (YAML)")
    runs.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="run every scenario under this KubeSchedulerConfiguration instead of its own (repeatable: once each)",
    )
    runs.add_argument("--junit", metavar="FILE", help="also write the runs as JUnit XML, for CI systems")
    options.add_output_option(runs, "each run's steps, outcomes and virtual times")
    options.add_plugin_option(runs)


def scenario_command(console: Console, args: argparse.Namespace) -> int:
    try:
        scenarios = [load(f) for f in args.files]
        plans = [
            (s, label, *scheduler_setup(s, config=config, plugins=args.plugin))
            for s in scenarios
            for config, label in ([(c, c) for c in args.config] or [(None, "")])
        ]
    except ScenarioError as e:
        options.print_error(console, str(e))
        return 2
    runs: list[ScenarioRun] = []
    for scenario, label, config, registry in plans:
        try:
            done = run(scenario, config=config, registry=registry, label=label)
        except ScenarioError as e:
            options.print_error(console, str(e))
            return 2
        runs.append(done)
        if args.output != "json":
            _print(console, done)
    if args.junit:
        try:
            Path(args.junit).write_bytes(junit_xml(runs))
        except OSError as e:
            options.print_error(console, f"--junit: {args.junit}: {e.strerror or e}")
            return 2
    if args.output == "json":
        json.dump({"runs": [r.to_json() for r in runs], "passed": all(r.passed for r in runs)}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        failed = [r for r in runs if not r.passed]
        summary = f"{len(runs) - len(failed)} of {len(runs)} scenario runs passed"
        console.print(summary, style="red" if failed else "green", highlight=False)
    return 0 if all(r.passed for r in runs) else 1


def _print(console: Console, done: ScenarioRun) -> None:
    scenario = done.scenario
    console.print(f"scenario {scenario.name} ({scenario.path}, config: {done.config})", highlight=False, soft_wrap=True)
    for result in done.steps:
        if result.outcome == SKIPPED:
            line = f"  SKIP            {result.step.title}"
        else:
            line = f"  {_MARKS[result.outcome]:<5} {result.started:8.3f}s  {result.step.title}"
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    failure = done.failure
    if failure is not None:
        word = "FAIL" if failure.outcome == "failed" else "ERROR"
        message = f"{word} {failure.step.title} at {failure.ended:.3f}s: {failure.message}"
        console.file.flush()
        options.print_error(console, message)
    passed = done.count(PASSED)
    console.print(
        f"  {passed} of {len(done.steps)} steps passed in {done.wall:.2f}s ({done.steps[-1].ended:.3f}s virtual)",
        highlight=False,
    )
