"""The pieces every printer is made of: columns, rows, ages and durations as kubectl shows them,
labels and selectors as text."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Never, TypeVar

from lightkube.models import meta_v1

from kubesched.api.objects import Named, Served
from kubesched.api.selectors import selector_string

NONE = "<none>"
UNKNOWN = "<unknown>"
UNSET = "<unset>"


def short_human_duration(seconds: float) -> str:
    """A one-unit age, as apimachinery's ``ShortHumanDuration``: ``45s``, ``12m``, ``5h``, ``3d``, ``2y``.

    Up to a second in the future counts as ``0s`` (clock skew); further is ``<invalid>``.
    """
    whole = int(seconds)  # truncates toward zero, like Go's int(float)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m"
    hours = whole // 3600
    if hours < 24:
        return f"{hours}h"
    if hours < 24 * 365:
        return f"{hours // 24}d"
    return f"{hours // (24 * 365)}y"


def human_duration(seconds: float) -> str:
    """An age with two or three significant figures, as apimachinery's ``HumanDuration``.

    Seconds below 2 minutes (``90s``); minutes and seconds below 10 minutes (``3m20s``); minutes
    below 3 hours (``150m``); hours and minutes below 8 hours (``5h30m``); hours below 2 days
    (``30h``); days and hours below 8 days (``3d4h``); days below 2 years (``400d``); years and
    days below 8 years (``2y10d``); years after that. A zero remainder drops its unit (``5m``).
    """
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        rest = days % 365
        return f"{years}y{rest}d" if rest else f"{years}y"
    return f"{years}y"


def is_zero(ts: datetime | None) -> bool:
    return ts is None or ts.year <= 1


def age(ts: datetime | None, now: float) -> str:
    """Time since `ts` for a table cell; ``<unknown>`` for an unset timestamp."""
    if ts is None or is_zero(ts):
        return UNKNOWN
    return human_duration(now - ts.timestamp())


@dataclass(frozen=True)
class Col:
    name: str
    type: str = "string"
    description: str = ""
    priority: int = 0
    format: str = ""

    def as_json(self) -> dict[str, str | int]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


def name_col(description: str = "The object's name, unique within its namespace and kind.") -> Col:
    return Col("Name", format="name", description=description)


AGE = Col("Age", description="Time since the object was created.")
CONTAINERS = Col("Containers", description="Container names of the pod template.", priority=1)
IMAGES = Col("Images", description="Container images of the pod template.", priority=1)
SELECTOR = Col("Selector", description="The label selector picking the managed pods.", priority=1)

Cell = str | int | bool  # a cell's JSON value: text, a number or a flag
Row = tuple[list[Cell], list[dict[str, str]] | None]  # the cells, and the row's conditions if any

M = TypeVar("M")
M_contra = TypeVar("M_contra", contravariant=True)  # the model a printer prints


@dataclass(frozen=True)
class Printer(Generic[M_contra]):
    """The columns of a kind's table, and the row of one of its objects (`row(obj, now)`)."""

    columns: tuple[Col, ...]
    row: Callable[[M_contra, float], Row]


Printers = dict[type[Served], Printer[Never]]
"""Printers by the class of the kind they print. Each one's model is its key's, which no one type
says (`Never`): it is called only with objects of that kind."""


def cells(fn: Callable[[M, float], list[Cell]]) -> Callable[[M, float], Row]:
    """The row of cells `fn` gives, without conditions."""

    def row(obj: M, now: float) -> Row:
        return fn(obj, now), None

    return row


def created(obj: Named) -> datetime | None:
    meta = obj.metadata
    return meta.creationTimestamp if meta else None


def being_deleted(obj: Named) -> bool:
    meta = obj.metadata
    return bool(meta and meta.deletionTimestamp)


def as_int(value: int | None) -> int:
    return int(value or 0)


def int_or_string(value: int | str | None) -> str:
    return "N/A" if value is None else str(value)


def format_labels(labels: Mapping[str, str] | None) -> str:
    """``k1=v1,k2=v2`` in key order, or ``<none>``."""
    if not labels:
        return NONE
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_selector(selector: meta_v1.LabelSelector | None) -> str:
    text = selector_string(selector)
    if text is None:
        return "<error>"
    return text or NONE
