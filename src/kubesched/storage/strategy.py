"""What one kind does differently on create, update and delete: kube-apiserver's per-resource
strategies (defaulting, generated fields, validation, subresources that change one part, deletion
that only starts, what a change means to the trace), each kind's in one class. `STRATEGIES` holds
the built-in kinds'; a store adds its CRDs' and custom resources' own."""

from __future__ import annotations

import base64
import weakref
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Generic, TypeVar, cast

import msgspec
from lightkube.models import apps_v1 as apps
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.models import policy_v1 as policy_models
from lightkube.resources import apiextensions_v1, apps_v1, batch_v1, core_v1, policy_v1
from lightkube.resources import rbac_authorization_v1 as rbac_v1

from kubesched.api.errors import REQUIRED, FieldError
from kubesched.api.objects import Served, meta_of, name_of
from kubesched.api.resources import cpu_and_memory
from kubesched.cluster.codec import copy_object
from kubesched.cluster.custom import schema_errors
from kubesched.cluster.errors import ApiError, Forbidden, conflict
from kubesched.cluster.kinds import Kind
from kubesched.cluster.protocol import ADDED, DELETED, MODIFIED
from kubesched.storage import scale
from kubesched.storage.binding import Binder
from kubesched.storage.crds import crd_errors, established
from kubesched.storage.defaults import DEFAULT_TERMINATION_GRACE_SECONDS, default_node, default_pod_spec
from kubesched.storage.eviction import dry_run_of, evict
from kubesched.storage.podspecs import POD_SPECS, PodSpecCache
from kubesched.storage.subresources import CREATE, STATUS, Action, Delegated, Facet, Part, Subresource, Unserved
from kubesched.storage.validation import (
    meta_errors,
    namespace_errors,
    node_errors,
    pod_update_errors,
)
from kubesched.trace import Tracer

INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")  # never deleted
NAMESPACE_FINALIZER = "kubernetes"  # the namespace controller's, in spec.finalizers
NAMESPACE_BEING_PURGED = (
    "The system is ensuring all content is removed from this namespace.  Upon completion, this "
    "namespace will automatically be purged by the system."
)
JOB_CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_JOB_LABELS = ("controller-uid", "job-name")  # written beside the prefixed ones, as upstream still does
DEFAULT_REVISION_HISTORY = 10
DEFAULT_PROGRESS_DEADLINE_SECONDS = 600
DEFAULT_JOB_BACKOFF_LIMIT = 6
SECRET_OPAQUE = "Opaque"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"

S = TypeVar("S", bound=Served)  # the objects a strategy is for


NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # the label the API server keeps equal to a namespace's name


CONTAINER_SUBRESOURCES = ("attach", "exec", "log", "portforward")  # what a real kubelet would serve


def _no_containers(obj: Served) -> str:
    pod = cast(core_v1.Pod, obj)  # served beneath pods only
    node = pod.spec.nodeName if pod.spec else None
    where = f'the fake kubelet of node "{node}"' if node else "no kubelet (the pod is not scheduled)"
    return (
        f"is not available for pod {name_of(pod)}: {where} runs no containers in kubesched's "
        "embedded cluster, so there are no logs, exec, attach or port-forward"
    )


