"""A sweep file: one simulation (cluster, workloads, scheduler) and the axes it is varied along.

```yaml
name: fit-strategy
seed: 0
cluster: {nodes: [{name: node, count: 1000, capacity: {cpu: "8", memory: 32Gi, pods: "110"}}]}
workloads:
  web: {horizon: 60s, pods: [{count: 2000, name: "web-{i}", every: 0.005, template: {...}}]}
scheduler: {config: {profiles: [{schedulerName: default-scheduler}]}, plugins: []}
axes:
  strategy:                # named patches of the whole document
    variants: {least: {...}, most: {...}}
  balanced:                # a value put at a path
    path: scheduler.config.profiles[0].plugins.score.enabled[NodeResourcesBalancedAllocation].weight
    values: [1, 2, 5]
  fit:                     # named values put at a path (the names are the coordinates)
    path: scheduler.config.profiles[0].pluginConfig[NodeResourcesFit].args.scoringStrategy
    values: {least: {type: LeastAllocated}, most: {type: MostAllocated}}
  seed: {path: seed, range: {from: 1, to: 5}}
```

A point is one value of every axis; the points are the axes' product (with several workloads, a
`workload` axis comes first), or a sample of it. A point's document is the file's with each
axis applied in order — a path set, or a variant merged as a JSON merge patch — and is what
`plan.read` turns into the simulation.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import numpy as np

from kubesched.api import yamlfile
from kubesched.storage.patch import merge_patch
from kubesched.whatif.documents import mapping as as_mapping
from kubesched.whatif.documents import string
from kubesched.whatif.scenario.fields import ScenarioError, integer, mapping, only, text
from kubesched.whatif.sweep import paths

RANDOM, LATIN_HYPERCUBE = "random", "lhs"
SAMPLINGS = (RANDOM, LATIN_HYPERCUBE)
WORKLOAD_AXIS = "workload"

_TOP = {"name", "description", "seed", "cluster", "workloads", "scheduler", "metrics", "axes"}
_AXIS = {"path", "values", "range", "variants"}


class SweepError(ValueError):
    """A sweep file (or a sweep's options) that cannot be used, in one line naming the field."""


class Job(TypedDict):
    """A point as executors hand it to `simulate.run_job`: plain data, for any process."""

    index: int
    point: dict[str, object]  # its coordinates
    document: dict[str, object]  # resolved
    root: str  # where the file's relative paths start


@dataclass(frozen=True)
class Axis:
    """One way the simulation is varied. `values` are the coordinates a point has on it: with
    `path`, what is put there; with `variants`, the names of patches merged into the document;
    with `table` (named values, the workload axis), names of what is put at `path`."""

    name: str
    values: tuple[object, ...]
    path: str | None = None
    variants: Mapping[str, object] | None = None
    table: Mapping[str, object] | None = None

    def apply(self, document: dict[str, object], value: object) -> dict[str, object]:
        if self.variants is not None:  # the values are the variants' names
            patch = copy.deepcopy(self.variants[string(value, f"axes.{self.name}")])
            return as_mapping(merge_patch(document, patch), "the patched document")
        assert self.path is not None
        chosen = copy.deepcopy(self.table[string(value, f"axes.{self.name}")]) if self.table is not None else value
        try:
            paths.set_at(document, self.path, chosen)
        except paths.PathError as e:
            raise SweepError(f"axes.{self.name}.path: {e}") from None
        return document


@dataclass(frozen=True)
class Point:
    """A point of the sweep: its index in the axes' product (its id) and its coordinates."""

    index: int
    coordinates: dict[str, object]

    @property
    def key(self) -> str:
        return json.dumps(self.coordinates, sort_keys=True, default=str)


@dataclass(frozen=True)
class Sweep:
    path: Path
    name: str
    description: str
    document: dict[str, object]  # the simulation, before any axis (a config file read in)
    axes: tuple[Axis, ...]

    @property
    def root(self) -> Path:
        """Where the file's relative paths (plugins, snapshots, metrics) start."""
        return self.path.parent

    @property
    def size(self) -> int:
        return math.prod(len(a.values) for a in self.axes)

    def point(self, index: int) -> Point:
        """The point at `index` of the product (the last axis varies fastest)."""
        coordinates: dict[str, object] = {}
        for axis in reversed(self.axes):
            index, here = divmod(index, len(axis.values))
            coordinates[axis.name] = axis.values[here]
        return Point(self._index_of(coordinates), {a.name: coordinates[a.name] for a in self.axes})

    def _index_of(self, coordinates: Mapping[str, object]) -> int:
        index = 0
        for axis in self.axes:
            index = index * len(axis.values) + axis.values.index(coordinates[axis.name])
        return index

    def points(self, *, samples: int | None = None, sampling: str = RANDOM, seed: int = 0) -> list[Point]:
        """Every point, or `samples` of them (distinct, in index order): drawn at random, or a
        Latin hypercube over the axes' values. The same arguments give the same points."""
        if samples is None or samples >= self.size:
            return [self.point(i) for i in range(self.size)]
        if samples < 1:
            raise SweepError(f"--samples: must be at least 1, got {samples}")
        if sampling == RANDOM:
            return [self.point(i) for i in sorted(random.Random(seed).sample(range(self.size), samples))]
        if sampling != LATIN_HYPERCUBE:
            raise SweepError(f"--sampling: {sampling!r} is not a sampling (known: {', '.join(SAMPLINGS)})")
        rng = np.random.default_rng(seed)
        columns = []
        for axis in self.axes:  # each axis's values in `samples` equal strata, one draw in each
            strata = (rng.permutation(samples) + rng.random(samples)) / samples
            columns.append(np.minimum((strata * len(axis.values)).astype(int), len(axis.values) - 1))
        chosen = {
            self._index_of({a.name: a.values[int(c[k])] for a, c in zip(self.axes, columns, strict=True)})
            for k in range(samples)
        }
        return [self.point(i) for i in sorted(chosen)]

    def resolve(self, point: Point) -> dict[str, object]:
        """The point's document: the file's with each axis's value applied."""
        document = copy.deepcopy(self.document)
        for axis in self.axes:
            document = axis.apply(document, point.coordinates[axis.name])
        document.pop("workloads", None)
        return document

    def job(self, point: Point) -> Job:
        """The point as executors hand it to `simulate.run_job`: its index, coordinates, resolved
        document and where the file's relative paths start (plain data, for any process)."""
        return {
            "index": point.index,
            "point": point.coordinates,
            "document": self.resolve(point),
            "root": str(self.root),
        }

    def fingerprint(self, points: Sequence[Point]) -> str:
        """What identifies the sweep's work: the document, the axes and the points chosen."""
        body = {
            "document": self.document,
            "axes": [[a.name, list(a.values), a.path, a.variants] for a in self.axes],
            "points": [p.index for p in points],
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:16]


def load(path: str | Path) -> Sweep:
    """The sweep in `path`; SweepError naming the file and the field when it is not one."""
    path = Path(path)
    try:
        document = yamlfile.load(path)
    except yamlfile.YamlError as e:
        raise SweepError(str(e)) from None
    try:
        return parse(document, path)
    except (SweepError, ScenarioError) as e:
        raise SweepError(f"{path}: {e}") from None


def parse(document: object, path: Path) -> Sweep:
    body = mapping(document, "the sweep")
    only(body, _TOP, "the sweep")
    if "axes" not in body:
        raise SweepError("axes: a sweep needs at least one axis")
    base = {k: v for k, v in body.items() if k not in ("name", "description", "axes")}
    scheduler = mapping(base.get("scheduler") or {}, "scheduler")
    config = scheduler.get("config")
    if isinstance(config, str):  # a file: read in, so that axes reach into it
        try:
            scheduler["config"] = yamlfile.load(path.parent / config)
        except yamlfile.YamlError as e:
            raise SweepError(f"scheduler.config: {e}") from None
    base["scheduler"] = scheduler
    axes = [_axis(name, value) for name, value in mapping(body["axes"], "axes").items()]
    if not axes:
        raise SweepError("axes: a sweep needs at least one axis")
    workloads = mapping(base.get("workloads") or {}, "workloads")
    if not workloads:
        raise SweepError("workloads: a sweep needs a workload (a name and its pods)")
    if WORKLOAD_AXIS in (a.name for a in axes):
        raise SweepError(f"axes.{WORKLOAD_AXIS}: the name is the workloads' own axis; name this one otherwise")
    if len(workloads) > 1:
        axes.insert(0, Axis(WORKLOAD_AXIS, tuple(workloads), path=WORKLOAD_AXIS, table=workloads))
    else:
        base[WORKLOAD_AXIS] = next(iter(workloads.values()))
    return Sweep(
        path=path,
        name=text(body["name"], "name") if "name" in body else path.stem,
        description=str(body.get("description") or ""),
        document=base,
        axes=tuple(axes),
    )


def _axis(name: str, value: object) -> Axis:
    where = f"axes.{name}"
    body = mapping(value, where)
    only(body, _AXIS, where)
    given = [k for k in ("values", "range", "variants") if k in body]
    if len(given) != 1:
        raise SweepError(f"{where}: give one of values, range or variants (got {', '.join(given) or 'none'})")
    if "variants" in body:
        if "path" in body:
            raise SweepError(f"{where}.path: variants patch the whole document; give no path")
        variants = mapping(body["variants"], f"{where}.variants")
        for key, patch in variants.items():
            mapping(patch, f"{where}.variants.{key}")
        if not variants:
            raise SweepError(f"{where}.variants: an axis needs at least one value")
        return Axis(name, tuple(variants), variants=variants)
    route = text(body.get("path"), f"{where}.path")
    try:
        paths.parse(route)
    except paths.PathError as e:
        raise SweepError(f"{where}.path: {e}") from None
    values = _range(body["range"], f"{where}.range") if "range" in body else body["values"]
    if isinstance(values, Mapping) and values:  # named values: the names are the coordinates
        return Axis(name, tuple(str(k) for k in values), path=route, table={str(k): v for k, v in values.items()})
    if not isinstance(values, list) or not values:
        raise SweepError(f"{where}.values: expected a list of one value or more, got {values!r}")
    keys = [json.dumps(v, sort_keys=True, default=str) for v in values]
    if len(set(keys)) != len(keys):
        raise SweepError(f"{where}.values: each value once (repeats would be the same points)")
    return Axis(name, tuple(values), path=route)


def _range(value: object, where: str) -> list[int]:
    body = mapping(value, where)
    only(body, {"from", "to", "step"}, where)
    start = integer(body.get("from"), f"{where}.from", minimum=-(2**62))
    stop = integer(body.get("to"), f"{where}.to", minimum=start)
    step = integer(body.get("step", 1), f"{where}.step", minimum=1)
    return list(itertools.islice(range(start, stop + 1, step), 100_000))
