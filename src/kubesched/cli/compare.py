"""`kubesched compare`: one workload under two or more scheduler configurations, side by side."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from kubesched.cli.commands import Subparsers
from kubesched.cli.ui import add_ui_options
from kubesched.config import ConfigError, SchedulerConfig
from kubesched.console import options
from kubesched.console.reports import print_reports
from kubesched.console.serving import serve as serve_ui
from kubesched.framework import FrameworkError
from kubesched.framework.registry import Registry
from kubesched.workloads.compare import WorkloadError, compare, load_workload, svg


def _configs(names: list[str], registry: Registry) -> list[tuple[str, SchedulerConfig]]:
    out = []
    for name in names:
        config = options.scheduler_config("--config", None if name == "default" else name, registry)
        out.append((name if name == "default" else Path(name).stem, config))
    return out


def compare_command(console: Console, args: argparse.Namespace) -> int:
    if len(args.config) < 2:
        options.print_error(console, "--config: give at least two configurations (a file, or `default`)")
        return 2
    try:
        bind = options.host_port("--ui-bind", args.ui_bind)
        registry = options.registry(args.plugin)
        configs = _configs(args.config, registry)
        workload = load_workload(args.workload)
        reports = compare(workload, configs, registry, seed=args.seed)
    except (options.UsageError, ConfigError, FrameworkError, WorkloadError) as e:
        options.print_error(console, str(e))
        return 2
    if args.plot:
        try:
            Path(args.plot).write_text(svg(reports))
        except OSError as e:
            options.print_error(console, f"--plot: {e}")
            return 2
    body = {"workload": workload.spec.name, "seed": args.seed, "configs": [r.to_json() for r in reports]}
    if args.output == "json":
        json.dump(body, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print_reports(console, workload.spec.name, workload.spec.description, reports)
    if args.ui:
        return serve_ui(console, bind, comparison=body)
    return 0


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    cmp = sub.add_parser(name, help=help)
    cmp.set_defaults(run=compare_command)
    cmp.add_argument("workload", help="a workload file (YAML: nodes, objects, pods; see docs/plugins.md)")
    cmp.add_argument(
        "--config", action="append", default=[], metavar="FILE", help="a KubeSchedulerConfiguration, or `default`"
    )
    cmp.add_argument("--seed", type=int, default=0, help="seed of the clusters and schedulers (default 0)")
    cmp.add_argument("--plot", metavar="FILE", help="write the per-node utilisation of each configuration as SVG")
    options.add_output_option(cmp, "each configuration's placement and measures")
    options.add_plugin_option(cmp)
    add_ui_options(cmp, "the comparison")
