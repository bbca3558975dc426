"""Sweeps: one simulation varied along axes — configuration fields, plugins, cluster shapes,
workloads, seeds — every point run on virtual time, on all cores or on a Ray cluster, measured,
kept as it finishes and reported. `spec` reads a sweep file into axes and points, `plan` a point's
document into a simulation, `simulate` runs it, `metrics` measures it, `executors` spread the
points, `results` keeps them, `report` sums them up."""

from kubesched.whatif.sweep.metrics import Metric, Outcome
from kubesched.whatif.sweep.spec import Axis, Point, Sweep, SweepError, load

__all__ = ["Axis", "Metric", "Outcome", "Point", "Sweep", "SweepError", "load"]
