"""Printers of dynamic resource allocation: ResourceClaims, ResourceSlices and DeviceClasses."""

from __future__ import annotations

from lightkube.models import resource_v1 as resource_m
from lightkube.resources import resource_v1

from kubesched.api.objects import name_of
from kubesched.apiserver.tables.printing import (
    AGE,
    Cell,
    Col,
    Printer,
    Printers,
    age,
    being_deleted,
    cells,
    created,
    name_col,
)


def _claim_state(claim: resource_m.ResourceClaim) -> str:
    states = []
    deleting = being_deleted(claim)
    if deleting:
        states.append("deleted")
    status = claim.status
    if status is None or status.allocation is None:
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if status.reservedFor:
            states.append("reserved")
    return ",".join(states)


_RESOURCE_CLAIM: Printer[resource_m.ResourceClaim] = Printer(
    (name_col(), Col("State", description="Deleted, pending, allocated and/or reserved."), AGE),
    cells(lambda c, now: [name_of(c), _claim_state(c), age(created(c), now)]),
)


def _resource_slice_cells(s: resource_m.ResourceSlice, now: float) -> list[Cell]:
    spec = s.spec
    pool = spec.pool if spec else None
    return [
        name_of(s),
        (spec.nodeName if spec else None) or "",
        (spec.driver if spec else None) or "",
        (pool.name if pool else None) or "",
        age(created(s), now),
    ]


_RESOURCE_SLICE = Printer(
    (
        name_col(),
        Col("Node", description="The node whose devices the slice lists."),
        Col("Driver", description="The driver publishing the slice."),
        Col("Pool", description="The device pool the slice belongs to."),
        AGE,
    ),
    cells(_resource_slice_cells),
)

_DEVICE_CLASS: Printer[resource_m.DeviceClass] = Printer(
    (name_col(), AGE), cells(lambda c, now: [name_of(c), age(created(c), now)])
)


PRINTERS: Printers = {
    resource_v1.ResourceClaim: _RESOURCE_CLAIM,
    resource_v1.ResourceSlice: _RESOURCE_SLICE,
    resource_v1.DeviceClass: _DEVICE_CLASS,
}
