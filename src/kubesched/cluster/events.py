"""Recording core/v1 Events about objects, as client-go's event recorder does."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1, events_v1

from kubesched.clock import Clock
from kubesched.clock.base import utc
from kubesched.cluster.errors import ApiError
from kubesched.cluster.protocol import Cluster

NORMAL = "Normal"
WARNING = "Warning"


def object_reference(obj: Any) -> m.ObjectReference:
    meta = obj.metadata
    return m.ObjectReference(
        apiVersion=obj.apiVersion,
        kind=obj.kind,
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid,
        resourceVersion=meta.resourceVersion,
    )


class EventRecorder:
    """Posts Events for one component. Names are `<object>.<hex nanoseconds>`, made unique even
    when the (virtual) clock has not moved between two events."""

    def __init__(self, cluster: Cluster, clock: Clock, *, component: str, host: str | None = None) -> None:
        self._cluster = cluster
        self._clock = clock
        self._source = m.EventSource(component=component, host=host)
        self._seq = itertools.count()

    async def record(self, obj: Any, type_: str, reason: str, message: str, *, host: str | None = None) -> None:
        """Post one Event about `obj`; a failure to record is not the caller's failure."""
        now = self._clock.now()
        meta = obj.metadata
        stamp = utc(int(now))
        event = core_v1.Event(
            metadata=meta_v1.ObjectMeta(
                name=f"{meta.name}.{int(now * 1e9) + next(self._seq):x}",
                namespace=meta.namespace or "default",
            ),
            involvedObject=object_reference(obj),
            reason=reason,
            message=message,
            type=type_,
            source=m.EventSource(component=self._source.component, host=host or self._source.host),
            reportingComponent=self._source.component,
            reportingInstance=host or self._source.host or "",
            firstTimestamp=stamp,
            lastTimestamp=stamp,
            count=1,
        )
        with contextlib.suppress(ApiError):
            await self._cluster.create(event)


class EventsV1Recorder:
    """Posts events.k8s.io/v1 Events, as kube-scheduler's recorder does: reporting controller is
    the scheduler's name, `action` says what it was doing, `note` is the message."""

    def __init__(self, cluster: Cluster, clock: Clock, *, controller: str, instance: str) -> None:
        self._cluster = cluster
        self._clock = clock
        self.controller = controller
        self.instance = instance
        self._seq = itertools.count()

    async def record(
        self, regarding: Any, type_: str, reason: str, action: str, note: str, *, related: Any | None = None
    ) -> None:
        now = self._clock.now()
        meta = regarding.metadata
        event = events_v1.Event(
            metadata=meta_v1.ObjectMeta(
                name=f"{meta.name}.{int(now * 1e9) + next(self._seq):x}", namespace=meta.namespace or "default"
            ),
            eventTime=utc(now),
            regarding=object_reference(regarding),
            related=object_reference(related) if related is not None else None,
            reason=reason,
            action=action,
            note=note,
            type=type_,
            reportingController=self.controller,
            reportingInstance=self.instance,
        )
        with contextlib.suppress(ApiError):
            await self._cluster.create(event)
