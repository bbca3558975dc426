"""Kinds served as views of another kind's storage: events.k8s.io/v1 Events are core/v1 Events,
policy/v1beta1 PodDisruptionBudgets are policy/v1 ones (`cluster.legacy`).

A real API server keeps one storage for both Event versions and converts between them, so an
event written through one API is visible through the other. The store does the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lightkube.models import core_v1 as cm
from lightkube.models import events_v1 as em
from lightkube.resources import core_v1, events_v1, policy_v1

from kubesched.api.objects import Served
from kubesched.cluster.codec import decoder, encode
from kubesched.cluster.legacy import PodDisruptionBudgetV1beta1, pdb_from_v1, pdb_to_v1


@dataclass(frozen=True)
class View:
    storage: type[Served]
    to_storage: Callable[[Any], Served]  # Any: an object of the view's own class
    from_storage: Callable[[Any], Served]  # Any: an object of the storage class


def _event_to_core(e: events_v1.Event) -> core_v1.Event:
    meta: Any = e.metadata  # Any: a new Event's may be unset yet, though core/v1 declares it required
    series = None
    if e.series is not None:
        series = cm.EventSeries(count=e.series.count, lastObservedTime=e.series.lastObservedTime)
    return core_v1.Event(
        metadata=meta,
        involvedObject=e.regarding or cm.ObjectReference(),
        related=e.related,
        message=e.note,
        reason=e.reason,
        type=e.type,
        action=e.action,
        eventTime=e.eventTime,
        series=series,
        reportingComponent=e.reportingController or "",
        reportingInstance=e.reportingInstance or "",
        source=e.deprecatedSource,
        firstTimestamp=e.deprecatedFirstTimestamp,
        lastTimestamp=e.deprecatedLastTimestamp,
        count=e.deprecatedCount,
    )


def _event_from_core(e: Any) -> events_v1.Event:  # Any: a core/v1 Event, whose unset times events/v1 requires
    series = None
    if e.series is not None:
        series = em.EventSeries(count=e.series.count or 0, lastObservedTime=e.series.lastObservedTime)
    return events_v1.Event(
        metadata=e.metadata,
        eventTime=e.eventTime,
        regarding=e.involvedObject,
        related=e.related,
        note=e.message,
        reason=e.reason,
        type=e.type,
        action=e.action,
        series=series,
        reportingController=e.reportingComponent or None,
        reportingInstance=e.reportingInstance or None,
        deprecatedSource=e.source,
        deprecatedFirstTimestamp=e.firstTimestamp,
        deprecatedLastTimestamp=e.lastTimestamp,
        deprecatedCount=e.count,
    )


def converter(cls: type[Served]) -> Callable[[object], Served]:
    """Conversion of an object into `cls` through the wire codec (two classes of one custom kind)."""
    decode = decoder(cls).decode
    return lambda obj: decode(encode(obj))


VIEWS: dict[type[Served], View] = {
    events_v1.Event: View(storage=core_v1.Event, to_storage=_event_to_core, from_storage=_event_from_core),
    PodDisruptionBudgetV1beta1: View(
        storage=policy_v1.PodDisruptionBudget, to_storage=pdb_to_v1, from_storage=pdb_from_v1
    ),
}
