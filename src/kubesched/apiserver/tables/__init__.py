"""Server-side `meta.k8s.io/v1` `Table` output, the form `kubectl get` asks for.

kubectl sends ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...`` and prints whatever
columns come back, hiding those with a non-zero ``priority`` unless ``-o wide`` is given. So the
columns and the text of every cell are decided here, to match what a real API server prints for
each kind (kube-apiserver's internal printers): pod status such as ``CrashLoopBackOff`` or
``Init:0/2``, node status such as ``Ready,SchedulingDisabled``, ages such as ``3m20s``.

Ages are measured against ``now`` (epoch seconds) handed in by the caller, never the wall clock,
so a server running on a virtual clock prints virtual ages.

Kinds without a dedicated printer get the generic two-column table (``Name``, ``Created At``)
that upstream uses for such resources.

Public entry points: `table`, `parse_include_object`, `columns`,
`human_duration`, `short_human_duration`. The printers live with their groups (`core`,
`cluster`, `workloads`, `storage`, `dra`), made of the parts in `printing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final, cast

import msgspec

from kubesched.api.objects import Named, Served, name_of
from kubesched.apiserver.jsontypes import JsonObject
from kubesched.apiserver.tables import cluster, core, dra, storage, workloads
from kubesched.apiserver.tables.printing import (
    Cell,
    Col,
    Printer,
    Printers,
    age,
    cells,
    created,
    human_duration,
    name_col,
    short_human_duration,
)
from kubesched.cluster.errors import BadRequest
from kubesched.cluster.kinds import Kind

__all__ = [
    "INCLUDE_METADATA",
    "INCLUDE_NONE",
    "INCLUDE_OBJECT",
    "TABLE_API_VERSION",
    "TABLE_CONTENT_TYPE",
    "columns",
    "human_duration",
    "parse_include_object",
    "short_human_duration",
    "table",
]

TABLE_API_VERSION: Final = "meta.k8s.io/v1"
TABLE_CONTENT_TYPE: Final = "application/json;as=Table;v=v1;g=meta.k8s.io"
"""The `Content-Type` a Table response carries (upstream echoes the negotiated media type)."""

INCLUDE_NONE: Final = "None"
INCLUDE_METADATA: Final = "Metadata"
INCLUDE_OBJECT: Final = "Object"
_INCLUDE_VALUES = (INCLUDE_NONE, INCLUDE_METADATA, INCLUDE_OBJECT)


_PRINTERS: Printers = {
    **core.PRINTERS,
    **cluster.PRINTERS,
    **workloads.PRINTERS,
    **storage.PRINTERS,
    **dra.PRINTERS,
}


def parse_include_object(value: str | None) -> str:
    """The ``includeObject`` query parameter, defaulted: ``None``, ``Metadata`` (default) or ``Object``.

    Anything else is a `BadRequest`, as upstream rejects it.
    """
    if not value:
        return INCLUDE_METADATA
    if value in _INCLUDE_VALUES:
        return value
    raise BadRequest(f"includeObject: Invalid value: {value!r}: must be 'Metadata', 'Object', 'None', or empty")


def _created_at(obj: Named, now: float) -> list[Cell]:
    ts = created(obj)
    stamp = "0001-01-01T00:00:00Z" if ts is None else ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [name_of(obj), stamp]


_DEFAULT = Printer(
    (name_col(), Col("Created At", type="date", description="When the object was created.")),
    cells(_created_at),
)


def _printer(kind: Kind) -> Printer[Served]:
    """The printer of `kind`'s objects: the only objects it is handed."""
    found = _PRINTERS.get(kind.cls)
    if found is not None:
        return cast("Printer[Served]", found)  # found by kind.cls: it is handed only objects of kind.cls
    if kind.columns:
        return _custom_printer(kind)
    return _DEFAULT


