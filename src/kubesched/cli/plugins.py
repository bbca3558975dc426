"""`kubesched plugins`: every registered plugin, where it comes from, the points and hooks it
declares, its arguments with their defaults, and where the configuration's profiles enable it."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.table import Table

from kubesched.cli.commands import Subparsers
from kubesched.config import ConfigError
from kubesched.console import options
from kubesched.console.tables import print_table
from kubesched.framework import FrameworkError
from kubesched.scheduler.describe import PluginInfo, describe


def _enabled_text(info: PluginInfo) -> str:
    by_profile: dict[str, list[str]] = {}
    for e in info.enabled:
        point = e["point"] + (f" ({e['weight']})" if e["weight"] is not None else "")
        by_profile.setdefault(e["profile"], []).append(point)
    return "\n".join(f"{profile}: {', '.join(points)}" for profile, points in by_profile.items())


def plugins_command(console: Console, args: argparse.Namespace) -> int:
    try:
        registry = options.registry(args.plugin)
        config = options.scheduler_config("--config", args.config, registry)
        infos = describe(registry, config)
    except (options.UsageError, ConfigError, FrameworkError) as e:
        options.print_error(console, str(e))
        return 2
    if args.output == "json":
        json.dump({"plugins": [i.to_json() for i in infos]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    table = Table(show_lines=False, expand=False)
    for column in ("PLUGIN", "SOURCE", "EXTENSION POINTS", "BATCH", "ARGS (defaults)", "ENABLED"):
        table.add_column(column, overflow="fold")
    for info in infos:
        args_text = "" if info.args_type is None else f"{info.args_type} {json.dumps(info.args, separators=(',', ':'))}"
        points = ", ".join(info.points) if not info.error else f"[red]{info.error}[/red]"
        table.add_row(info.name, info.source, points, ", ".join(info.batch), args_text, _enabled_text(info))
    print_table(console, table)
    return 0


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    plugins = sub.add_parser(name, help=help)
    plugins.set_defaults(run=plugins_command)
    plugins.add_argument(
        "--config", metavar="FILE", help="a KubeSchedulerConfiguration: build its profiles as run would"
    )
    options.add_output_option(plugins, "every plugin, its extension points and where it is enabled")
    options.add_plugin_option(plugins)
