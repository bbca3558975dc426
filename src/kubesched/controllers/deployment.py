"""The Deployment controller (upstream `pkg/controller/deployment`): one ReplicaSet per pod
template (named by its pod-template-hash), rolled by the strategy — RollingUpdate within
maxSurge/maxUnavailable, or Recreate — and the status and conditions `kubectl rollout status`
reads."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime

import msgspec
from lightkube.models import apps_v1 as apps
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import apps_v1, core_v1

from kubesched.api.objects import Named, key_of, meta_of, name_of, namespace_of, present
from kubesched.clock.base import epoch_seconds, rfc3339
from kubesched.cluster import AlreadyExists, NotFound
from kubesched.cluster.codec import encode
from kubesched.cluster.events import NORMAL
from kubesched.controllers.base import ControllerContext, enqueue_on_change, patch_observed, work, write_status
from kubesched.controllers.informers import Key
from kubesched.controllers.owners import adoption_patch, controller_of, controller_reference, uid_of
from kubesched.controllers.pods import is_active
from kubesched.controllers.replicaset import labels_of, selector_of
from kubesched.controllers.workqueue import WorkQueue

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of generated names (no vowels, no 0/1/3)


def template_hash(template: object, collision_count: int | None = None) -> str:
    """The pod-template-hash of a template: FNV-1a (32 bits) over its JSON and the collision
    count, its decimal digits spelt in the safe alphabet (upstream hashes Go's printed form of
    the template, so the values differ; the shape and the use are the same)."""
    h = 0x811C9DC5
    data = encode(template) + (str(collision_count).encode() if collision_count else b"")
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in str(h))


def _without_hash(template: m.PodTemplateSpec) -> m.PodTemplateSpec:
    meta = template.metadata or meta_v1.ObjectMeta()
    labels = {k: v for k, v in (meta.labels or {}).items() if k != POD_TEMPLATE_HASH}
    return msgspec.structs.replace(template, metadata=msgspec.structs.replace(meta, labels=labels or None))


def _scaled(value: int | str | None, total: int, *, round_up: bool) -> int:
    """An IntOrString (an absolute number or a percentage of `total`)."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    text = value.strip()
    if text.endswith("%"):
        share = int(text[:-1]) * total / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(text)


