"""CapacityScheduling: ElasticQuotas guarantee min, cap at max, and borrowing is given back by preemption."""

from __future__ import annotations

from kubesched_scheduler_plugins.capacity import QuotaInfo, Quotas, over, pod_request
from objects import elastic_quota, namespace, node, pod, priority_class

CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "CapacityScheduling"}]},
                "postFilter": {"enabled": [{"name": "CapacityScheduling"}], "disabled": [{"name": "*"}]},
            },
        }
    ]
}


def nginx(name: str, ns: str) -> object:
    return pod(name, cpu="2", memory="0", namespace=ns, terminationGracePeriodSeconds=1)


def test_the_upstream_demo_quota2_reclaims_its_min_by_preempting_a_quota1_pod(cluster):
    """scheduler-plugins' README demo: 8 CPUs; quota1 and quota2 each min 4, max 6 CPUs."""
    cluster.create(node("n1", cpu="8", memory="32Gi"), namespace("quota1"), namespace("quota2"))
    for ns in ("quota1", "quota2"):
        cluster.create(elastic_quota(ns, min={"cpu": "4"}, max={"cpu": "6"}))
    cluster.start(CONFIG)
    cluster.run_kubelets()
    for i in range(4):  # one at a time, in creation order, as a Deployment's pods come
        cluster.create(nginx(f"app1-{i}", "quota1"))
        cluster.clock.advance(1)
    cluster.clock.advance(5)
    assert sorted(cluster.bound("quota1")) == ["app1-0", "app1-1", "app1-2"]
    assert (
        "0/1 nodes are available: Pod quota1/app1-3 is rejected in PreFilter because ElasticQuota quota1 is more "
        "than Max. 0/1 nodes are available: 1 No victims found on node n1 for preemptor pod app1-3."
    ) in cluster.messages()
    for i in range(2):
        cluster.create(nginx(f"app2-{i}", "quota2"))
        cluster.clock.advance(1)
    cluster.clock.advance(10)
    # The second quota2 pod is over the total min, and preempts the youngest quota1 pod, which quota1
    # had borrowed beyond its min.
    assert any(
        "Pod quota2/app2-1 is rejected in PreFilter because total ElasticQuota used is more than min" in m
        for m in cluster.messages()
    )
    preempted = [e for e in cluster.events("Preempted")]
    assert [(e.regarding.namespace, e.regarding.name) for e in preempted] == [("quota1", "app1-2")]
    assert sorted(cluster.bound("quota2")) == ["app2-0", "app2-1"]
    assert sorted(cluster.bound("quota1")) == ["app1-0", "app1-1"]  # quota1 back at its min; app1-3 still waits


def test_a_pod_within_its_min_reclaims_whatever_the_victims_priority(cluster):
    cluster.create(node("n1", cpu="4", memory="32Gi"), namespace("a"), namespace("b"), priority_class("high", 1000))
    cluster.create(
        elastic_quota("a", min={"cpu": "2"}, max={"cpu": "4"}), elastic_quota("b", min={"cpu": "2"}, max={"cpu": "4"})
    )
    cluster.start(CONFIG)
    cluster.run_kubelets()
    for i in range(2):
        cluster.create(
            pod(f"a{i}", cpu="2", memory="0", namespace="a", priorityClassName="high", terminationGracePeriodSeconds=1)
        )
        cluster.clock.advance(1)
    cluster.create(pod("b0", cpu="2", memory="0", namespace="b", terminationGracePeriodSeconds=1))
    cluster.clock.advance(10)
    assert cluster.bound("b") == {"b0": "n1"}  # b was within its min: a's borrowed pod goes, priority 1000 or not
    assert len(cluster.bound("a")) == 1


def test_quota_arithmetic():
    assert pod_request(pod("p", cpu="500m", memory="1Gi")) == {"cpu": 500, "memory": 1 << 30}
    info = QuotaInfo("ns", min={"cpu": 1000}, max={"cpu": 2000})
    info.add_pod(pod("p", cpu="1500m", memory="0"))
    assert info.over_min() and not info.over_max_with({"cpu": 500}) and info.over_max_with({"cpu": 501})
    info.add_pod(pod("p", cpu="1500m", memory="0"))  # the same pod (uid) twice counts once
    assert info.used["cpu"] == 1500
    assert over({"example.com/gpu": 1}, {}, {}, 0) and not over({"example.com/gpu": 1}, {}, {}, 2**63 - 1)
    quotas = Quotas({"ns": info, "other": QuotaInfo("other", min={"cpu": 1000}, max={"cpu": 2000})})
    assert not quotas.aggregated_over_min_with({"cpu": 500}) and quotas.aggregated_over_min_with({"cpu": 501})