class Strategy(Generic[S]):
    """The behaviour every kind shares; a kind with its own rules overrides a hook. A create runs
    `copy_for_create`, `default`, `prepare_for_create`, the admission chain, then `validate`; an
    update `default` then `validate_update`."""

    tracks_generation = False  # metadata.generation: 1 on create, one more on each change of the spec
    served: tuple[Subresource, ...] = ()  # the kind's subresources besides `status`

    def subresources(self, kind: Kind) -> dict[str, Subresource]:
        """What the kind serves beneath its objects: `status` when the kind has one, and `served`."""
        parts = (STATUS,) if kind.has_status else ()
        return {s.name: s for s in (*parts, *self.served)}

    def copy_for_create(self, obj: S) -> S:
        """The store's own copy of an object handed to create (the caller's is never kept)."""
        return copy_object(obj)

    def default(self, obj: S) -> None:
        """Fill the defaults of an object being written (the store's own copy), on create and on
        every update, as kube-apiserver defaults every object it decodes."""

    def prepare_for_create(self, obj: S, now: datetime) -> None:
        """Fill the generated fields of a new object (its metadata complete), after `default`."""

    def validate(self, obj: S) -> list[FieldError]:
        """What is wrong with an object being created (or restored)."""
        return meta_errors(obj.metadata)

    def validate_update(self, current: S, new: S) -> list[FieldError]:
        """What is wrong with `new` replacing `current`."""
        return self.validate(new)

    def created(self, obj: S) -> None:
        """Called once a new object is stored."""

    def removed(self, obj: S) -> None:
        """Called once an object is gone from the store."""

    def trace(self, tracer: Tracer, type_: str, obj: S, old: S | None, *, rv: int) -> None:
        """Emit what a change of an object of this kind means to a reader of the trace."""

    def subresource_update(self, current: S, new: S, subresource: str) -> S | None:
        """The object an update of a subresource other than status makes (None: not this kind's)."""
        return None

    def refuse_delete(self, current: S) -> ApiError | None:
        """Why `current` may not be deleted at all (None: it may)."""
        return None

    def begin_delete(self, current: S, stamp: datetime) -> S | None:
        """The object a delete turns `current` into when the kind's deletion only starts
        (None: the generic rules apply)."""
        return None

    def deletion_grace(self, current: S, requested: int | None) -> int:
        """The seconds `current` stays, being deleted, before it goes (0: at once, unless a
        finalizer holds it)."""
        return 0

    def deleted_during_update(self, obj: Any) -> bool:  # Any: a stored object, its metadata set
        """Whether an update that leaves `obj` so ends its deletion."""
        meta = obj.metadata
        return meta.deletionTimestamp is not None and not meta.finalizers and not meta.deletionGracePeriodSeconds


class GenerationStrategy(Strategy[S]):
    """A kind whose controllers report the generation they have seen (workloads, pods, budgets)."""

    tracks_generation = True


