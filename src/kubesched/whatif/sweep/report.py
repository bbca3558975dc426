"""What a sweep's table says: its points grouped over the seed axes (a configuration's metrics are
the mean over its seeds, with their range), the best group for each metric, the Pareto front of
two metrics, and plots — each metric against each axis, and a heat map over two axes.

Plots need matplotlib (`pip install 'kubesched[sweep]'`); the rest needs nothing more.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kubesched.whatif.sweep.results import Table
from kubesched.whatif.sweep.simulate import OK
from kubesched.whatif.sweep.spec import SweepError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SEED_PATH = "seed"
FORMATS = ("png", "svg")


@dataclass
class Summary:
    """A metric over a group's points: mean, lowest, highest, and how many points had it."""

    mean: float
    low: float
    high: float
    count: int

    def to_json(self) -> dict[str, float]:
        return {"mean": round(self.mean, 6), "min": self.low, "max": self.high, "points": self.count}


@dataclass
class Group:
    """The points that differ only on the seed axes."""

    coordinates: dict[str, object]
    points: list[int] = field(default_factory=list)
    failed: int = 0
    metrics: dict[str, Summary] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={shown(v)}" for k, v in self.coordinates.items()) or "(all)"

    def value(self, metric: str) -> float | None:
        summary = self.metrics.get(metric)
        return summary.mean if summary is not None else None

    def to_json(self) -> dict[str, object]:
        return {
            "point": self.coordinates,
            "points": self.points,
            "failed": self.failed,
            "metrics": {k: v.to_json() for k, v in self.metrics.items()},
        }


def seed_axes(table: Table) -> list[str]:
    """The axes that only change the seed: a configuration is judged over them."""
    return [a["name"] for a in table.axes_meta if a.get("path") == SEED_PATH]


def groups(table: Table, *, over: Sequence[str] | None = None) -> list[Group]:
    """The points grouped by their coordinates on every axis but those `over` (the seed axes by
    default), in the order of their first point."""
    over = seed_axes(table) if over is None else list(over)
    kept = [a for a in table.axes if a not in over]
    metric_names = [m["name"] for m in table.metrics]
    found: dict[str, Group] = {}
    values: dict[str, dict[str, list[float]]] = {}
    for result in sorted(table.results, key=lambda r: r.index):
        coordinates = {a: result.coordinates.get(a) for a in kept}
        key = json.dumps(coordinates, sort_keys=True, default=str)
        group = found.setdefault(key, Group(coordinates))
        group.points.append(result.index)
        if result.status != OK:
            group.failed += 1
            continue
        for name in metric_names:
            value = result.metrics.get(name)
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                values.setdefault(key, {}).setdefault(name, []).append(float(value))
    for key, group in found.items():
        for name, seen in values.get(key, {}).items():
            group.metrics[name] = Summary(statistics.fmean(seen), min(seen), max(seen), len(seen))
    return list(found.values())


def better_of(table: Table, metric: str) -> str:
    for m in table.metrics:
        if m["name"] == metric:
            return m["better"]
    known = ", ".join(m["name"] for m in table.metrics)
    raise SweepError(f"{metric!r} is not a metric of this sweep (it has {known})")


def best(table: Table, found: Sequence[Group], metrics: Sequence[str] | None = None) -> list[tuple[str, Group]]:
    """For each metric (all by default), the group with the best mean (the first of equals)."""
    out = []
    for metric in metrics or [m["name"] for m in table.metrics]:
        sign = -1.0 if better_of(table, metric) == "max" else 1.0
        having = [g for g in found if g.value(metric) is not None]
        if having:
            out.append((metric, min(having, key=lambda g: sign * (g.value(metric) or 0.0))))
    return out


def pareto(table: Table, found: Sequence[Group], x: str, y: str) -> list[Group]:
    """The groups no other group beats on both `x` and `y` (as good on both, better on one)."""
    signs = [-1.0 if better_of(table, m) == "max" else 1.0 for m in (x, y)]
    having = [g for g in found if g.value(x) is not None and g.value(y) is not None]

    def cost(g: Group) -> tuple[float, float]:
        return (signs[0] * (g.value(x) or 0.0), signs[1] * (g.value(y) or 0.0))

    front = []
    for g in having:
        gx, gy = cost(g)
        dominated = any(
            (ox <= gx and oy <= gy) and (ox < gx or oy < gy) for ox, oy in (cost(o) for o in having if o is not g)
        )
        if not dominated:
            front.append(g)
    return sorted(front, key=cost)


