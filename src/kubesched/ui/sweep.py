"""The sweep page over a sweep's results directory (`kubesched ui --sweep DIR`): every point with
its coordinates, status and metrics (`/ui/api/sweep`, read afresh each time, so a sweep still
running fills in); and any finished point run again, traced, into the recording the replay's pages
show (`/ui/api/sweep/points/{index}/open`): the cluster, the pods and the queue as that point's
run left them, at any moment of it."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

from kubesched.ui.documents import Document
from kubesched.ui.replay import Recording, Replayed
from kubesched.ui.routes import replayed
from kubesched.whatif.scenario.fields import ScenarioError
from kubesched.whatif.sweep import plan as plans
from kubesched.whatif.sweep import results
from kubesched.whatif.sweep.metrics import WALL
from kubesched.whatif.sweep.simulate import OK, PointError, PointResult, simulate
from kubesched.whatif.sweep.spec import SweepError
from kubesched.whatif.sweep.spec import load as load_sweep


class PageError(Exception):
    """Why the sweep page's request cannot be answered: the HTTP status and the message, one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class SweepPage:
    """A results directory served to the sweep page, and the point last opened into `replayed`
    (opened one at a time: each is a whole simulation)."""

    directory: Path
    replayed: Replayed
    opened: int | None = None
    _opening: threading.Lock = field(default_factory=threading.Lock)

    def table(self) -> results.Table:
        """The directory's results as they are now; PageError (409) when it no longer holds any."""
        try:
            return results.load(self.directory)
        except SweepError as e:
            raise PageError(409, str(e)) from None

    def document(self) -> Document:
        """The sweep page's document: the sweep's description (name, file, axes, metrics, the
        number of points), every finished point in index order, and the point opened."""
        table = self.table()
        return {
            **table.meta,
            "directory": str(self.directory),
            "rows": [_row(r) for r in table.results],
            "opened": self.opened,
        }

    def open(self, index: int) -> Document:
        """Run point `index` again with its trace kept, and replay that run; what was opened. Blocks
        for the whole simulation (call it from a thread); PageError for a point that is not in the
        results (404), or that failed, or whose sweep file no longer loads or has changed (409)."""
        with self._opening:
            table = self.table()
            result = next((r for r in table.results if r.index == index), None)
            if result is None:
                raise PageError(404, f"point {index} is not among the sweep's {len(table.results)} finished points")
            if result.status != OK:
                raise PageError(409, f"point {index} failed, there is no run to replay: {result.error}")
            recording, metrics = _rerun(table.meta, result)
            self.replayed.recording = recording
            self.opened = index
            recorded = {k: v for k, v in result.metrics.items() if k != WALL.name}
            return {
                "index": index,
                "name": recording.name,
                "records": len(recording.records),
                "start": recording.start,
                "end": recording.end,
                "reproduced": _key(recorded) == _key(metrics),
            }


def _row(result: PointResult) -> Document:
    return {
        "index": result.index,
        "point": result.coordinates,
        "status": result.status,
        "metrics": result.metrics,
        "error": result.error,
    }


# Any: the sweep's description as its results directory holds it (`results.Table.meta`)
def _rerun(meta: dict[str, Any], result: PointResult) -> tuple[Recording, dict[str, object]]:
    """Point `result` of the sweep `meta` describes, simulated again with its trace kept: the
    recording and the metrics it measured. PageError (409) when it cannot be."""
    where = meta.get("file", "")
    try:
        sweep = load_sweep(Path(where))
    except SweepError as e:
        raise PageError(409, f"the sweep file no longer loads: {e}") from None
    if result.index >= sweep.size:
        raise PageError(409, f"{where} has changed: it has {sweep.size} points now, not point {result.index}")
    point = sweep.point(result.index)
    if _key(point.coordinates) != _key(result.coordinates):
        raise PageError(
            409, f"{where} has changed: point {result.index} is {_key(point.coordinates)} now, not the one measured"
        )
    try:
        run = simulate(plans.read(sweep.resolve(point), sweep.root), keep_trace=True)
    except (PointError, ScenarioError, SweepError) as e:
        raise PageError(409, f"point {result.index} cannot be run again: {e}") from None
    if not run.records:
        raise PageError(409, f"point {result.index} ran again but recorded nothing")
    coordinates = ", ".join(f"{k}={v}" for k, v in result.coordinates.items())
    name = f"{meta.get('name') or 'sweep'}: point {result.index} ({coordinates})"
    return Recording(run.records, name=name), run.metrics


def _key(value: object) -> str:
    """`value` as a results file writes it: what was measured compares with what was read back."""
    return json.dumps(value, sort_keys=True, default=str)


SWEEP = web.AppKey("kubesched.ui.sweep", SweepPage)


def mount_sweep(app: web.Application, table_dir: Path) -> None:
    """Serve the sweep in the results directory `table_dir` to the sweep page (`/ui/api/sweep`),
    and the replay's pages over whichever of its points is opened
    (`POST /ui/api/sweep/points/{index}/open`); with `mount_replay` too, its recording is shown
    until a point is opened."""
    app[SWEEP] = SweepPage(table_dir, replayed(app))
    app.router.add_get("/ui/api/sweep", _sweep)
    app.router.add_post("/ui/api/sweep/points/{index}/open", _open)


def _json(document: object, status: int = 200) -> web.Response:
    return web.Response(body=msgspec.json.encode(document), status=status, content_type="application/json")


async def _sweep(request: web.Request) -> web.Response:
    try:
        return _json(request.app[SWEEP].document())
    except PageError as e:
        return _json({"message": e.message}, status=e.status)


async def _open(request: web.Request) -> web.Response:
    """A point opened: run again in a thread (the server answers other requests meanwhile). The
    request must say it is JSON, which another site's page cannot without asking first (415)."""
    if request.content_type != "application/json":
        return _json({"message": f"expected Content-Type application/json, got {request.content_type}"}, status=415)
    text = request.match_info["index"]
    if not text.isdigit():
        return _json({"message": f"point {text!r} is not in the sweep (points are numbered from 0)"}, status=404)
    try:
        return _json(await asyncio.to_thread(request.app[SWEEP].open, int(text)))
    except PageError as e:
        return _json({"message": e.message}, status=e.status)