class PodStrategy(GenerationStrategy[core_v1.Pod]):
    """A pod's spec is defaulted once per distinct spec and shared (see `podspecs`); a new pod's
    status is reset to Pending with its QoS class, and a gated pod's PodScheduled condition says
    so; an update may change only what upstream lets change."""

    def __init__(self, specs: PodSpecCache) -> None:
        self._specs = specs
        self.served = (
            Action("binding", core_v1.Binding, Binder()),
            Action("eviction", policy_models.Eviction, evict, dry_run_of),
            *(Unserved(name, _no_containers) for name in CONTAINER_SUBRESOURCES),
        )

    def copy_for_create(self, obj: core_v1.Pod) -> core_v1.Pod:
        """The metadata copied; the caller's spec is held only until `default` puts the shared
        prepared spec in its place (never changed meanwhile); the status is the server's to set."""
        meta = copy_object(obj.metadata) if obj.metadata is not None else meta_v1.ObjectMeta()
        return core_v1.Pod(metadata=meta, spec=obj.spec)

    def default(self, obj: core_v1.Pod) -> None:
        if obj.spec is not None:
            obj.spec = self._specs.prepare(obj.spec).spec

    def prepare_for_create(self, obj: core_v1.Pod, now: datetime) -> None:
        if obj.spec is None:
            return
        status = self._specs.prepare(obj.spec).pending
        if obj.spec.schedulingGates:
            gated = m.PodCondition(
                type="PodScheduled",
                status="False",
                reason="SchedulingGated",
                message=SCHEDULING_GATED_MESSAGE,
                lastTransitionTime=now,
            )
            status = msgspec.structs.replace(status, conditions=[gated])
        obj.status = status

    def validate(self, obj: core_v1.Pod) -> list[FieldError]:
        errors = super().validate(obj)
        spec = obj.spec
        if spec is None:
            return [*errors, FieldError("spec", None, "", kind=REQUIRED)]
        return [*errors, *self._specs.prepare(spec).errors]

    def validate_update(self, current: core_v1.Pod, new: core_v1.Pod) -> list[FieldError]:
        errors = self.validate(new)
        if new.spec is not None and current.spec is not None:
            errors += pod_update_errors(current.spec, new.spec)
        return errors

    # Any: stored pods, their metadata set (and their spec, where a change of one is traced)
    def trace(self, tracer: Tracer, type_: str, obj: Any, old: Any | None, *, rv: int) -> None:
        meta = obj.metadata
        pod = f"{meta.namespace}/{meta.name}"
        node = obj.spec.nodeName if obj.spec else None
        if type_ == ADDED:  # what a replay of the trace draws the pod with
            tracer.emit(
                "store.pod.added",
                pod=pod,
                node=node,
                rv=rv,
                requests=cpu_and_memory(obj),
                scheduler=obj.spec.schedulerName or "default-scheduler",
                priority=obj.spec.priority or 0,
            )
        elif type_ != MODIFIED or old is None:
            tracer.emit(f"store.pod.{type_.lower()}", pod=pod, node=node, rv=rv)
        elif node and not old.spec.nodeName:
            tracer.emit("store.pod.bound", pod=pod, node=node, rv=rv)
        elif meta.deletionTimestamp is not None and old.metadata.deletionTimestamp is None:
            tracer.emit("store.pod.terminating", pod=pod, node=node, grace=meta.deletionGracePeriodSeconds)
        elif obj.status and old.status and obj.status.phase != old.status.phase:
            tracer.emit("store.pod.phase", pod=pod, node=node, phase=obj.status.phase, reason=obj.status.reason)

    def deletion_grace(self, current: Any, requested: int | None) -> int:  # Any: a stored pod, its spec set
        """A bound pod that has not finished is stopped by its kubelet first: for the grace the
        delete asks, else the pod's own `terminationGracePeriodSeconds`, else 30 s."""
        if not current.spec.nodeName or (current.status and current.status.phase in ("Succeeded", "Failed")):
            return 0
        grace = requested if requested is not None else current.spec.terminationGracePeriodSeconds
        return max(0, grace if grace is not None else DEFAULT_TERMINATION_GRACE_SECONDS)


class NodeStrategy(Strategy[core_v1.Node]):
    def prepare_for_create(self, obj: core_v1.Node, now: datetime) -> None:
        default_node(obj)

    def validate(self, obj: core_v1.Node) -> list[FieldError]:
        return node_errors(obj)

    # Any: a stored node, its metadata set
    def trace(self, tracer: Tracer, type_: str, obj: Any, old: core_v1.Node | None, *, rv: int) -> None:
        if type_ == DELETED:
            tracer.emit("store.node.deleted", node=obj.metadata.name, rv=rv)
            return
        status, spec = obj.status, obj.spec
        allocatable = (status.allocatable if status is not None else None) or {}
        taints = (spec.taints if spec is not None else None) or ()
        tracer.emit(  # what a replay of the trace draws the node with
            f"store.node.{type_.lower()}",
            node=obj.metadata.name,
            rv=rv,
            allocatable={k: str(allocatable[k]) for k in ("cpu", "memory", "pods") if k in allocatable},
            cordoned=bool(spec is not None and spec.unschedulable),
            taints=[{"key": t.key, "value": t.value or "", "effect": t.effect} for t in taints],
        )


