"""What one kind does differently on create, update and delete: kube-apiserver's per-resource
strategies (defaulting, generated fields, subresources that change one part, deletion that only
starts), each kind's in one class, looked up by `strategy_of`."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

import msgspec
from lightkube.models import apps_v1 as apps
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import apiextensions_v1, apps_v1, batch_v1, core_v1, policy_v1

from kubesched.api.errors import FieldError
from kubesched.cluster.errors import ApiError, Forbidden, conflict
from kubesched.cluster.memory.defaults import default_node, default_pod_spec

INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")  # never deleted
DEFAULT_TERMINATION_GRACE_SECONDS = 30
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


NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # the label the API server keeps equal to a namespace's name


class Strategy:
    """The behaviour every kind shares; a kind with its own rules overrides a hook."""

    tracks_generation = False  # metadata.generation: 1 on create, one more on each change of the spec

    def default(self, obj: Any) -> None:
        """Fill the defaults of an object being written (the store's own copy), on create and on
        every update, as kube-apiserver defaults every object it decodes."""

    def prepare_for_create(self, obj: Any) -> None:
        """Fill the generated fields of a new object (its metadata complete), after `default`."""

    def errors_on_create(self, obj: Any) -> list[FieldError]:
        return []

    def subresource_update(self, current: Any, new: Any, subresource: str) -> Any | None:
        """The object an update of a subresource other than status makes (None: not this kind's)."""
        return None

    def refuse_delete(self, current: Any) -> ApiError | None:
        """Why `current` may not be deleted at all (None: it may)."""
        return None

    def begin_delete(self, current: Any, stamp: datetime) -> Any | None:
        """The object a delete turns `current` into when the kind's deletion only starts
        (None: the generic rules apply)."""
        return None

    def deletion_grace(self, current: Any, requested: int | None) -> int:
        """The seconds `current` stays, being deleted, before it goes (0: at once, unless a
        finalizer holds it)."""
        return 0

    def deleted_during_update(self, obj: Any) -> bool:
        """Whether an update that leaves `obj` so ends its deletion."""
        meta = obj.metadata
        return meta.deletionTimestamp is not None and not meta.finalizers and not meta.deletionGracePeriodSeconds


class GenerationStrategy(Strategy):
    """A kind whose controllers report the generation they have seen (workloads, pods, budgets)."""

    tracks_generation = True


class PodStrategy(GenerationStrategy):
    def deletion_grace(self, current: Any, requested: int | None) -> int:
        """A bound pod that has not finished is stopped by its kubelet first: for the grace the
        delete asks, else the pod's own `terminationGracePeriodSeconds`, else 30 s."""
        if not current.spec.nodeName or (current.status and current.status.phase in ("Succeeded", "Failed")):
            return 0
        grace = requested if requested is not None else current.spec.terminationGracePeriodSeconds
        return max(0, grace if grace is not None else DEFAULT_TERMINATION_GRACE_SECONDS)


class NodeStrategy(Strategy):
    def prepare_for_create(self, obj: Any) -> None:
        default_node(obj)


class NamespaceStrategy(Strategy):
    """A namespace carries the `kubernetes` finalizer from creation and a label naming it;
    deleting it marks it Terminating, and it goes once the namespace controller has emptied it
    and finalized it."""

    def default(self, obj: Any) -> None:
        meta = obj.metadata
        meta.labels = {**(meta.labels or {}), NAMESPACE_NAME_LABEL: meta.name}

    def prepare_for_create(self, obj: Any) -> None:
        spec = obj.spec or m.NamespaceSpec()
        finalizers = list(spec.finalizers or [])
        if NAMESPACE_FINALIZER not in finalizers:
            finalizers.append(NAMESPACE_FINALIZER)
        obj.spec = msgspec.structs.replace(spec, finalizers=finalizers)
        obj.status = m.NamespaceStatus(phase="Active")

    def subresource_update(self, current: Any, new: Any, subresource: str) -> Any | None:
        if subresource != "finalize":
            return None
        finalizers = (new.spec.finalizers if new.spec else None) or []
        return msgspec.structs.replace(
            current,
            metadata=msgspec.structs.replace(current.metadata),
            spec=msgspec.structs.replace(current.spec or m.NamespaceSpec(), finalizers=finalizers),
        )

    def refuse_delete(self, current: Any) -> ApiError | None:
        name = current.metadata.name
        if name in INITIAL_NAMESPACES:  # as kube-apiserver's NamespaceLifecycle admission
            return Forbidden(
                f'namespaces "{name}" is forbidden: this namespace may not be deleted', kind="namespaces", name=name
            )
        return None

    def begin_delete(self, current: Any, stamp: datetime) -> Any | None:
        if not (current.spec and current.spec.finalizers):
            return None
        meta = current.metadata
        if meta.deletionTimestamp is not None:
            raise conflict("namespaces", meta.name, NAMESPACE_BEING_PURGED, kind="namespaces")
        return msgspec.structs.replace(
            current,
            metadata=msgspec.structs.replace(meta, deletionTimestamp=stamp, deletionGracePeriodSeconds=0),
            status=m.NamespaceStatus(
                phase="Terminating", conditions=(current.status.conditions if current.status else None)
            ),
        )

    def deleted_during_update(self, obj: Any) -> bool:
        return super().deleted_during_update(obj) and not (obj.spec and obj.spec.finalizers)


class SecretStrategy(Strategy):
    """A Secret's `stringData` is written into `data` (base64-encoded, its keys winning) and never
    stored; the type defaults to Opaque."""

    def default(self, obj: Any) -> None:
        if obj.stringData:
            encoded = {k: base64.b64encode(v.encode()).decode() for k, v in obj.stringData.items()}
            obj.data = {**(obj.data or {}), **encoded}
        obj.stringData = None
        obj.type = obj.type or SECRET_OPAQUE


def _default_template(template: Any) -> None:
    if template is not None and template.spec is not None:
        default_pod_spec(template.spec)


class ReplicaSetStrategy(GenerationStrategy):
    def default(self, obj: Any) -> None:
        spec = obj.spec
        if spec is not None:
            if spec.replicas is None:
                spec.replicas = 1
            _default_template(spec.template)


class DeploymentStrategy(GenerationStrategy):
    def default(self, obj: Any) -> None:
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


class StatefulSetStrategy(GenerationStrategy):
    def default(self, obj: Any) -> None:
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


class DaemonSetStrategy(GenerationStrategy):
    def default(self, obj: Any) -> None:
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


class JobStrategy(GenerationStrategy):
    """Job defaults, and the selector the API server generates from the Job's uid (unless
    `manualSelector`), with the labels it puts on the pod template to match."""

    def default(self, obj: Any) -> None:
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

    def prepare_for_create(self, obj: Any) -> None:
        spec = obj.spec
        if spec is None:
            return
        meta = obj.metadata
        if not spec.manualSelector and spec.template is not None:
            generated = {JOB_CONTROLLER_UID: meta.uid, JOB_NAME: meta.name}
            legacy = dict(zip(LEGACY_JOB_LABELS, (meta.uid, meta.name), strict=True))
            template_meta = spec.template.metadata or meta_v1.ObjectMeta()
            template_meta.labels = {**(template_meta.labels or {}), **legacy, **generated}
            spec.template.metadata = template_meta
            spec.selector = meta_v1.LabelSelector(matchLabels={JOB_CONTROLLER_UID: meta.uid})

    def errors_on_create(self, obj: Any) -> list[FieldError]:
        template = obj.spec.template if obj.spec else None
        policy = template.spec.restartPolicy if template and template.spec else None
        if policy not in ("OnFailure", "Never"):
            return [FieldError.not_supported("spec.template.spec.restartPolicy", policy, ("OnFailure", "Never"))]
        return []


_DEFAULT = Strategy()
_GENERATION = GenerationStrategy()
STRATEGIES: dict[type[Any], Strategy] = {
    core_v1.Pod: PodStrategy(),
    core_v1.Node: NodeStrategy(),
    core_v1.ReplicationController: _GENERATION,
    policy_v1.PodDisruptionBudget: _GENERATION,
    apiextensions_v1.CustomResourceDefinition: _GENERATION,
    core_v1.Namespace: NamespaceStrategy(),
    core_v1.Secret: SecretStrategy(),
    apps_v1.ReplicaSet: ReplicaSetStrategy(),
    apps_v1.Deployment: DeploymentStrategy(),
    apps_v1.StatefulSet: StatefulSetStrategy(),
    apps_v1.DaemonSet: DaemonSetStrategy(),
    batch_v1.Job: JobStrategy(),
}


def strategy_of(cls: type[Any]) -> Strategy:
    return STRATEGIES.get(cls, _DEFAULT)
