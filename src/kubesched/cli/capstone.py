"""`kubesched capstone`: the measurement and the story of `lab.capstone`, as a table, JSON or a
Markdown report with its picture."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from kubesched.cli.commands import Subparsers
from kubesched.config import ConfigError
from kubesched.console import options
from kubesched.framework import FrameworkError
from kubesched.lab.capstone import build, default_inputs, markdown, print_capstone
from kubesched.workloads.compare import WorkloadError, svg


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    cap = sub.add_parser(name, help=help)
    cap.set_defaults(run=capstone_command)
    cap.add_argument("--workload", metavar="FILE", help="default: the out-of-tree package's gang-contention workload")
    cap.add_argument("--config", metavar="FILE", help="the measured scheduler's configuration (default: the package's)")
    cap.add_argument("--seed", type=int, default=0, help="the simulation's seed (default 0)")
    options.add_plugin_option(cap)
    cap.add_argument(
        "--output",
        nargs="+",
        metavar="FORMAT",
        default=["table"],
        help="table (default), json, or md FILE: the report as Markdown, its picture beside it (FILE with .svg)",
    )


def capstone_command(console: Console, args: argparse.Namespace) -> int:
    fmt, *rest = args.output
    if fmt not in ("table", "json", "md") or (fmt == "md") != bool(rest) or len(rest) > 1:
        options.print_error(console, "--output: table, json, or md FILE")
        return 2
    try:
        registry = options.registry(args.plugin)
        workload, config = (args.workload, args.config) if args.workload and args.config else default_inputs()
        cap = build(
            workload_path=args.workload or workload,
            config_path=args.config or config,
            registry=registry,
            seed=args.seed,
        )
    except (options.UsageError, ConfigError, FrameworkError, WorkloadError) as e:
        options.print_error(console, str(e))
        return 2
    if fmt == "json":
        json.dump(cap.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if fmt == "md":
        target = Path(rest[0])
        picture = target.with_suffix(".svg")
        try:
            picture.write_text(svg(cap.reports))
            target.write_text(markdown(cap, picture=picture.name))
        except OSError as e:
            options.print_error(console, f"--output md {target}: {e.strerror or e}")
            return 2
        console.print(f"wrote {target} and {picture}", highlight=False)
        return 0
    print_capstone(console, cap)
    return 0