def shown(value: object) -> str:
    """A coordinate as the report prints it (strings bare, anything else as JSON)."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


# -- plots -----------------------------------------------------------------------------------------


def _pyplot() -> None:
    """matplotlib set to draw into files; SweepError when it is not installed."""
    try:
        import matplotlib
    except ImportError:
        raise SweepError("--plots: plots need matplotlib (pip install 'kubesched[sweep]')") from None
    matplotlib.use("Agg")


def plots(
    table: Table,
    out: Path,
    *,
    metrics: Sequence[str],
    heatmap: tuple[str, str] | None = None,
    front: tuple[str, str] | None = None,
    over: Sequence[str] | None = None,
) -> list[Path]:
    """Write the plots into `out` as PNG and SVG: each metric against each axis (mean over the
    other axes and the seeds, the range shaded), a heat map of each metric over two axes, the
    groups (taken together over `over`, default the seed axes) on two metrics with their Pareto
    front; the files written."""
    _pyplot()
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    varied = [a for a in table.axes_meta if a["name"] not in seed_axes(table) and len(a["values"]) > 1]
    by_axis = {a["name"]: groups(table, over=[o for o in table.axes if o != a["name"]]) for a in varied}
    by_pair = _pairs(table, heatmap) if heatmap is not None else []
    for metric in metrics:
        better_of(table, metric)
        for axis in varied:
            having = [g for g in by_axis[axis["name"]] if g.value(metric) is not None]
            if not having:
                continue
            labels = [shown(g.coordinates[axis["name"]]) for g in having]
            means = [g.metrics[metric].mean for g in having]
            fig, ax = plt.subplots(figsize=(6, 4))
            ax.plot(labels, means, marker="o")
            ax.fill_between(
                labels, [g.metrics[metric].low for g in having], [g.metrics[metric].high for g in having], alpha=0.2
            )
            ax.set_xlabel(axis["name"])
            ax.set_ylabel(metric)
            ax.set_title(f"{metric} by {axis['name']} ({table.meta['name']})")
            written += _save(fig, out / f"{metric}-by-{axis['name']}")
        if heatmap is not None:
            written += _heatmap(table, out, metric, heatmap, by_pair)
    if front is not None:
        written += _front(table, out, front, groups(table, over=over))
    return written


def _pairs(table: Table, axes: tuple[str, str]) -> list[Group]:
    """The groups of each pair of values of the two axes (over every other); SweepError for a
    name that is not an axis."""
    for name in axes:
        if name not in table.axes:
            raise SweepError(f"--heatmap: {name!r} is not an axis of this sweep (it has {', '.join(table.axes)})")
    return groups(table, over=[a for a in table.axes if a not in axes])


def _heatmap(table: Table, out: Path, metric: str, axes: tuple[str, str], by_pair: list[Group]) -> list[Path]:
    import matplotlib.pyplot as plt

    rows_axis, columns_axis = axes
    row_values = _values(table, rows_axis)
    column_values = _values(table, columns_axis)
    grid = [[math.nan] * len(column_values) for _ in row_values]
    for g in by_pair:
        value = g.value(metric)
        if value is not None:
            r = row_values.index(g.coordinates[rows_axis])
            c = column_values.index(g.coordinates[columns_axis])
            grid[r][c] = value
    fig, ax = plt.subplots(figsize=(1.2 * len(column_values) + 3, 0.6 * len(row_values) + 2.5))
    image = ax.imshow(grid, aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(column_values)), [shown(v) for v in column_values])
    ax.set_yticks(range(len(row_values)), [shown(v) for v in row_values])
    ax.set_xlabel(columns_axis)
    ax.set_ylabel(rows_axis)
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            if not math.isnan(value):
                ax.text(c, r, f"{value:.3g}", ha="center", va="center", color="white", fontsize=8)
    fig.colorbar(image, ax=ax, label=metric)
    ax.set_title(f"{metric}: {rows_axis} x {columns_axis}")
    return _save(fig, out / f"{metric}-{rows_axis}-x-{columns_axis}")


def _front(table: Table, out: Path, metrics: tuple[str, str], found: list[Group]) -> list[Path]:
    import matplotlib.pyplot as plt

    x, y = metrics
    having = [g for g in found if g.value(x) is not None and g.value(y) is not None]
    front = pareto(table, found, x, y)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    # every group here has both metrics (the front's are among those that do)
    ax.scatter(
        [g.metrics[x].mean for g in having], [g.metrics[y].mean for g in having], color="#999999", label="points"
    )
    ax.plot(
        [g.metrics[x].mean for g in front],
        [g.metrics[y].mean for g in front],
        marker="o",
        color="#d03030",
        label="Pareto front",
    )
    for g in front:
        ax.annotate(g.label, (g.value(x), g.value(y)), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel(f"{x} ({better_of(table, x)} is better)")
    ax.set_ylabel(f"{y} ({better_of(table, y)} is better)")
    ax.legend()
    return _save(fig, out / f"pareto-{x}-{y}")


def _values(table: Table, axis: str) -> list[object]:
    for a in table.axes_meta:
        if a["name"] == axis:
            return a["values"]
    raise SweepError(f"{axis!r} is not an axis of this sweep")


def _save(fig: Figure, stem: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    paths = []
    for fmt in FORMATS:
        path = stem.with_suffix(f".{fmt}")
        fig.savefig(path, format=fmt, dpi=110, metadata={"Date": None} if fmt == "svg" else None)
        paths.append(path)
    plt.close(fig)
    return paths