class NamespaceStrategy(Strategy[core_v1.Namespace]):
    """A namespace carries the `kubernetes` finalizer from creation and a label naming it;
    deleting it marks it Terminating, and it goes once the namespace controller has emptied it
    and finalized it (through its `finalize` subresource)."""

    served = (Part("finalize"),)

    def default(self, obj: core_v1.Namespace) -> None:
        meta = meta_of(obj)
        meta.labels = {**(meta.labels or {}), NAMESPACE_NAME_LABEL: meta.name}

    def prepare_for_create(self, obj: core_v1.Namespace, now: datetime) -> None:
        spec = obj.spec or m.NamespaceSpec()
        finalizers = list(spec.finalizers or [])
        if NAMESPACE_FINALIZER not in finalizers:
            finalizers.append(NAMESPACE_FINALIZER)
        obj.spec = msgspec.structs.replace(spec, finalizers=finalizers)
        obj.status = m.NamespaceStatus(phase="Active")

    def validate(self, obj: core_v1.Namespace) -> list[FieldError]:
        return namespace_errors(obj)

    def subresource_update(
        self, current: core_v1.Namespace, new: core_v1.Namespace, subresource: str
    ) -> core_v1.Namespace | None:
        if subresource != "finalize":
            return None
        finalizers = (new.spec.finalizers if new.spec else None) or []
        return msgspec.structs.replace(
            current,
            metadata=msgspec.structs.replace(meta_of(current)),
            spec=msgspec.structs.replace(current.spec or m.NamespaceSpec(), finalizers=finalizers),
        )

    def refuse_delete(self, current: core_v1.Namespace) -> ApiError | None:
        name = name_of(current)
        if name in INITIAL_NAMESPACES:  # as kube-apiserver's NamespaceLifecycle admission
            return Forbidden(
                f'namespaces "{name}" is forbidden: this namespace may not be deleted', kind="namespaces", name=name
            )
        return None

    def begin_delete(self, current: core_v1.Namespace, stamp: datetime) -> core_v1.Namespace | None:
        if not (current.spec and current.spec.finalizers):
            return None
        meta = meta_of(current)
        if meta.deletionTimestamp is not None:
            raise conflict("namespaces", name_of(current), NAMESPACE_BEING_PURGED, kind="namespaces")
        return msgspec.structs.replace(
            current,
            metadata=msgspec.structs.replace(meta, deletionTimestamp=stamp, deletionGracePeriodSeconds=0),
            status=m.NamespaceStatus(
                phase="Terminating", conditions=(current.status.conditions if current.status else None)
            ),
        )

    def deleted_during_update(self, obj: core_v1.Namespace) -> bool:
        return super().deleted_during_update(obj) and not (obj.spec and obj.spec.finalizers)


class SecretStrategy(Strategy[core_v1.Secret]):
    """A Secret's `stringData` is written into `data` (base64-encoded, its keys winning) and never
    stored; the type defaults to Opaque."""

    def default(self, obj: core_v1.Secret) -> None:
        if obj.stringData:
            encoded = {k: base64.b64encode(v.encode()).decode() for k, v in obj.stringData.items()}
            obj.data = {**(obj.data or {}), **encoded}
        obj.stringData = None
        obj.type = obj.type or SECRET_OPAQUE


def _default_template(template: m.PodTemplateSpec | None) -> None:
    if template is not None and template.spec is not None:
        default_pod_spec(template.spec)


class ScaledStrategy(GenerationStrategy[S]):
    """A workload whose replicas are read and set through its `scale` subresource."""

    served = (Facet("scale", scale.read_scale, scale.write_scale, scale.patch_scale),)


class ServiceAccountStrategy(Strategy[core_v1.ServiceAccount]):
    """A ServiceAccount's `token` subresource: the API server signs the token (see `Delegated`)."""

    served = (Delegated("token", frozenset({CREATE})),)


class ReplicaSetStrategy(ScaledStrategy[apps_v1.ReplicaSet]):
    def default(self, obj: apps_v1.ReplicaSet) -> None:
        spec = obj.spec
        if spec is not None:
            if spec.replicas is None:
                spec.replicas = 1
            _default_template(spec.template)


class DeploymentStrategy(ScaledStrategy[apps_v1.Deployment]):
    def default(self, obj: apps_v1.Deployment) -> None:
        spec = obj.spec
        if spec is None:
            return
        if spec.replicas is None:
            spec.replicas = 1
        strategy = spec.strategy or apps.DeploymentStrategy()
        if strategy.type is None:
            strategy.type = "RollingUpdate"
        if strategy.type == "RollingUpdate":
            rolling = strategy.rollingUpdate or apps.RollingUpdateDeployment()
            rolling.maxSurge = "25%" if rolling.maxSurge is None else rolling.maxSurge
            rolling.maxUnavailable = "25%" if rolling.maxUnavailable is None else rolling.maxUnavailable
            strategy.rollingUpdate = rolling
        spec.strategy = strategy
        if spec.revisionHistoryLimit is None:
            spec.revisionHistoryLimit = DEFAULT_REVISION_HISTORY
        if spec.progressDeadlineSeconds is None:
            spec.progressDeadlineSeconds = DEFAULT_PROGRESS_DEADLINE_SECONDS
        _default_template(spec.template)


