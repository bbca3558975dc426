"""Checks and loaders for command-line options, failing with a message that names the option."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
from collections.abc import Iterator, Sequence
from pathlib import Path

from rich.console import Console

from kubesched.apiserver.rbac import MODES
from kubesched.config import ConfigError, SchedulerConfig, default_config, load_file
from kubesched.config.duration import parse_duration
from kubesched.controllers import parse_controllers
from kubesched.framework import FrameworkError
from kubesched.framework.registry import Registry
from kubesched.scheduler.discovery import PluginLoadError, plugin_registry
from kubesched.scheduler.profiles import check_profiles
from kubesched.scheduler.results import ResultStore
from kubesched.sim import NodeTemplate
from kubesched.trace import JsonLinesSink, Sink


@contextlib.contextmanager
def trace_sinks(path: str | None) -> Iterator[list[Sink]]:
    """What `--trace FILE` asks for: every trace record written to FILE as JSON lines (no sink
    without it); the file is closed at the end."""
    if not path:
        yield []
        return
    try:
        stream = open(path, "w")  # noqa: SIM115 - closed below, after the run
    except OSError as e:
        raise UsageError(f"--trace: {path}: {e.strerror or e}") from None
    with stream:
        yield [JsonLinesSink(stream)]


class UsageError(Exception):
    """A bad option value; the command prints it and exits with status 2."""


def print_error(console: Console, message: str) -> None:
    """One error line on stderr, in red, printed as it is (no markup, emoji codes or wrapping)."""
    errors = Console(stderr=True, no_color=console.no_color)
    errors.print(message, style="red", markup=False, emoji=False, highlight=False, soft_wrap=True)


def at_least(option: str, value: int, minimum: int) -> int:
    if value < minimum:
        raise UsageError(f"{option} must be at least {minimum}")
    return value


def controllers(text: str) -> tuple[str, ...]:
    """`--controllers`: kube-controller-manager's list syntax, checked against the built-in names."""
    try:
        return tuple(parse_controllers(text))
    except ValueError as e:
        raise UsageError(f"--controllers: {e}") from None


def duration(text: str) -> float:
    """An argparse type: a Go duration (`90s`, `1h30m`), in seconds, more than zero."""
    try:
        seconds = parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"a duration above zero, not {text!r}")
    return seconds


def seconds(option: str, text: str) -> float:
    """An option's Go duration in seconds, zero allowed; a UsageError naming the option."""
    try:
        value = parse_duration(text)
    except ValueError as e:
        raise UsageError(f"{option}: {e}") from None
    if value < 0:
        raise UsageError(f"{option}: must not be negative, got {text}")
    return value


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_port(option: str, text: str, *, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """`HOST:PORT` (an empty host: `default_host`); UsageError naming `option` for anything else."""
    host, _, port_text = text.rpartition(":")
    if not port_text.isdigit() or int(port_text) > 65535:
        raise UsageError(f"{option}: expected HOST:PORT, got {text!r}")
    return host or default_host, int(port_text)


def port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, not {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {value}")
    return value


def node_template(path: str | None) -> NodeTemplate | None:
    if not path:
        return None
    try:
        return NodeTemplate.from_file(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"--node-template: {e}") from None


def token(path: str | None) -> str | None:
    if not path:
        return None
    try:
        text = Path(path).read_text().strip()
    except OSError as e:
        raise UsageError(f"--token-file: {e}") from None
    if not text:
        raise UsageError(f"--token-file: {path} is empty")
    return text


def registry(plugins: Sequence[str] | None = None) -> Registry:
    """The in-tree plugins, the installed packages' and those of `--plugin module:attr`."""
    try:
        return plugin_registry(plugins or ())
    except PluginLoadError as e:
        raise UsageError(str(e)) from None


def scheduler_config(option: str, path: str | None, registry: Registry) -> SchedulerConfig:
    """The KubeSchedulerConfiguration in the file `path` (upstream's defaults without one), its
    profiles built once as the scheduler builds them; a UsageError naming the option and the file."""
    if not path:
        return default_config(registry)
    try:
        config = load_file(path, registry)
        check_profiles(config, registry)
    except ConfigError as e:
        raise UsageError(f"{option}: {e}") from None
    except FrameworkError as e:
        raise UsageError(f"{option}: {path}: {e}") from None
    return config


def add_plugin_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="also load the plugins of this module (importable from the working directory) or of a file "
        "(path/to/file.py:attr); repeatable",
    )


def add_output_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--output",
        choices=("table", "json"),
        default="table",
        help=f"table (default), for reading, or json, for programs: {what}",
    )


def add_results_options(parser: argparse.ArgumentParser) -> None:
    """What the scheduler keeps of its attempts, for `kubesched explain` and `/debug/pods`."""
    parser.add_argument(
        "--results-budget",
        type=int,
        default=16,
        metavar="MIB",
        help="memory for recorded scheduling attempts, oldest dropped first (default 16; 0 records none)",
    )
    parser.add_argument(
        "--results-per-pod", type=int, default=8, metavar="N", help="attempts recorded per pod (default 8)"
    )


def result_store(args: argparse.Namespace) -> ResultStore | None:
    """The store `--results-budget` and `--results-per-pod` ask for (None: record nothing)."""
    at_least("--results-budget", args.results_budget, 0)
    at_least("--results-per-pod", args.results_per_pod, 1)
    if args.results_budget == 0:
        return None
    return ResultStore(budget=args.results_budget * 2**20, per_pod=args.results_per_pod)


def authorization_mode(text: str) -> str:
    """`--authorization`'s value, in kube-apiserver's spelling whatever the case given."""
    for mode in MODES:
        if text.lower() == mode.lower():
            return mode
    raise argparse.ArgumentTypeError(f"expected one of {', '.join(MODES)}, got {text!r}")
