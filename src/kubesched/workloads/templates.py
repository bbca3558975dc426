"""The node and pod templates of upstream's scheduler_perf (`test/integration/scheduler_perf/
templates/`), by their file names, and the objects made from them as scheduler_perf makes them.

scheduler_perf names nodes `generateName` + five random characters and labels each with its
hostname; kubesched numbers them instead (`scheduler-perf-00000`...), so a seed is not needed for
the same cluster twice. Pods get `generateName` + their index, in the namespace the operation says.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Required, TypedDict

import msgspec
from lightkube.models import meta_v1
from lightkube.resources import core_v1

from kubesched.api.objects import Served, meta_of
from kubesched.cluster.codec import decoder

PAUSE = "registry.k8s.io/pause:3.10.1"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


class Manifest(TypedDict, total=False):
    """A template: an object's manifest, as scheduler_perf's YAML files have it."""

    apiVersion: Required[str]
    kind: Required[str]
    metadata: Required[dict[str, object]]
    spec: dict[str, object]
    status: dict[str, object]


def _container(resources: dict[str, object] | None = None, *, port: bool = True) -> dict[str, object]:
    out: dict[str, object] = {"image": PAUSE, "name": "pause"}
    if port:
        out["ports"] = [{"containerPort": 80}]
    if resources is not None:
        out["resources"] = resources
    return out


def _pod(
    generate_name: str,
    spec: dict[str, object],
    *,
    labels: dict[str, str] | None = None,
    finalizers: list[str] | None = None,
) -> Manifest:
    metadata: dict[str, object] = {"generateName": generate_name}
    if labels:
        metadata["labels"] = labels
    if finalizers:
        metadata["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _fixed(cpu: str) -> dict[str, object]:
    """Requests and limits alike: `cpu` and 500Mi."""
    return {"limits": {"cpu": cpu, "memory": "500Mi"}, "requests": {"cpu": cpu, "memory": "500Mi"}}


def _small(**spec: object) -> dict[str, object]:
    """A spec with the usual pause container (port 80, 100m / 500Mi requested and limited)."""
    return {**spec, "containers": [_container(_fixed("100m"))]}


def _term(color: str, topology: str) -> dict[str, object]:
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": topology, "namespaces": SCHED_NS}


def _spread(when: str) -> Manifest:
    constraint = {
        "maxSkew": 5,
        "topologyKey": ZONE,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    return _pod("spreading-pod-", _small(topologySpreadConstraints=[constraint]), labels={"color": "blue"})


def _preferred(
    generate_name: str, kind: str, color: str, term_of: Callable[[str, str], dict[str, object]] | None = None
) -> Manifest:
    """A pod labelled `color` preferring (weight 1) nodes whose pods are `color` (`kind`:
    podAffinity or podAntiAffinity), per hostname; the term names the sched namespaces, or is
    made by `term_of`."""
    term = {"podAffinityTerm": (term_of or _term)(color, HOSTNAME), "weight": 1}
    spec = _small(affinity={kind: {"preferredDuringSchedulingIgnoredDuringExecution": [term]}})
    return _pod(generate_name, spec, labels={"color": color})


def _devops(color: str, topology: str) -> dict[str, object]:
    """A term matching `color` pods in the namespaces labelled team=devops."""
    return {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": topology,
        "namespaceSelector": {"matchLabels": {"team": "devops"}},
    }


def _bare(generate_name: str, *, labels: dict[str, str] | None = None, **spec: object) -> Manifest:
    """A pod with one pause container, no port, nothing requested."""
    return _pod(generate_name, {**spec, "containers": [_container(port=False)]}, labels=labels)


SCHED_NS = ["sched-1", "sched-0"]  # the namespaces the affinity templates' terms name
SCHEDULER_PERF = {"app": "scheduler-perf"}

_READY = {"conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"}
_CAPACITY = {"pods": "110", "cpu": "4", "memory": "32Gi"}

NODE_TEMPLATES: dict[str, Manifest] = {
    # scheduler_perf's makeBaseNode, for createNodes without nodeTemplatePath (capacity = allocatable)
    "": {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"generateName": "node-0-"},
        "spec": {},
        "status": {"capacity": dict(_CAPACITY), "allocatable": dict(_CAPACITY), **_READY},
    },
    "node-default.yaml": {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"generateName": "scheduler-perf-"},
        "spec": {},
        "status": {"capacity": dict(_CAPACITY), **_READY},
    },
    "node-with-name.yaml": {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "scheduler-perf-node", "labels": {HOSTNAME: "scheduler-perf-node"}},
        "spec": {},
        "status": {"capacity": {"pods": "90000", "cpu": "4", "memory": "32Gi"}, **_READY},
    },
    "node-with-taint.yaml": {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"generateName": "taint-node-"},
        "spec": {"taints": [{"effect": "NoSchedule", "key": "foo"}]},
        "status": {"capacity": dict(_CAPACITY), **_READY},
    },
    "churn/node-default.yaml": {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"generateName": "node-churn-"},
        "status": {"capacity": {"pods": "0"}, **_READY},
    },
}

POD_TEMPLATES: dict[str, Manifest] = {
    "pod-default.yaml": _pod("pod-", _small()),
    "pod-with-pod-anti-affinity.yaml": _pod(
        "anti-affinity-pod-",
        _small(
            affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("green", HOSTNAME)]}}
        ),
        labels={"color": "green"},
    ),
    "pod-with-pod-affinity.yaml": _pod(
        "affinity-pod-",
        _small(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("blue", ZONE)]}}),
        labels={"color": "blue"},
    ),
    "pod-with-preferred-pod-affinity.yaml": _preferred("preferred-affinity-pod-", "podAffinity", "red"),
    "pod-with-preferred-pod-anti-affinity.yaml": _preferred(
        "preferred-anti-affinity-pod-", "podAntiAffinity", "yellow"
    ),
    "pod-with-node-affinity.yaml": _pod(
        "node-affinity-",
        _small(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}]}
                        ]
                    }
                }
            }
        ),
    ),
    "pod-with-topology-spreading.yaml": _spread("DoNotSchedule"),
    "pod-with-preferred-topology-spreading.yaml": _spread("ScheduleAnyway"),
    "pod-low-priority.yaml": _pod(
        "pod-",
        {
            "terminationGracePeriodSeconds": 0,
            "containers": [
                _container(
                    {"limits": {"cpu": "900m", "memory": "500Mi"}, "requests": {"cpu": "900m", "memory": "500Mi"}}
                )
            ],
        },
    ),
    "pod-high-priority.yaml": _pod(
        "pod-",
        {
            "priority": 10,
            "containers": [
                _container(
                    {"limits": {"cpu": "3000m", "memory": "500Mi"}, "requests": {"cpu": "3000m", "memory": "500Mi"}}
                )
            ],
        },
    ),
    # default_preemption/templates/pod-high-priority.yaml: PreemptionBasic's preemptors
    "default_preemption/pod-high-priority.yaml": _pod(
        "pod-high-priority-",
        {
            "terminationGracePeriodSeconds": 0,
            "priority": 10000,
            "containers": [_container(_fixed("3970m"), port=False)],
        },
    ),
    "pod-high-priority-large-cpu.yaml": _pod(
        "pod-h-", {"priority": 10, "containers": [_container({"requests": {"cpu": "9", "memory": "500Mi"}})]}
    ),
    "pod-with-secret-volume.yaml": _pod(
        "secret-volume-", {**_small(), "volumes": [{"name": "secret", "secret": {"secretName": "secret"}}]}
    ),
    "daemonset-pod.yaml": _pod(
        "daemonset-",
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["scheduler-perf-node"]}
                                ]
                            }
                        ]
                    }
                }
            },
            "containers": [_container(port=False)],
        },
    ),
    "pod-with-node-inclusion-policy.yaml": _pod(
        "spreading-pod-with-node-inclusion-policy-",
        _small(
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": HOSTNAME,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "nodeAffinityPolicy": "Honor",
                    "nodeTaintsPolicy": "Honor",
                    "labelSelector": {"matchLabels": {"foo": "bar"}},
                }
            ]
        ),
        labels={"foo": "bar"},
    ),
}

POD_TEMPLATES |= {
    "pod-anti-affinity-ns-selector.yaml": _pod(
        "anti-affinity-pod-",
        _small(
            affinity={
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_devops("green", HOSTNAME)]}
            }
        ),
        labels={"color": "green"},
    ),
    "pod-affinity-ns-selector.yaml": _pod(
        "affinity-pod-",
        _small(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_devops("blue", ZONE)]}}),
        labels={"color": "blue"},
    ),
    "pod-preferred-anti-affinity-ns-selector.yaml": _preferred(
        "anti-affinity-pod-", "podAntiAffinity", "green", _devops
    ),
    "pod-preferred-affinity-ns-selector.yaml": _preferred("preferred-affinity-pod-", "podAffinity", "red", _devops),
    "pod-with-pod-anti-affinity-label.yaml": _pod("anti-affinity-matching-pod-", _small(), labels={"color": "green"}),
    "pod-with-label.yaml": _bare("pod-", labels=SCHEDULER_PERF),
    "gated-pod-with-pod-affinity.yaml": _bare(
        "pod-",
        labels=SCHEDULER_PERF,
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": SCHEDULER_PERF}, "topologyKey": HOSTNAME}
                ]
            }
        },
        schedulingGates=[{"name": "scheduling-gate-1"}],
    ),
    "gated-pod.yaml": _bare("gated-pod-", schedulingGates=[{"name": "test.k8s.io/hold"}]),
    "light-pod.yaml": _bare("light-pod-", terminationGracePeriodSeconds=0),
    "pod-with-finalizer.yaml": _pod(
        "pod-", {"containers": [_container(port=False)]}, finalizers=["test.k8s.io/finalizer"]
    ),
}

OTHER_TEMPLATES: dict[str, Manifest] = {
    "namespace-with-labels.yaml": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"labels": {"team": "devops"}}},
    "service.yaml": {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"generateName": "service-"},
        "spec": {"selector": dict(SCHEDULER_PERF), "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8000}]},
    },
    "churn/service-default.yaml": {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"generateName": "service-churn-"},
        "spec": {"selector": {"app": "foo"}, "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}]},
    },
}


_EMPTY_META = meta_v1.ObjectMeta()

KINDS: dict[str, type[Served]] = {
    "Namespace": core_v1.Namespace,
    "Node": core_v1.Node,
    "Pod": core_v1.Pod,
    "Service": core_v1.Service,
}


@functools.cache
def _encoded(path: str) -> tuple[type[Served], bytes]:
    """The kind and JSON of the template at `path` (a KeyError names an unknown one), encoded once:
    decoding it makes a fresh object fast."""
    for table in (POD_TEMPLATES, NODE_TEMPLATES, OTHER_TEMPLATES):
        if path in table:
            return KINDS[table[path]["kind"]], msgspec.json.encode(table[path])
    raise KeyError(path)


def _name(meta: meta_v1.ObjectMeta, index: int, width: int, prefix: str | None = None) -> str:
    if not meta.name:
        meta.name = f"{prefix if prefix is not None else meta.generateName or 'obj-'}{index:0{width}d}"
    meta.generateName = None
    return str(meta.name)


def make_node(path: str, index: int, *, prefix: str | None = None) -> core_v1.Node:
    """Node `index` of the template at `path` ("" = makeBaseNode with `prefix`), labelled with its
    hostname as scheduler_perf labels it."""
    node: core_v1.Node = decoder(core_v1.Node).decode(_encoded(path)[1])
    meta = meta_of(node)
    name = _name(meta, index, 5, prefix)
    meta.labels = {**(meta.labels or {}), HOSTNAME: name}
    return node


def make_pod_from(path: str, index: int, namespace: str) -> core_v1.Pod:
    """Pod `index` of the template at `path`, in `namespace`."""
    pod: core_v1.Pod = decoder(core_v1.Pod).decode(_encoded(path)[1])
    meta = meta_of(pod)
    _name(meta, index, 6)
    meta.namespace = namespace
    return pod


def make_object(path: str, index: int, namespace: str) -> Served:
    """Object `index` of the template at `path`, whatever its kind (namespaced ones in `namespace`)."""
    kind, encoded = _encoded(path)
    if kind is core_v1.Node:
        return make_node(path, index)
    if kind is core_v1.Pod:
        return make_pod_from(path, index, namespace)
    obj: Served = decoder(kind).decode(encoded)
    meta = meta_of(obj)
    _name(meta, index, 5)
    meta.namespace = namespace
    return obj


def make_namespace(path: str, name: str) -> core_v1.Namespace:
    """Namespace `name` from the template at `path` ("" = an empty Namespace)."""
    namespace: core_v1.Namespace = decoder(core_v1.Namespace).decode(_encoded(path)[1]) if path else core_v1.Namespace()
    namespace.metadata = msgspec.structs.replace(namespace.metadata or _EMPTY_META, name=name)
    return namespace
