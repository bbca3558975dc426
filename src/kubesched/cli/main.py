"""The `kubesched` command: the top-level parser, and the one command given, run.

Every command lives in a module of its own (`commands.COMMANDS` says which); only that module is
imported, so `kubesched --version` and `kubesched --help` import none of them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from kubesched import K8S_VERSION, __version__
from kubesched.cli.commands import BY_NAME, COMMANDS


def parser(argv: Sequence[str] = (), *, every: bool = False) -> argparse.ArgumentParser:
    """The parser for `argv`: the command `argv` names defined in full (with `every`, all of
    them, for tests and documentation), the others by their names and help alone."""
    top = argparse.ArgumentParser(prog="kubesched", description="The Kubernetes scheduler, in Python, with its lab.")
    top.add_argument("--version", action="version", version=f"kubesched {__version__} (kube-scheduler {K8S_VERSION})")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = argv[0] if argv else None
    for command in COMMANDS:
        if every or command.name == chosen:
            command.add_parser()(sub, command.name, command.help)
        else:
            sub.add_parser(command.name, help=command.help, add_help=False)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(sys.argv[1:] if argv is None else list(argv))
    except BrokenPipeError:
        # The reader went away (`kubesched ... | head`): stop quietly, as command-line tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _main(argv: list[str]) -> int:
    if argv and argv[0] in BY_NAME:
        argv = _normalised(argv)
    args = parser(argv).parse_args(argv)
    from rich.console import Console

    from kubesched.cli.runtime import tune_gc
    from kubesched.console import options

    tune_gc()
    console = Console()
    try:
        status: int = args.run(console, args)
    except options.UsageError as e:
        options.print_error(console, str(e))
        return 2
    return status


def _normalised(argv: list[str]) -> list[str]:
    """`argv` as its command reads it (`kubesched sweep SPEC` is `kubesched sweep run SPEC`)."""
    if argv[0] == "sweep":
        from kubesched.cli.sweep import normalised

        return normalised(argv)
    return argv


if __name__ == "__main__":
    raise SystemExit(main())
