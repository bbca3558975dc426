"""Test objects for the package's tests: nodes and pods as the API has them."""

from __future__ import annotations

from typing import Any

from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import core_v1, scheduling_v1

from kubesched.sim.nodes import FAKE_NODE_ANNOTATION


def node(name: str, cpu: str = "4", memory: str = "16Gi", **labels: str) -> core_v1.Node:
    capacity = {"cpu": cpu, "memory": memory, "pods": "110"}
    return core_v1.Node(
        metadata=meta_v1.ObjectMeta(
            name=name,
            labels={"kubernetes.io/hostname": name, **labels},
            annotations={FAKE_NODE_ANNOTATION: "true"},  # served by the fake kubelets, when they run
        ),
        spec=m.NodeSpec(),
        status=m.NodeStatus(capacity=capacity, allocatable=dict(capacity)),
    )


def pod(
    name: str, *, cpu: str = "100m", memory: str = "128Mi", namespace: str = "default", **extra: Any
) -> core_v1.Pod:
    labels = extra.pop("labels", None)
    obj = core_v1.Pod(
        metadata=meta_v1.ObjectMeta(name=name, namespace=namespace, uid=f"uid-{name}", labels=labels),
        spec=m.PodSpec(
            containers=[
                m.Container(
                    name="app",
                    image="registry.k8s.io/pause:3.10",
                    resources=m.ResourceRequirements(requests={"cpu": cpu, "memory": memory}),
                )
            ],
            **extra,
        ),
    )
    return obj


def pod_group(name: str, min_member: int, *, namespace: str = "default", **spec: Any) -> Any:
    from kubesched_scheduler_plugins.apis import PodGroup, PodGroupSpec

    return PodGroup(
        metadata=meta_v1.ObjectMeta(name=name, namespace=namespace), spec=PodGroupSpec(minMember=min_member, **spec)
    )


def member(
    name: str, group: str, *, cpu: str = "1", scheduler: str = "scheduler-plugins-scheduler", **extra: Any
) -> Any:
    from kubesched_scheduler_plugins.apis import POD_GROUP_LABEL

    annotations = extra.pop("annotations", None)
    obj = pod(name, cpu=cpu, labels={POD_GROUP_LABEL: group}, schedulerName=scheduler, **extra)
    obj.metadata.uid = None
    obj.metadata.annotations = annotations
    return obj


def namespace(name: str) -> core_v1.Namespace:
    return core_v1.Namespace(metadata=meta_v1.ObjectMeta(name=name))


def elastic_quota(namespace: str, *, min: dict[str, str] | None = None, max: dict[str, str] | None = None) -> Any:
    from kubesched_scheduler_plugins.apis import ElasticQuota, ElasticQuotaSpec

    return ElasticQuota(
        metadata=meta_v1.ObjectMeta(name=namespace, namespace=namespace), spec=ElasticQuotaSpec(min=min, max=max)
    )


def priority_class(name: str, value: int) -> scheduling_v1.PriorityClass:

    return scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name=name), value=value)
