"""`kubesched golden DIR`: run every case in a directory and report pass/fail with the first difference."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kubesched.framework.registry import Registry
from kubesched.golden.loader import case_names, load_case
from kubesched.golden.runner import compare, run_case


@dataclass
class Outcome:
    name: str
    passed: bool
    differences: list[str]
    error: str = ""


def run_directory(directory: Path, registry: Registry, *, only: list[str] | None = None) -> list[Outcome]:
    outcomes = []
    for name in only or case_names(directory):
        try:
            actual = run_case(directory, name, registry)
            diffs = compare(load_case(directory, name).expected, actual)
            outcomes.append(Outcome(name, not diffs, diffs))
        except Exception as e:  # a case that crashes is a failing case, reported as such
            outcomes.append(Outcome(name, False, [f"{type(e).__name__}: {e}"], error=type(e).__name__))
    return outcomes


def report(console: Console, outcomes: list[Outcome], *, as_json: bool) -> None:
    if as_json:
        json.dump([o.__dict__ for o in outcomes], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    table = Table(title="Golden cases")
    table.add_column("case")
    table.add_column("result")
    table.add_column("first difference", overflow="fold")
    for o in outcomes:
        table.add_row(
            o.name, "[green]pass[/green]" if o.passed else "[red]FAIL[/red]", o.differences[0] if o.differences else ""
        )
    console.print(table)
    passed = sum(o.passed for o in outcomes)
    console.print(f"{passed}/{len(outcomes)} cases pass")
