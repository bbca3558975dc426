"""YAML documents read from files, with errors that name the file, line and column."""

from __future__ import annotations

from pathlib import Path

import yaml

# libyaml's C loader and dumper when PyYAML was built with it (its wheels are): ten times faster
# on a snapshot of a large cluster, and the same documents.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class YamlError(ValueError):
    """A file that cannot be read or is not YAML; the message starts with the file's name."""


def parse(text: str, source: str) -> object:
    """The one document in `text` (None when empty); `source` names it in errors."""
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as e:
        raise _error(e, source) from None


def parse_all(text: str, source: str) -> list[object]:
    """Every document in `text` (`---` between them), empty ones left out."""
    try:
        return [d for d in yaml.load_all(text, Loader=_LOADER) if d is not None]
    except yaml.YAMLError as e:
        raise _error(e, source) from None


def _error(e: yaml.YAMLError, source: str) -> YamlError:
    mark = getattr(e, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    problem = getattr(e, "problem", None) or str(e)
    return YamlError(f"{source}: not valid YAML{where}: {problem}")


def dumps(document: object) -> str:
    """`document` as block-style YAML, keys sorted."""
    return yaml.dump(document, Dumper=_DUMPER, sort_keys=True, default_flow_style=False, allow_unicode=True)


def load(path: str | Path) -> object:
    """The one document in the file at `path`."""
    return parse(_read(path), str(path))


def load_all(path: str | Path) -> list[object]:
    """Every document in the file at `path`."""
    return parse_all(_read(path), str(path))


def _read(path: str | Path) -> str:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise YamlError(f"{path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise YamlError(f"{path}: not a text file") from None
    return text
