"""A sweep's results directory: each point written the moment it finishes, so that a sweep that
is killed loses at most the points it was running, and `--resume` goes on from the rest.

    DIR/sweep.json      what the sweep is (file, fingerprint, axes, metrics, points)
    DIR/points.jsonl    one finished point a line, appended and flushed to disk as each finishes
    DIR/results.csv     the table, every point in index order (written at the end)
    DIR/results.json    the same as JSON, with the sweep's description
    DIR/results.parquet the same as Parquet (with pyarrow installed: `kubesched[sweep]`)
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, cast

from kubesched.whatif.sweep.metrics import Metric
from kubesched.whatif.sweep.simulate import PointResult
from kubesched.whatif.sweep.spec import Point, Sweep, SweepError

META, POINTS = "sweep.json", "points.jsonl"
CSV, JSON, PARQUET = "results.csv", "results.json", "results.parquet"


class AxisMeta(TypedDict):
    """An axis as sweep.json describes it."""

    name: str
    values: list[object]
    path: str | None


class MetricMeta(TypedDict):
    """A metric as sweep.json describes it."""

    name: str
    description: str
    better: str


@dataclass
class Table:
    """The results of a sweep as the report reads them: the sweep's description and its points."""

    meta: dict[str, object]
    results: list[PointResult]

    @property
    def axes_meta(self) -> list[AxisMeta]:
        return cast(list[AxisMeta], self.meta["axes"])  # as ResultsDir.start writes sweep.json

    @property
    def axes(self) -> list[str]:
        return [a["name"] for a in self.axes_meta]

    @property
    def metrics(self) -> list[MetricMeta]:
        return cast(list[MetricMeta], self.meta["metrics"])  # as ResultsDir.start writes sweep.json

    def columns(self) -> list[str]:
        return ["index", *self.axes, "status", *(m["name"] for m in self.metrics), "error"]

    def rows(self) -> list[dict[str, object]]:
        out = []
        for r in sorted(self.results, key=lambda r: r.index):
            row: dict[str, object] = {"index": r.index, **r.coordinates, "status": r.status}
            row.update({m["name"]: r.metrics.get(m["name"]) for m in self.metrics})
            row["error"] = r.error
            out.append(row)
        return out


class ResultsDir:
    def __init__(self, path: Path) -> None:
        self.path = path

    def start(
        self, sweep: Sweep, points: Sequence[Point], metrics: Sequence[Metric], *, resume: bool, force: bool
    ) -> dict[int, PointResult]:
        """Make the directory ready for `points`; the points already done (with `resume`).
        SweepError when it holds another sweep's results, or results without `resume`/`force`."""
        axes: list[AxisMeta] = [{"name": a.name, "values": list(a.values), "path": a.path} for a in sweep.axes]
        described: list[MetricMeta] = [
            {"name": m.name, "description": m.description, "better": m.better} for m in metrics
        ]
        meta = {
            "name": sweep.name,
            "description": sweep.description,
            "file": str(sweep.path),
            "fingerprint": sweep.fingerprint(points),
            "axes": axes,
            "metrics": described,
            "points": len(points),
        }
        done: dict[int, PointResult] = {}
        if (self.path / META).exists():
            if resume:
                old = _meta(self.path)
                if old.get("fingerprint") != meta["fingerprint"]:
                    raise SweepError(
                        f"--resume: {self.path} holds the results of another sweep (or of other points); "
                        "give another --out, or --force to start over"
                    )
                done = _finished(self.path, cut=True)
            elif not force:
                raise SweepError(
                    f"--out: {self.path} holds a sweep's results; --resume to go on, --force to start over"
                )
            else:
                shutil.rmtree(self.path)
        self.path.mkdir(parents=True, exist_ok=True)
        if not resume:
            (self.path / POINTS).unlink(missing_ok=True)
        _write_atomically(self.path / META, json.dumps(meta, indent=2, default=str) + "\n")
        wanted = {p.index for p in points}
        self._stream = open(self.path / POINTS, "a")  # noqa: SIM115 - kept open while the sweep runs
        return {i: r for i, r in done.items() if i in wanted}

    def append(self, result: PointResult) -> None:
        """Keep `result` on disk now (a line, flushed and synced)."""
        self._stream.write(json.dumps(result.to_json(), default=str) + "\n")
        self._stream.flush()
        os.fsync(self._stream.fileno())

    def close(self) -> None:
        self._stream.close()

    def finish(self) -> list[Path]:
        """Write the table as CSV, JSON and (with pyarrow) Parquet; the files written."""
        table = load(self.path)
        rows = table.rows()
        written = [self.path / CSV, self.path / JSON]
        with open(self.path / CSV, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=table.columns())
            writer.writeheader()
            for row in rows:
                writer.writerow({k: _cell(v) for k, v in row.items()})
        _write_atomically(self.path / JSON, json.dumps({**table.meta, "results": rows}, indent=1, default=str) + "\n")
        parquet = _parquet(self.path / PARQUET, table.columns(), rows)
        if parquet is not None:
            written.append(parquet)
        return written


def load(path: Path) -> Table:
    """The results in a directory a sweep wrote; SweepError when it holds none."""
    if not (path / META).exists():
        raise SweepError(f"{path}: not a sweep's results directory (no {META})")
    return Table(_meta(path), sorted(_finished(path).values(), key=lambda r: r.index))


def _meta(path: Path) -> dict[str, object]:
    try:
        data: dict[str, object] = json.loads((path / META).read_text())
    except (OSError, ValueError) as e:
        raise SweepError(f"{path / META}: cannot be read ({e})") from None
    return data


def _finished(path: Path, *, cut: bool = False) -> dict[int, PointResult]:
    """The points in points.jsonl (the first result of each); a last line cut short by a kill is
    left out (and, with `cut`, cut off the file, so that the next point starts a line)."""
    file = path / POINTS
    if not file.exists():
        return {}
    data = file.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    if cut and len(complete) != len(data):
        with open(file, "r+b") as f:
            f.truncate(len(complete))
    done: dict[int, PointResult] = {}
    for number, line in enumerate(complete.decode().splitlines(), 1):
        try:
            result = PointResult.from_json(json.loads(line))
        except (ValueError, KeyError, TypeError) as e:
            raise SweepError(f"{file}:{number}: not a point's result ({e})") from None
        done.setdefault(result.index, result)
    return done


def _cell(value: object) -> object:
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return "" if value is None else value


def _parquet(path: Path, columns: list[str], rows: list[dict[str, object]]) -> Path | None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return None
    data = {c: [_cell(r.get(c)) if isinstance(r.get(c), dict | list) else r.get(c) for r in rows] for c in columns}
    arrays = {}
    for name, values in data.items():
        try:
            arrays[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed kinds in one column: as text
            arrays[name] = pa.array([None if v is None else str(v) for v in values])
    pq.write_table(pa.table(arrays), path)
    return path


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
