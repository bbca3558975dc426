"""A `kubesched compare --output json` report, for the compare page: the per-node utilisation of
each configuration side by side."""

from __future__ import annotations

from pathlib import Path

import msgspec


class ComparisonError(ValueError):
    """A file that is not a compare report: the message names the file and what is wrong."""


def load_comparison(path: Path) -> dict[str, object]:
    """The report in `path` (what `kubesched compare --output json` prints); ComparisonError when
    it cannot be read or is not one."""
    try:
        data = msgspec.json.decode(path.read_bytes())
    except OSError as e:
        raise ComparisonError(f"{path}: {e.strerror}") from None
    except msgspec.DecodeError as e:
        raise ComparisonError(f"{path}: not JSON ({e})") from None
    return checked(data, str(path))


def checked(data: object, where: str) -> dict[str, object]:
    """`data` when it is a compare report: configurations, each with its name and nodes."""
    configs = data.get("configs") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(configs, list) or len(configs) < 2:
        raise ComparisonError(f"{where}: not a compare report (expected `configs`, two or more)")
    for i, config in enumerate(configs):
        if not isinstance(config, dict) or not isinstance(config.get("config"), str):
            raise ComparisonError(f"{where}: configs[{i}]: expected an object with a `config` name")
        nodes = config.get("nodes")
        if not isinstance(nodes, list) or not all(isinstance(n, dict) and "name" in n for n in nodes):
            raise ComparisonError(f"{where}: configs[{i}].nodes: expected a list of nodes with names")
    report: dict[str, object] = data
    return report
