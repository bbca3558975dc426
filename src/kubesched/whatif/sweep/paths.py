"""Where an axis puts its value in a sweep document: a path of keys and list selectors.

    scheduler.config.profiles[0].pluginConfig[NodeResourcesFit].args.scoringStrategy.type
    cluster.nodes[big].count
    scheduler.config.profiles[schedulerName=bin-packer].percentageOfNodesToScore

A key names a field of a mapping; `[N]` the N-th item of a list; `[NAME]` the item whose `name`
is NAME, `[FIELD=VALUE]` the item whose FIELD is VALUE. What the path passes through and is not
there yet is made: a mapping for a key, `{name: NAME}` (or `{FIELD: VALUE}`) appended for a
selector, `{}` for `[0]` of an empty list — so a plugin's weight can be set though the base
configuration never lists the plugin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[[^\[\]]+\])*)")
_SELECTOR = re.compile(r"\[([^\[\]]+)\]")


class PathError(ValueError):
    """A path that does not parse, or that meets something it cannot go through."""


@dataclass(frozen=True)
class Key:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Index:
    index: int

    def __str__(self) -> str:
        return f"[{self.index}]"


@dataclass(frozen=True)
class Match:
    field: str
    value: str

    def __str__(self) -> str:
        return f"[{self.value}]" if self.field == "name" else f"[{self.field}={self.value}]"


Step = Key | Index | Match


def parse(path: str) -> tuple[Step, ...]:
    """The steps of `path`; PathError saying what is wrong with it."""
    if not path:
        raise PathError("an empty path")
    steps: list[Step] = []
    for part in path.split("."):
        found = _SEGMENT.fullmatch(part)
        if found is None:
            raise PathError(f"{path!r}: cannot read {part!r} (expected key, key[N], key[NAME] or key[FIELD=VALUE])")
        steps.append(Key(found.group(1)))
        for selector in _SELECTOR.findall(found.group(2)):
            if selector.isdigit():
                steps.append(Index(int(selector)))
            else:
                field, eq, value = selector.partition("=")
                steps.append(Match(field, value) if eq else Match("name", selector))
    return tuple(steps)


def set_at(document: dict[str, object], path: str, value: object) -> None:
    """Put `value` at `path` in `document` (in place), making what is missing on the way."""
    steps = parse(path)
    here: object = document
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        following = None if last else steps[i + 1]
        parent, where = _shown(steps[:i]) or "the document", _shown(steps[: i + 1])
        if isinstance(step, Key):
            if not isinstance(here, dict):
                raise PathError(f"{path}: {parent} is a {_kind(here)}, not a mapping")
            if last:
                here[step.name] = value
                return
            if here.get(step.name) is None:
                here[step.name] = [] if isinstance(following, Index | Match) else {}
            here = here[step.name]
            continue
        if not isinstance(here, list):
            raise PathError(f"{path}: {parent} is a {_kind(here)}, not a list")
        slot = _slot(here, step, path, where)
        if last:
            here[slot] = value
            return
        here = here[slot]


def _slot(items: list[object], step: Index | Match, path: str, where: str) -> int:
    if isinstance(step, Index):
        if step.index < len(items):
            return step.index
        if step.index == len(items) == 0:
            items.append({})
            return 0
        raise PathError(f"{path}: {where}: the list has {len(items)} items")
    for i, item in enumerate(items):
        if isinstance(item, dict) and str(item.get(step.field)) == step.value:
            return i
    items.append({step.field: step.value})
    return len(items) - 1


def _shown(steps: tuple[Step, ...]) -> str:
    return "".join(("." if isinstance(s, Key) and j else "") + str(s) for j, s in enumerate(steps))


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return f"value ({value!r})"
