"""Checks and loaders for command-line options, failing with a message that names the option."""

from __future__ import annotations

from pathlib import Path

from kubesched.sim import NodeTemplate


class UsageError(Exception):
    """A bad option value; the command prints it and exits with status 2."""


def at_least(option: str, value: int, minimum: int) -> int:
    if value < minimum:
        raise UsageError(f"{option} must be at least {minimum}")
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
