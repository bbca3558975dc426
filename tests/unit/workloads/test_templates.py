"""The nodes and pods kubesched's benchmark makes equal upstream's scheduler_perf templates field
for field (the expected values are upstream's YAML, read as facts), and the operations place them
as scheduler_perf does."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.storage import MemoryStore
from kubesched.workloads.templates import make_namespace, make_node, make_object, make_pod_from

SMALL = {"limits": {"cpu": "100m", "memory": "500Mi"}, "requests": {"cpu": "100m", "memory": "500Mi"}}
PAUSE_80 = {"image": "registry.k8s.io/pause:3.10.1", "name": "pause", "ports": [{"containerPort": 80}]}
READY = {"conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"}


def term(color: str, key: str) -> dict[str, Any]:
    return {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": key,
        "namespaces": ["sched-1", "sched-0"],
    }


POD_FACTS = {
    "pod-default.yaml": ("pod-", {}, {"containers": [{**PAUSE_80, "resources": SMALL}]}),
    "pod-with-pod-anti-affinity.yaml": (
        "anti-affinity-pod-",
        {"color": "green"},
        {
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [term("green", "kubernetes.io/hostname")]
                }
            },
            "containers": [{**PAUSE_80, "resources": SMALL}],
        },
    ),
    "pod-with-pod-affinity.yaml": (
        "affinity-pod-",
        {"color": "blue"},
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [term("blue", "topology.kubernetes.io/zone")]
                }
            },
            "containers": [{**PAUSE_80, "resources": SMALL}],
        },
    ),
    "pod-with-preferred-pod-affinity.yaml": (
        "preferred-affinity-pod-",
        {"color": "red"},
        {
            "affinity": {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"podAffinityTerm": term("red", "kubernetes.io/hostname"), "weight": 1}
                    ]
                }
            },
            "containers": [{**PAUSE_80, "resources": SMALL}],
        },
    ),
    "pod-with-preferred-pod-anti-affinity.yaml": (
        "preferred-anti-affinity-pod-",
        {"color": "yellow"},
        {
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"podAffinityTerm": term("yellow", "kubernetes.io/hostname"), "weight": 1}
                    ]
                }
            },
            "containers": [{**PAUSE_80, "resources": SMALL}],
        },
    ),
    "pod-with-node-affinity.yaml": (
        "node-affinity-",
        {},
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "topology.kubernetes.io/zone",
                                        "operator": "In",
                                        "values": ["zone1", "zone2"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            },
            "containers": [{**PAUSE_80, "resources": SMALL}],
        },
    ),
    "pod-with-topology-spreading.yaml": (
        "spreading-pod-",
        {"color": "blue"},
        {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 5,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"color": "blue"}},
                }
            ],
            "containers": [{**PAUSE_80, "resources": SMALL}],
        },
    ),
    "pod-with-preferred-topology-spreading.yaml": (
        "spreading-pod-",
        {"color": "blue"},
        {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 5,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"color": "blue"}},
                }
            ],
            "containers": [{**PAUSE_80, "resources": SMALL}],
        },
    ),
    "pod-low-priority.yaml": (
        "pod-",
        {},
        {
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    **PAUSE_80,
                    "resources": {
                        "limits": {"cpu": "900m", "memory": "500Mi"},
                        "requests": {"cpu": "900m", "memory": "500Mi"},
                    },
                }
            ],
        },
    ),
    "pod-high-priority.yaml": (
        "pod-",
        {},
        {
            "priority": 10,
            "containers": [
                {
                    **PAUSE_80,
                    "resources": {
                        "limits": {"cpu": "3000m", "memory": "500Mi"},
                        "requests": {"cpu": "3000m", "memory": "500Mi"},
                    },
                }
            ],
        },
    ),
    "default_preemption/pod-high-priority.yaml": (
        "pod-high-priority-",
        {},
        {
            "terminationGracePeriodSeconds": 0,
            "priority": 10000,
            "containers": [
                {
                    "image": "registry.k8s.io/pause:3.10.1",
                    "name": "pause",
                    "resources": {
                        "limits": {"cpu": "3970m", "memory": "500Mi"},
                        "requests": {"cpu": "3970m", "memory": "500Mi"},
                    },
                }
            ],
        },
    ),
    "pod-high-priority-large-cpu.yaml": (
        "pod-h-",
        {},
        {"priority": 10, "containers": [{**PAUSE_80, "resources": {"requests": {"cpu": "9", "memory": "500Mi"}}}]},
    ),
    "pod-with-secret-volume.yaml": (
        "secret-volume-",
        {},
        {
            "containers": [{**PAUSE_80, "resources": SMALL}],
            "volumes": [{"name": "secret", "secret": {"secretName": "secret"}}],
        },
    ),
}


def devops(color: str, key: str) -> dict[str, Any]:
    return {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": key,
        "namespaceSelector": {"matchLabels": {"team": "devops"}},
    }


PAUSE = {"image": "registry.k8s.io/pause:3.10.1", "name": "pause"}
SMALL_80 = [{**PAUSE_80, "resources": SMALL}]

POD_FACTS |= {
    "pod-anti-affinity-ns-selector.yaml": (
        "anti-affinity-pod-",
        {"color": "green"},
        {
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [devops("green", "kubernetes.io/hostname")]
                }
            },
            "containers": SMALL_80,
        },
    ),
    "pod-affinity-ns-selector.yaml": (
        "affinity-pod-",
        {"color": "blue"},
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [devops("blue", "topology.kubernetes.io/zone")]
                }
            },
            "containers": SMALL_80,
        },
    ),
    "pod-preferred-anti-affinity-ns-selector.yaml": (
        "anti-affinity-pod-",
        {"color": "green"},
        {
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"podAffinityTerm": devops("green", "kubernetes.io/hostname"), "weight": 1}
                    ]
                }
            },
            "containers": SMALL_80,
        },
    ),
    "pod-preferred-affinity-ns-selector.yaml": (
        "preferred-affinity-pod-",
        {"color": "red"},
        {
            "affinity": {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"podAffinityTerm": devops("red", "kubernetes.io/hostname"), "weight": 1}
                    ]
                }
            },
            "containers": SMALL_80,
        },
    ),
    "pod-with-pod-anti-affinity-label.yaml": (
        "anti-affinity-matching-pod-",
        {"color": "green"},
        {"containers": SMALL_80},
    ),
    "pod-with-label.yaml": ("pod-", {"app": "scheduler-perf"}, {"containers": [PAUSE]}),
    "gated-pod-with-pod-affinity.yaml": (
        "pod-",
        {"app": "scheduler-perf"},
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"app": "scheduler-perf"}},
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                }
            },
            "schedulingGates": [{"name": "scheduling-gate-1"}],
            "containers": [PAUSE],
        },
    ),
    "gated-pod.yaml": ("gated-pod-", {}, {"schedulingGates": [{"name": "test.k8s.io/hold"}], "containers": [PAUSE]}),
    "light-pod.yaml": ("light-pod-", {}, {"containers": [PAUSE], "terminationGracePeriodSeconds": 0}),
    "pod-with-finalizer.yaml": ("pod-", {}, {"containers": [PAUSE]}),
}
FINALIZERS = {"pod-with-finalizer.yaml": ["test.k8s.io/finalizer"]}


@pytest.mark.parametrize("path", sorted(POD_FACTS))
def test_each_pod_template_is_upstreams(path):
    generate_name, labels, spec = POD_FACTS[path]
    pod = make_pod_from(path, 7, "sched-1").to_dict()
    assert pod["metadata"] == {
        "name": f"{generate_name}000007",
        "namespace": "sched-1",
        **({"labels": labels} if labels else {}),
        **({"finalizers": FINALIZERS[path]} if path in FINALIZERS else {}),
    }
    assert pod["spec"] == spec


def test_the_namespace_and_service_templates_are_upstreams():
    assert make_namespace("namespace-with-labels.yaml", "init-ns-3").to_dict() == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "init-ns-3", "labels": {"team": "devops"}},
    }
    assert make_namespace("", "sched-0").to_dict()["metadata"] == {"name": "sched-0"}
    service = make_object("service.yaml", 2, "service-ns").to_dict()
    assert service["metadata"] == {"name": "service-00002", "namespace": "service-ns"}
    assert service["spec"] == {
        "selector": {"app": "scheduler-perf"},
        "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8000}],
    }


NODE_FACTS = {
    # makeBaseNode: capacity and allocatable 110 pods, 4 CPU, 32Gi
    "": ("node-0-", {"pods": "110", "cpu": "4", "memory": "32Gi"}, None),
    "node-default.yaml": ("scheduler-perf-", {"pods": "110", "cpu": "4", "memory": "32Gi"}, None),
    "node-with-taint.yaml": (
        "taint-node-",
        {"pods": "110", "cpu": "4", "memory": "32Gi"},
        [{"effect": "NoSchedule", "key": "foo"}],
    ),
}


@pytest.mark.parametrize("path", sorted(NODE_FACTS))
def test_each_node_template_is_upstreams_with_its_hostname_label(path):
    prefix, capacity, taints = NODE_FACTS[path]
    store = MemoryStore(clock=VirtualClock())
    node: Any = store.create(make_node(path, 3))
    name = f"{prefix}00003"
    assert node.metadata.name == name
    assert node.metadata.labels == {"kubernetes.io/hostname": name}
    assert node.status.capacity == capacity and node.status.allocatable == capacity  # defaulted from capacity
    assert (node.spec.taints and [t.to_dict() for t in node.spec.taints]) == taints
    assert [(c.type, c.status) for c in node.status.conditions] == [("Ready", "True")]


def test_the_named_node_template_keeps_its_name_and_room_for_a_daemonset():
    node = make_node("node-with-name.yaml", 0)
    assert node.metadata.name == "scheduler-perf-node"
    assert node.metadata.labels == {"kubernetes.io/hostname": "scheduler-perf-node"}
    assert node.status.capacity == {"pods": "90000", "cpu": "4", "memory": "32Gi"}


def test_a_pod_template_with_spec_priority_needs_the_priority_admission_plugin_off():
    from kubesched.cluster import Forbidden

    pod = make_pod_from("pod-high-priority.yaml", 0, "default")
    with pytest.raises(Forbidden):
        MemoryStore(clock=VirtualClock()).create(pod)
    kept: Any = MemoryStore(clock=VirtualClock(), disable_admission=("Priority",)).create(pod)
    assert kept.spec.priority == 10
    with pytest.raises(ValueError, match="unknown admission plugin"):
        MemoryStore(clock=VirtualClock(), disable_admission=("NoSuch",))
