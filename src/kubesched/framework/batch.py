"""Helpers for the plugins' batch methods (`filter_batch`, `score_batch`) over a `NodeTable`.

A batch method answers for `rows` (table row indices) at once: `filter_batch` returns a mask,
True where the node fails the plugin (None when every row passes); `score_batch` returns the raw
scores. Where a plugin cannot decide from the table's columns it asks its own per-node method
for some or all rows, through the helpers here, so both paths always give the same answers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.cache import NodeInfo, PodInfo
    from kubesched.cache.table import NodeTable
    from kubesched.framework.cycle_state import CycleState

Int = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]
FilterFn = Callable[["CycleState", "PodInfo", "NodeInfo"], "Status | None"]
ScoreFn = Callable[["CycleState", "PodInfo", "NodeInfo"], int]


def fails(status: Status | None) -> bool:
    """Whether a per-node Filter verdict rejects the node (as the framework reads it)."""
    return status is not None and status.code != Code.SUCCESS


def filter_per_node(
    filter_fn: FilterFn, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int, flag: str | None = None
) -> Bool | None:
    """The per-node Filter's verdicts as a batch mask; with `flag`, only the rows with that table
    flag are asked (the others pass). None when no row fails."""
    nodes = table.nodes
    where = None
    if flag is not None and (where := table.flagged(flag, rows)) is None:
        return None
    if where is None:
        mask = np.fromiter(
            (fails(filter_fn(state, pod, nodes[r])) for r in rows.tolist()), dtype=np.bool_, count=len(rows)
        )
    else:
        picked = np.flatnonzero(where)
        if not len(picked):
            return None
        mask = np.zeros(len(rows), dtype=np.bool_)
        mask[picked] = np.fromiter(
            (fails(filter_fn(state, pod, nodes[r])) for r in rows[picked].tolist()), dtype=np.bool_, count=len(picked)
        )
    return mask if mask.any() else None


def filter_memo(
    filter_fn: FilterFn, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int, key: Hashable
) -> Bool | None:
    """The per-node Filter's verdicts as a batch mask, kept in a NodeTable memo column under `key`:
    for a verdict that depends only on the node and what `key` names of the pod (pods of one
    template share the column across cycles; rows of nodes updated since are asked again)."""
    nodes = table.nodes
    column = table.memo(
        key,
        lambda every: np.fromiter(
            (fails(filter_fn(state, pod, nodes[r])) for r in every.tolist()), dtype=np.int64, count=len(every)
        ),
        lambda node: int(fails(filter_fn(state, pod, node))),
    )
    mask = column[rows] != 0
    return mask if mask.any() else None


def score_per_node(
    score_fn: ScoreFn, state: CycleState, pod: PodInfo, table: NodeTable, rows: Int, flag: str | None = None
) -> Int:
    """The per-node Score's raw scores as an array; with `flag`, only the rows with that table
    flag are asked (the others score 0)."""
    nodes = table.nodes
    where = None
    if flag is not None and (where := table.flagged(flag, rows)) is None:
        return zeros(rows)
    if where is None:
        return np.fromiter((score_fn(state, pod, nodes[r]) for r in rows.tolist()), dtype=np.int64, count=len(rows))
    out = np.zeros(len(rows), dtype=np.int64)
    picked = np.flatnonzero(where)
    if len(picked):
        out[picked] = np.fromiter(
            (score_fn(state, pod, nodes[r]) for r in rows[picked].tolist()), dtype=np.int64, count=len(picked)
        )
    return out


def zeros(rows: Int) -> Int:
    return np.zeros(len(rows), dtype=np.int64)