def _json_path(data: object, path: str) -> object:
    """A simple JSONPath (`.status.phase`) into the object's JSON form; None where it leads nowhere."""
    for part in [p for p in path.strip().lstrip("$").split(".") if p]:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _custom_printer(kind: Kind) -> Printer[Served]:
    """A custom kind's additionalPrinterColumns after the name; `date` columns as ages."""
    specs = kind.columns
    cols = [Col("Name", format="name", description="Name must be unique within a namespace.")]
    for spec in specs:
        kind_of_column = spec.get("type", "string")
        cols.append(
            Col(
                spec.get("name", ""),
                type="string" if kind_of_column == "date" else kind_of_column,
                description=spec.get("description", ""),
                priority=int(spec.get("priority", 0) or 0),
                format=spec.get("format", "") or "",
            )
        )

    def custom_cells(obj: Served, now: float) -> list[Cell]:
        data = msgspec.to_builtins(obj)
        out: list[Cell] = [name_of(obj)]
        for spec in specs:
            value = _json_path(data, spec.get("jsonPath", ""))
            if spec.get("type") == "date":
                stamp = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None
                out.append(age(stamp, now))
            elif isinstance(value, bool | int | str):
                out.append(value)
            elif value is None:
                out.append("" if spec.get("type", "string") == "string" else 0)
            else:
                out.append(msgspec.json.encode(value).decode())
        return out

    return Printer(tuple(cols), cells(custom_cells))


def columns(kind: Kind, *, wide: bool = True) -> list[dict[str, str | int]]:
    """The `columnDefinitions` of `kind`'s table (without the priority-1 ones unless `wide`)."""
    return [c.as_json() for c in _printer(kind).columns if wide or c.priority == 0]


def _row_object(kind: Kind, obj: Served, include_object: str) -> JsonObject | None:
    if include_object == INCLUDE_NONE:
        return None
    if include_object == INCLUDE_METADATA:
        meta = obj.metadata
        return {
            "kind": "PartialObjectMetadata",
            "apiVersion": TABLE_API_VERSION,
            "metadata": msgspec.to_builtins(meta) if meta is not None else {},
        }
    body: JsonObject = msgspec.to_builtins(obj)
    return {"apiVersion": kind.api_version, "kind": kind.kind, **body}


def table(
    kind: Kind,
    objects: Sequence[Served],
    *,
    now: float,
    wide: bool,
    include_object: str = INCLUDE_METADATA,
    resource_version: str = "",
    continue_token: str | None = None,
    remaining_item_count: int | None = None,
) -> JsonObject:
    """`objects` of `kind` as a ``meta.k8s.io/v1`` `Table` (JSON-ready dict), one row each, in order.

    `wide` means upstream's "generate wide" option. kube-apiserver always generates wide tables and
    leaves kubectl to hide the ``priority: 1`` columns unless ``-o wide``, so the API server should
    pass ``wide=True``; ``wide=False`` drops those columns and their cells (for in-process use).

    `include_object` is the parsed ``includeObject`` parameter (`parse_include_object`): ``None``
    gives rows without objects, ``Metadata`` a ``PartialObjectMetadata`` per row, ``Object`` the
    whole object. `now` is the time ages are measured against, in epoch seconds.
    """
    if include_object not in _INCLUDE_VALUES:
        include_object = parse_include_object(include_object)
    printer = _printer(kind)
    keep = [wide or c.priority == 0 for c in printer.columns]
    rows = []
    for obj in objects:
        cells, conditions = printer.row(obj, now)
        row: dict[str, object] = {"cells": [cell for cell, kept in zip(cells, keep, strict=True) if kept]}
        if conditions:
            row["conditions"] = [dict(c) for c in conditions]
        row["object"] = _row_object(kind, obj, include_object)
        rows.append(row)
    metadata: dict[str, object] = {"resourceVersion": resource_version}
    if continue_token:
        metadata["continue"] = continue_token
    if remaining_item_count is not None:
        metadata["remainingItemCount"] = remaining_item_count
    return {
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": metadata,
        "columnDefinitions": [c.as_json() for c, kept in zip(printer.columns, keep, strict=True) if kept],
        "rows": rows,
    }
