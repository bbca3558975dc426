"""DefaultBinder: bind the pod by POSTing a Binding to the pod's `binding` subresource."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lightkube.models.core_v1 import ObjectReference
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Binding

from kubesched.plugin import BindPlugin, Status
from kubesched.plugin.cluster import ApiError

if TYPE_CHECKING:
    from kubesched.plugin import CycleState, Handle, PodInfo

NAME = "DefaultBinder"


def make_binding(pod: PodInfo, node_name: str) -> Binding:
    """The Binding for `pod` to `node_name`; the pod's UID makes the API server refuse it when the
    pod was deleted and recreated under the same name meanwhile."""
    return Binding(
        metadata=ObjectMeta(name=pod.name, namespace=pod.namespace, uid=pod.uid or None),
        target=ObjectReference(kind="Node", name=node_name),
    )


class DefaultBinder(BindPlugin):
    name: ClassVar[str] = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        try:
            await self.handle.cluster.bind(make_binding(pod, node_name), namespace=pod.namespace)
        except ApiError as err:
            return Status.error(err.message)
        return None


def new(args: object, handle: Handle) -> DefaultBinder:
    """DefaultBinder takes no arguments."""
    return DefaultBinder(handle)
