"""`kubesched golden DIR`: cases recorded from the real kube-scheduler, run and compared node for node."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from kubesched.cli.commands import Subparsers
from kubesched.console import options
from kubesched.golden.cli import report, run_directory
from kubesched.golden.loader import case_names
from kubesched.plugins.registry import in_tree_registry


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    golden = sub.add_parser(name, help=help)
    golden.set_defaults(run=golden_main)
    golden.add_argument("directory", help="a directory of NAME.input.yaml / NAME.expected.json cases")
    golden.add_argument("--case", action="append", help="run only this case (repeatable)")
    options.add_output_option(golden, "each case's result and first difference")


def golden_main(console: Console, args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    if not directory.is_dir():
        options.print_error(console, f"{directory}: not a directory")
        return 2
    known = set(case_names(directory))
    unknown = [c for c in args.case or () if c not in known]
    if unknown:
        options.print_error(console, f"--case: no case {unknown[0]!r} in {directory} (cases: {len(known)})")
        return 2
    outcomes = run_directory(directory, in_tree_registry(), only=args.case)
    report(console, outcomes, as_json=args.output == "json")
    return 0 if all(o.passed for o in outcomes) else 1
