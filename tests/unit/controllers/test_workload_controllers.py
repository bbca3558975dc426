"""Jobs, DaemonSets and StatefulSets on the virtual clock."""

import itertools

import pytest
from lightkube.models import apps_v1 as apps
from lightkube.models import batch_v1 as bm
from lightkube.models import meta_v1
from lightkube.resources import apps_v1, batch_v1, core_v1

from builders import ControllerLab, make_node, pod_template
from kubesched.sim.kubelet import EXIT_CODE_ANNOTATION


def _job(lab, *, completions=5, parallelism=2, backoff_limit=None, exit_code=0):
    template = pod_template("calc", "busybox", restartPolicy="Never")
    template.metadata.annotations = {EXIT_CODE_ANNOTATION: str(exit_code)}
    spec = bm.JobSpec(completions=completions, parallelism=parallelism, backoffLimit=backoff_limit, template=template)
    lab.create(batch_v1.Job(metadata=meta_v1.ObjectMeta(name="calc", namespace="default"), spec=spec))


def _status(lab, cls, name):
    return lab.store.get(cls, name, namespace="default").status


def test_a_job_runs_its_completions_never_more_than_parallelism_at_once(clock):
    lab = ControllerLab(clock)
    _job(lab)
    most = 0
    for _ in range(300):
        lab.advance(0.1)
        most = max(most, len([p for p in lab.pods(app="calc") if p.status.phase in ("Pending", "Running")]))
    status = _status(lab, batch_v1.Job, "calc")
    assert most == 2
    assert (status.succeeded, status.active, status.failed) == (5, 0, 0)
    assert [(c.type, c.status) for c in status.conditions] == [("SuccessCriteriaMet", "True"), ("Complete", "True")]
    assert status.completionTime is not None
    assert all(not p.metadata.finalizers for p in lab.pods(app="calc"))  # each counted once, released


def test_a_job_fails_once_its_backoff_limit_is_passed_waiting_longer_each_time(clock):
    lab = ControllerLab(clock)
    _job(lab, completions=1, parallelism=1, backoff_limit=2, exit_code=1)
    lab.advance(120)
    status = _status(lab, batch_v1.Job, "calc")
    assert status.failed == 3
    failed = next(c for c in status.conditions if c.type == "Failed")
    assert (failed.reason, failed.message) == ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    created = sorted(p.metadata.creationTimestamp.timestamp() for p in lab.pods(app="calc"))
    gaps = [b - a for a, b in itertools.pairwise(created)]
    run = 1 + 5  # the kubelet's start and run to completion
    assert gaps[0] >= run + 10 and gaps[1] >= run + 20  # the pod-failure backoff doubles


def _daemonset(lab):
    spec = apps.DaemonSetSpec(
        selector=meta_v1.LabelSelector(matchLabels={"app": "agent"}), template=pod_template("agent", "agent:1")
    )
    lab.create(apps_v1.DaemonSet(metadata=meta_v1.ObjectMeta(name="agent", namespace="default"), spec=spec))


def test_a_daemonset_has_one_pod_per_eligible_node_placed_by_the_scheduler(clock):
    lab = ControllerLab(clock, nodes=3)
    lab.create(make_node("tainted").taint("dedicated", "db").obj)
    _daemonset(lab)
    lab.advance(5)
    nodes = sorted(p.spec.nodeName for p in lab.pods(app="agent"))
    assert nodes == ["node-0", "node-1", "node-2"]
    pod = lab.pods(app="agent")[0]
    (term,) = pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
    assert (term.matchFields[0].key, term.matchFields[0].values) == ("metadata.name", [pod.spec.nodeName])
    assert {"node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready"} <= {t.key for t in pod.spec.tolerations}
    status = _status(lab, apps_v1.DaemonSet, "agent")
    assert (status.desiredNumberScheduled, status.currentNumberScheduled, status.numberReady) == (3, 3, 3)
    lab.store.patch(core_v1.Node, "tainted", {"spec": {"taints": None}})
    lab.advance(5)
    assert sorted(p.spec.nodeName for p in lab.pods(app="agent")) == [*nodes, "tainted"]  # bound (it has no kubelet)


def test_a_daemonset_rolls_a_new_template_node_by_node(clock):
    lab = ControllerLab(clock, nodes=3)
    _daemonset(lab)
    lab.advance(5)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "agent:2"}]}}}}
    lab.store.patch(apps_v1.DaemonSet, "agent", patch, namespace="default", patch_type="strategic")
    fewest = 3
    for _ in range(150):
        lab.advance(0.1)
        fewest = min(fewest, len(lab.running(app="agent")))
    assert fewest == 2  # maxUnavailable 1
    assert sorted(p.spec.containers[0].image for p in lab.running(app="agent")) == ["agent:2"] * 3
    assert _status(lab, apps_v1.DaemonSet, "agent").updatedNumberScheduled == 3


def _statefulset(lab, replicas=3):
    spec = apps.StatefulSetSpec(
        replicas=replicas,
        serviceName="db",
        selector=meta_v1.LabelSelector(matchLabels={"app": "db"}),
        template=pod_template("db", "db:1"),
    )
    lab.create(apps_v1.StatefulSet(metadata=meta_v1.ObjectMeta(name="db", namespace="default"), spec=spec))


def test_a_statefulset_creates_its_pods_in_order_each_after_the_last_is_ready(clock):
    lab = ControllerLab(clock)
    _statefulset(lab)
    lab.advance(10)
    pods = sorted(lab.running(app="db"), key=lambda p: p.metadata.creationTimestamp)
    assert [p.metadata.name for p in pods] == ["db-0", "db-1", "db-2"]
    ready = {p.metadata.name: p.status.startTime for p in pods}
    assert pods[1].metadata.creationTimestamp >= ready["db-0"] and pods[2].metadata.creationTimestamp >= ready["db-1"]
    assert (pods[0].spec.hostname, pods[0].spec.subdomain) == ("db-0", "db")
    assert pods[2].metadata.labels["statefulset.kubernetes.io/pod-name"] == "db-2"
    assert _status(lab, apps_v1.StatefulSet, "db").readyReplicas == 3


@pytest.mark.parametrize(("replicas", "left"), [(1, ["db-0"]), (2, ["db-0", "db-1"])])
def test_a_statefulset_scales_down_from_the_highest_ordinal(clock, replicas, left):
    lab = ControllerLab(clock)
    _statefulset(lab)
    lab.advance(10)
    lab.store.patch(apps_v1.StatefulSet, "db", {"spec": {"replicas": replicas}}, namespace="default")
    lab.advance(10)
    assert sorted(p.metadata.name for p in lab.pods(app="db")) == left