class StatefulSetStrategy(ScaledStrategy[apps_v1.StatefulSet]):
    def default(self, obj: apps_v1.StatefulSet) -> None:
        spec = obj.spec
        if spec is None:
            return
        if spec.replicas is None:
            spec.replicas = 1
        spec.podManagementPolicy = spec.podManagementPolicy or "OrderedReady"
        update = spec.updateStrategy or apps.StatefulSetUpdateStrategy()
        update.type = update.type or "RollingUpdate"
        if update.type == "RollingUpdate":
            update.rollingUpdate = update.rollingUpdate or apps.RollingUpdateStatefulSetStrategy(partition=0)
        spec.updateStrategy = update
        if spec.revisionHistoryLimit is None:
            spec.revisionHistoryLimit = DEFAULT_REVISION_HISTORY
        _default_template(spec.template)


class DaemonSetStrategy(GenerationStrategy[apps_v1.DaemonSet]):
    def default(self, obj: apps_v1.DaemonSet) -> None:
        spec = obj.spec
        if spec is None:
            return
        update = spec.updateStrategy or apps.DaemonSetUpdateStrategy()
        update.type = update.type or "RollingUpdate"
        if update.type == "RollingUpdate":
            rolling = update.rollingUpdate or apps.RollingUpdateDaemonSet()
            rolling.maxUnavailable = 1 if rolling.maxUnavailable is None else rolling.maxUnavailable
            rolling.maxSurge = 0 if rolling.maxSurge is None else rolling.maxSurge
            update.rollingUpdate = rolling
        spec.updateStrategy = update
        if spec.revisionHistoryLimit is None:
            spec.revisionHistoryLimit = DEFAULT_REVISION_HISTORY
        _default_template(spec.template)


class JobStrategy(GenerationStrategy[batch_v1.Job]):
    """Job defaults, and the selector the API server generates from the Job's uid (unless
    `manualSelector`), with the labels it puts on the pod template to match."""

    def default(self, obj: batch_v1.Job) -> None:
        spec = obj.spec
        if spec is None:
            return
        if spec.completions is None and spec.parallelism is None:
            spec.completions = 1
        if spec.parallelism is None:
            spec.parallelism = 1
        if spec.backoffLimit is None:
            spec.backoffLimit = DEFAULT_JOB_BACKOFF_LIMIT
        spec.completionMode = spec.completionMode or "NonIndexed"
        if spec.suspend is None:
            spec.suspend = False
        spec.podReplacementPolicy = spec.podReplacementPolicy or "TerminatingOrFailed"
        _default_template(spec.template)

    def prepare_for_create(self, obj: batch_v1.Job, now: datetime) -> None:
        spec = obj.spec
        if spec is None:
            return
        meta = meta_of(obj)
        if not spec.manualSelector and spec.template is not None:
            generated = {JOB_CONTROLLER_UID: meta.uid, JOB_NAME: meta.name}
            legacy = dict(zip(LEGACY_JOB_LABELS, (meta.uid, meta.name), strict=True))
            template_meta = spec.template.metadata or meta_v1.ObjectMeta()
            template_meta.labels = {**(template_meta.labels or {}), **legacy, **generated}
            spec.template.metadata = template_meta
            spec.selector = meta_v1.LabelSelector(matchLabels={JOB_CONTROLLER_UID: meta.uid})

    def validate(self, obj: batch_v1.Job) -> list[FieldError]:
        errors = super().validate(obj)
        template = obj.spec.template if obj.spec else None
        policy = template.spec.restartPolicy if template and template.spec else None
        if policy not in ("OnFailure", "Never"):
            errors.append(FieldError.not_supported("spec.template.spec.restartPolicy", policy, ("OnFailure", "Never")))
        return errors