def surge_and_unavailable(d: apps.Deployment) -> tuple[int, int]:
    """maxSurge (rounded up) and maxUnavailable (rounded down) for the deployment's replicas;
    both zero becomes unavailable 1 (upstream's `ResolveFenceposts`)."""
    spec = _spec(d)
    replicas = spec.replicas or 0
    rolling = spec.strategy.rollingUpdate if spec.strategy else None
    if spec.strategy is None or spec.strategy.type != "RollingUpdate" or rolling is None:
        return 0, 0
    surge = _scaled(rolling.maxSurge, replicas, round_up=True)
    unavailable = _scaled(rolling.maxUnavailable, replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, min(unavailable, replicas)


def _spec(d: apps.Deployment) -> apps.DeploymentSpec:
    return present(d.spec, "the deployment's spec")


def _revision(rs: Named) -> int:
    try:
        return int((meta_of(rs).annotations or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def _spec_replicas(rs: apps.ReplicaSet) -> int:
    return present(rs.spec, "the replica set's spec").replicas or 0


def _set_template(rs: apps.ReplicaSet) -> m.PodTemplateSpec | None:
    return present(rs.spec, "the replica set's spec").template


def _status(rs: apps.ReplicaSet, field: str) -> int:
    if rs.status is None:
        return 0
    count: int | None = getattr(rs.status, field)
    return count or 0


def _created(rs: Named) -> tuple[float, str | None]:
    meta = meta_of(rs)
    return epoch_seconds(meta.creationTimestamp), meta.name


class DeploymentController:
    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        self._deployments = ctx.informers(apps_v1.Deployment)
        self._sets = ctx.informers(apps_v1.ReplicaSet)
        self._pods = ctx.informers(core_v1.Pod)
        self._queue: WorkQueue[Key] = WorkQueue(ctx.clock)
        self._recorder = ctx.recorder("deployment-controller")
        self._deployments.add_handler(enqueue_on_change(self._queue))
        self._sets.add_handler(self._on_set)
        self._pods.add_handler(self._on_pod)

    def _on_set(self, type_: str, rs: apps_v1.ReplicaSet, old: apps_v1.ReplicaSet | None) -> None:
        ref = controller_of(rs)
        if ref is not None and ref.kind == "Deployment":
            self._queue.add((namespace_of(rs), ref.name))
        elif ref is None and type_ != "DELETED":
            for d in self._deployments.items(namespace_of(rs)):
                selector = selector_of(d)
                if selector is not None and selector.matches(labels_of(rs)):
                    self._queue.add(key_of(d))

    def _on_pod(self, type_: str, pod: core_v1.Pod, old: core_v1.Pod | None) -> None:
        """A Recreate rollout waits for the old pods to be gone: their deletion resyncs it."""
        if type_ != "DELETED":
            return
        ref = controller_of(pod)
        rs = self._sets.by_uid(ref.uid) if ref is not None else None
        owner = controller_of(rs) if rs is not None else None
        if owner is not None and owner.kind == "Deployment":
            self._queue.add((namespace_of(pod), owner.name))

    async def run(self) -> None:
        await work(self._queue, self.sync, name="deployment")

    # -- sync --------------------------------------------------------------------------------

    async def sync(self, key: Key) -> None:
        d = self._deployments.get(key)
        if d is None or meta_of(d).deletionTimestamp is not None:
            return
        spec = _spec(d)
        sets = await self._claim(d)
        if spec.paused:
            await self._write_status(d, sets, self._new_set(d, sets))
            return
        new = await self._ensure_new_set(d, sets)
        olds = [rs for rs in self._claimed(d) if uid_of(rs) != uid_of(new)]
        if spec.strategy is not None and spec.strategy.type == "Recreate":
            await self._recreate(d, new, olds)
        else:
            await self._roll(d, new, olds)
        sets = self._claimed(d)  # as the steps left them
        await self._cleanup(d, [rs for rs in sets if uid_of(rs) != uid_of(new)])
        await self._write_status(d, sets, self._sets.get(key_of(new)))

    def _claimed(self, d: apps_v1.Deployment) -> list[apps_v1.ReplicaSet]:
        return sorted(self._sets.controlled_by(uid_of(d)), key=_created)

    async def _claim(self, d: apps_v1.Deployment) -> list[apps_v1.ReplicaSet]:
        selector = selector_of(d)
        if selector is not None:
            for rs in self._sets.orphans(namespace_of(d)):
                if meta_of(rs).deletionTimestamp is None and selector.matches(labels_of(rs)):
                    await patch_observed(self._ctx.cluster, self._sets, rs, adoption_patch(rs, d))
        return self._claimed(d)

    def _new_set(self, d: apps_v1.Deployment, sets: list[apps_v1.ReplicaSet]) -> apps_v1.ReplicaSet | None:
        wanted = _without_hash(_spec(d).template)
        matching = [rs for rs in sets if (t := _set_template(rs)) is not None and _without_hash(t) == wanted]
        return matching[0] if matching else None

    async def _ensure_new_set(self, d: apps_v1.Deployment, sets: list[apps_v1.ReplicaSet]) -> apps_v1.ReplicaSet:
        """The ReplicaSet of the current template, created (at revision max+1) when missing; its
        revision and replica annotations kept current."""
        spec = _spec(d)
        surge, _ = surge_and_unavailable(d)
        revision = max((_revision(rs) for rs in sets), default=0)
        new = self._new_set(d, sets)
        annotations = {
            DESIRED_REPLICAS: str(spec.replicas or 0),
            MAX_REPLICAS: str((spec.replicas or 0) + surge),
        }
        if new is not None:
            if _revision(new) < revision:
                annotations[REVISION] = str(revision + 1)
            current = meta_of(new).annotations or {}
            if any(current.get(k) != v for k, v in annotations.items()):
                new = await self._patch_set(new, {"metadata": {"annotations": annotations}})
            await self._set_revision(d, _revision(new))
            return new
        collisions = (d.status.collisionCount if d.status else None) or 0
        hashed = template_hash(spec.template, collisions)
        template = spec.template
        template_meta = template.metadata or meta_v1.ObjectMeta()
        labels = {**(template_meta.labels or {}), POD_TEMPLATE_HASH: hashed}
        selector = spec.selector or meta_v1.LabelSelector()
        meta = meta_of(d)
        rs = apps_v1.ReplicaSet(
            metadata=meta_v1.ObjectMeta(
                name=f"{meta.name}-{hashed}",
                namespace=meta.namespace,
                labels=labels,
                annotations={**(meta.annotations or {}), **annotations, REVISION: str(revision + 1)},
                ownerReferences=[controller_reference(d)],
            ),
            spec=apps.ReplicaSetSpec(
                replicas=0,
                minReadySeconds=spec.minReadySeconds,
                selector=msgspec.structs.replace(
                    selector, matchLabels={**(selector.matchLabels or {}), POD_TEMPLATE_HASH: hashed}
                ),
                template=msgspec.structs.replace(
                    template, metadata=msgspec.structs.replace(template_meta, labels=labels)
                ),
            ),
        )
        try:
            created = await self._ctx.cluster.create(rs)
        except AlreadyExists:
            # a set of that name with another template: count the collision, the next sync hashes anew
            await self._patch_deployment_status(d, {"collisionCount": collisions + 1})
            raise
        self._sets.observe(created)
        await self._set_condition(
            d, "Progressing", "True", "NewReplicaSetCreated", f'Created new replica set "{meta_of(created).name}"'
        )
        await self._set_revision(d, revision + 1)
        return created

    async def _set_revision(self, d: apps_v1.Deployment, revision: int) -> None:
        meta = meta_of(d)
        if (meta.annotations or {}).get(REVISION) != str(revision):
            patched = await self._ctx.cluster.patch(
                apps_v1.Deployment,
                name_of(d),
                {"metadata": {"annotations": {REVISION: str(revision)}}},
                namespace=meta.namespace,
            )
            self._deployments.observe(patched)

    async def _patch_set(self, rs: apps_v1.ReplicaSet, patch: dict[str, object]) -> apps_v1.ReplicaSet:
        patched = await self._ctx.cluster.patch(apps_v1.ReplicaSet, name_of(rs), patch, namespace=meta_of(rs).namespace)
        self._sets.observe(patched)
        return patched

    async def _scale(self, d: apps_v1.Deployment, rs: apps_v1.ReplicaSet, replicas: int) -> apps_v1.ReplicaSet:
        before = _spec_replicas(rs)
        if before == replicas:
            return rs
        surge, _ = surge_and_unavailable(d)
        wanted = _spec(d).replicas or 0
        annotations = {DESIRED_REPLICAS: str(wanted), MAX_REPLICAS: str(wanted + surge)}
        scaled = await self._patch_set(rs, {"metadata": {"annotations": annotations}, "spec": {"replicas": replicas}})
        direction = "up" if replicas > before else "down"
        await self._recorder.record(
            d,
            NORMAL,
            "ScalingReplicaSet",
            f"Scaled {direction} replica set {meta_of(rs).name} from {before} to {replicas}",
        )
        return scaled

    # -- strategies --------------------------------------------------------------------------

    async def _roll(self, d: apps_v1.Deployment, new: apps_v1.ReplicaSet, olds: list[apps_v1.ReplicaSet]) -> None:
        """One step of a rolling update: scale the new set up within maxSurge; else scale the
        old sets down within maxUnavailable (unhealthy replicas first)."""
        replicas = _spec(d).replicas or 0
        surge, unavailable = surge_and_unavailable(d)
        everyone = [new, *olds]
        new_replicas = _spec_replicas(new)
        if new_replicas > replicas:
            await self._scale(d, new, replicas)
            return
        if new_replicas < replicas:
            total = sum(_spec_replicas(rs) for rs in everyone)
            room = min(replicas + surge - total, replicas - new_replicas)
            if room > 0:
                await self._scale(d, new, new_replicas + room)
                return
        old_replicas = sum(_spec_replicas(rs) for rs in olds)
        if old_replicas == 0:
            return
        min_available = replicas - unavailable
        new_unavailable = _spec_replicas(new) - _status(new, "availableReplicas")
        budget = sum(_spec_replicas(rs) for rs in everyone) - min_available - new_unavailable
        if budget <= 0:
            return
        for rs in olds:  # the unhealthy replicas of the oldest sets first
            if budget <= 0:
                break
            unhealthy = _spec_replicas(rs) - _status(rs, "availableReplicas")
            if unhealthy <= 0:
                continue
            cut = min(budget, unhealthy)
            await self._scale(d, rs, _spec_replicas(rs) - cut)
            budget -= cut
        olds = [self._sets.get(key_of(rs)) or rs for rs in olds]
        available = sum(_status(rs, "availableReplicas") for rs in [new, *olds])
        remaining = available - min_available
        for rs in olds:
            if remaining <= 0:
                break
            cut = min(_spec_replicas(rs), remaining)
            if cut > 0:
                await self._scale(d, rs, _spec_replicas(rs) - cut)
                remaining -= cut

    async def _recreate(self, d: apps_v1.Deployment, new: apps_v1.ReplicaSet, olds: list[apps_v1.ReplicaSet]) -> None:
        """Every old set to zero; the new one scaled up once no old pod is left."""
        for rs in olds:
            await self._scale(d, rs, 0)
        uids = {uid_of(rs) for rs in olds}
        if any(is_active(p) or meta_of(p).deletionTimestamp for uid in uids for p in self._pods.owned_by(uid)):
            return
        await self._scale(d, new, _spec(d).replicas or 0)

    async def _cleanup(self, d: apps_v1.Deployment, olds: list[apps_v1.ReplicaSet]) -> None:
        """Old sets scaled to zero beyond revisionHistoryLimit, oldest first, deleted."""
        spec = _spec(d)
        limit = spec.revisionHistoryLimit if spec.revisionHistoryLimit is not None else 10
        idle = [
            rs
            for rs in olds
            if _spec_replicas(rs) == 0 and _status(rs, "replicas") == 0 and meta_of(rs).deletionTimestamp is None
        ]
        for rs in sorted(idle, key=_revision)[: max(0, len(idle) - limit)]:
            try:
                await self._ctx.cluster.delete(apps_v1.ReplicaSet, name_of(rs), namespace=meta_of(rs).namespace)
            except NotFound:
                continue

    # -- status ------------------------------------------------------------------------------

    async def _write_status(
        self, d: apps_v1.Deployment, sets: list[apps_v1.ReplicaSet], new: apps_v1.ReplicaSet | None
    ) -> None:
        spec = _spec(d)
        replicas = spec.replicas or 0
        _, unavailable = surge_and_unavailable(d)
        available = sum(_status(rs, "availableReplicas") for rs in sets)
        total = sum(_spec_replicas(rs) for rs in sets)
        counts = {
            "replicas": sum(_status(rs, "replicas") for rs in sets),
            "updatedReplicas": _status(new, "replicas") if new is not None else 0,
            "readyReplicas": sum(_status(rs, "readyReplicas") for rs in sets),
            "availableReplicas": available,
            "unavailableReplicas": max(0, total - available),
        }
        status: dict[str, object] = {"observedGeneration": meta_of(d).generation, **counts}
        conditions = _conditions(d)
        now = self._ctx.clock.now()
        if available >= replicas - unavailable:
            _put(
                conditions, now, "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."
            )
        else:
            _put(
                conditions,
                now,
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
            )
        if new is not None and not spec.paused:
            name = str(meta_of(new).name)
            complete = (
                counts["updatedReplicas"] == replicas and counts["replicas"] == replicas and available == replicas
            )
            if complete:
                _put(
                    conditions,
                    now,
                    "Progressing",
                    "True",
                    "NewReplicaSetAvailable",
                    f'ReplicaSet "{name}" has successfully progressed.',
                )
            elif _progressed(d.status, counts):
                message = f'ReplicaSet "{name}" is progressing.'
                _put(conditions, now, "Progressing", "True", "ReplicaSetUpdated", message, touch=True)
            else:
                self._check_deadline(d, conditions, now, name)
        status["conditions"] = conditions
        if d.status is not None and d.status.collisionCount is not None:
            status["collisionCount"] = d.status.collisionCount
        await self._patch_deployment_status(d, status)

    def _check_deadline(
        self, d: apps_v1.Deployment, conditions: list[dict[str, object]], now: float, name: str
    ) -> None:
        deadline = _spec(d).progressDeadlineSeconds
        progressing = next((c for c in conditions if c["type"] == "Progressing"), None)
        if deadline is None or progressing is None or progressing["reason"] == "ProgressDeadlineExceeded":
            return
        since = datetime.fromisoformat(str(progressing["lastUpdateTime"]).replace("Z", "+00:00")).timestamp()
        if since + deadline <= now:
            _put(
                conditions,
                now,
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "{name}" has timed out progressing.',
            )
        else:
            self._queue.add_after(key_of(d), since + deadline - now)

    async def _set_condition(self, d: apps_v1.Deployment, type_: str, status: str, reason: str, message: str) -> None:
        conditions = _conditions(d)
        _put(conditions, self._ctx.clock.now(), type_, status, reason, message)
        await self._patch_deployment_status(d, {"conditions": conditions})

    async def _patch_deployment_status(self, d: apps_v1.Deployment, status: Mapping[str, object]) -> None:
        current: dict[str, object] = msgspec.to_builtins(d.status) if d.status is not None else {}
        if all(current.get(k) == v for k, v in status.items()):
            return
        await write_status(self._ctx.cluster, self._deployments, d, status)


def _conditions(d: apps.Deployment) -> list[dict[str, object]]:
    return [msgspec.to_builtins(c) for c in (d.status.conditions if d.status else None) or ()]


def _put(
    conditions: list[dict[str, object]],
    now: float,
    type_: str,
    status: str,
    reason: str,
    message: str,
    *,
    touch: bool = False,
) -> None:
    """Set a condition: its transition time moves only when its status does, its update time
    whenever it changes, or with `touch` (progress seen) as well (upstream's
    `SetDeploymentCondition` and the Progressing special case of `syncRolloutStatus`)."""
    stamp = rfc3339(now)
    for c in conditions:
        if c["type"] == type_:
            if c["status"] == status and c["reason"] == reason:
                if c.get("message") != message or touch:
                    c.update(message=message, lastUpdateTime=stamp)
                return
            if c["status"] != status:
                c["lastTransitionTime"] = stamp
            c.update(status=status, reason=reason, message=message, lastUpdateTime=stamp)
            return
    conditions.append(
        {
            "type": type_,
            "status": status,
            "lastUpdateTime": stamp,
            "lastTransitionTime": stamp,
            "reason": reason,
            "message": message,
        }
    )


def _progressed(before: apps.DeploymentStatus | None, after: Mapping[str, int]) -> bool:
    """Whether the rollout moved since the last status (upstream's `DeploymentProgressing`)."""
    if before is None:
        return True
    return bool(
        after["updatedReplicas"] > (before.updatedReplicas or 0)
        or after["readyReplicas"] > (before.readyReplicas or 0)
        or after["availableReplicas"] > (before.availableReplicas or 0)
        or after["replicas"] < (before.replicas or 0)
    )
