"""The kinds the store serves: their API names, scope and selectable fields."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lightkube.core.resource import NamespacedResource
from lightkube.resources import coordination_v1, core_v1, events_v1, policy_v1, scheduling_v1


def _meta_fields() -> dict[str, Callable[[Any], str]]:
    return {
        "metadata.name": lambda o: o.metadata.name or "",
        "metadata.namespace": lambda o: o.metadata.namespace or "",
    }


@dataclass(frozen=True, eq=False)
class Kind:
    """One served kind: `cls` is its lightkube resource class."""

    cls: type[Any]
    plural: str
    group: str
    version: str
    kind: str
    namespaced: bool
    fields: dict[str, Callable[[Any], str]] = field(default_factory=_meta_fields)

    @property
    def qualified(self) -> str:
        """The resource name as API messages print it: `pods`, `poddisruptionbudgets.policy`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _pod_fields() -> dict[str, Callable[[Any], str]]:
    return {
        **_meta_fields(),
        "spec.nodeName": lambda p: p.spec.nodeName or "",
        "spec.schedulerName": lambda p: p.spec.schedulerName or "",
        "spec.restartPolicy": lambda p: p.spec.restartPolicy or "",
        "status.phase": lambda p: (p.status.phase if p.status else None) or "",
        "status.nominatedNodeName": lambda p: (p.status.nominatedNodeName if p.status else None) or "",
    }


def _make(cls: type[Any], fields: dict[str, Callable[[Any], str]] | None = None) -> Kind:
    info = cls._api_info
    return Kind(
        cls=cls,
        plural=info.plural,
        group=info.resource.group,
        version=info.resource.version,
        kind=info.resource.kind,
        namespaced=issubclass(cls, NamespacedResource),
        fields=fields or _meta_fields(),
    )


KINDS: dict[type[Any], Kind] = {
    k.cls: k
    for k in (
        _make(core_v1.Namespace),
        _make(
            core_v1.Node,
            {**_meta_fields(), "spec.unschedulable": lambda n: str(bool(n.spec and n.spec.unschedulable)).lower()},
        ),
        _make(core_v1.Pod, _pod_fields()),
        _make(core_v1.Event),
        _make(events_v1.Event),
        _make(scheduling_v1.PriorityClass),
        _make(policy_v1.PodDisruptionBudget),
        _make(coordination_v1.Lease),
    )
}


def kind_of(cls: type[Any]) -> Kind:
    """The `Kind` for a resource class, or a TypeError for one the store does not serve."""
    try:
        return KINDS[cls]
    except KeyError:
        raise TypeError(f"kind {getattr(cls, '__name__', cls)!r} is not served") from None