class CustomResourceDefinitionStrategy(GenerationStrategy[apiextensions_v1.CustomResourceDefinition]):
    """A new CRD is checked against the kinds already served and, accepted, established at once;
    storing it starts serving its kind (`serve`), removing it stops (`withdraw`). The two are the
    store's methods, held weakly: the store holds its strategies, and a store dropped is freed at
    once rather than by the cycle collector."""

    def __init__(
        self,
        *,
        served: Mapping[tuple[str, str, str], Kind],
        serve: Callable[[apiextensions_v1.CustomResourceDefinition], None],
        withdraw: Callable[[apiextensions_v1.CustomResourceDefinition], None],
    ) -> None:
        self._served = served
        self._serve = weakref.WeakMethod(serve)
        self._withdraw = weakref.WeakMethod(withdraw)

    def prepare_for_create(self, obj: apiextensions_v1.CustomResourceDefinition, now: datetime) -> None:
        if not crd_errors(obj, self._served):
            obj.status = established(obj, now)

    def validate(self, obj: apiextensions_v1.CustomResourceDefinition) -> list[FieldError]:
        return [*super().validate(obj), *crd_errors(obj, self._served)]

    def validate_update(
        self, current: apiextensions_v1.CustomResourceDefinition, new: apiextensions_v1.CustomResourceDefinition
    ) -> list[FieldError]:
        return super().validate(new)

    def created(self, obj: apiextensions_v1.CustomResourceDefinition) -> None:
        if (serve := self._serve()) is not None:
            serve(obj)

    def removed(self, obj: apiextensions_v1.CustomResourceDefinition) -> None:
        if (withdraw := self._withdraw()) is not None:
            withdraw(obj)


class CustomResourceStrategy(GenerationStrategy[Served]):
    """A custom resource, checked against its CRD's openAPIV3Schema."""

    def __init__(self, schema: dict[str, object]) -> None:
        self._schema = schema

    def validate(self, obj: Served) -> list[FieldError]:
        errors = super().validate(obj)
        if self._schema:
            errors += schema_errors(self._schema, msgspec.to_builtins(obj))
        return errors


class RbacStrategy(Strategy[Served]):
    """Roles and bindings: a name need only be a path segment (`system:discovery`)."""

    def validate(self, obj: Served) -> list[FieldError]:
        return meta_errors(obj.metadata, path_segment=True)


DEFAULT_STRATEGY = Strategy[Served]()
_RBAC = RbacStrategy()
# Any: each kind's strategy is for that kind's objects, which one dict cannot say
STRATEGIES: dict[type[Served], Strategy[Any]] = {
    core_v1.Pod: PodStrategy(POD_SPECS),
    core_v1.Node: NodeStrategy(),
    core_v1.ReplicationController: ScaledStrategy[core_v1.ReplicationController](),
    core_v1.ServiceAccount: ServiceAccountStrategy(),
    policy_v1.PodDisruptionBudget: GenerationStrategy[policy_v1.PodDisruptionBudget](),
    core_v1.Namespace: NamespaceStrategy(),
    core_v1.Secret: SecretStrategy(),
    apps_v1.ReplicaSet: ReplicaSetStrategy(),
    apps_v1.Deployment: DeploymentStrategy(),
    apps_v1.StatefulSet: StatefulSetStrategy(),
    apps_v1.DaemonSet: DaemonSetStrategy(),
    batch_v1.Job: JobStrategy(),
    rbac_v1.Role: _RBAC,
    rbac_v1.ClusterRole: _RBAC,
    rbac_v1.RoleBinding: _RBAC,
    rbac_v1.ClusterRoleBinding: _RBAC,
}


def strategy_of(cls: type[Served]) -> Strategy[Any]:  # Any: as STRATEGIES holds them
    return STRATEGIES.get(cls, DEFAULT_STRATEGY)
