"""What the store does per kind and on deletion: workload defaults, generation, the
garbage collector's finalizers for each propagation policy, and the namespace lifecycle."""

import re

import pytest
from lightkube.models import batch_v1 as bm
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.resources import apps_v1, batch_v1, core_v1
from msgspec.structs import replace

from builders import deployment, make_node, make_pod, pod_template
from kubesched.cluster import BadRequest, Conflict, Invalid, NotFound


def test_a_deployment_is_defaulted_as_the_api_server_defaults_it(store):
    created = store.create(deployment("web", replicas=None))
    spec = created.spec
    assert spec.replicas == 1
    assert (spec.strategy.type, spec.strategy.rollingUpdate.maxSurge, spec.strategy.rollingUpdate.maxUnavailable) == (
        "RollingUpdate",
        "25%",
        "25%",
    )
    assert (spec.revisionHistoryLimit, spec.progressDeadlineSeconds) == (10, 600)
    template = spec.template.spec
    assert (template.restartPolicy, template.schedulerName, template.terminationGracePeriodSeconds) == (
        "Always",
        "default-scheduler",
        30,
    )
    assert created.metadata.generation == 1


@pytest.mark.parametrize(
    ("patch", "generation"),
    [
        ({"spec": {"replicas": 5}}, 2),
        ({"metadata": {"labels": {"tier": "front"}}}, 1),
        ({"status": {"replicas": 3}}, 1),  # the status is its own subresource: ignored here
    ],
)
def test_the_generation_counts_spec_changes_only(store, patch, generation):
    store.create(deployment("web"))
    assert store.patch(apps_v1.Deployment, "web", patch, namespace="default").metadata.generation == generation


def test_a_job_gets_a_selector_from_its_uid_and_the_labels_to_match(store):
    template = pod_template("calc", "busybox", restartPolicy="Never")
    job = store.create(
        batch_v1.Job(metadata=meta_v1.ObjectMeta(name="calc", namespace="default"), spec=bm.JobSpec(template=template))
    )
    uid = job.metadata.uid
    assert job.spec.selector.matchLabels == {"batch.kubernetes.io/controller-uid": uid}
    labels = job.spec.template.metadata.labels
    assert labels["batch.kubernetes.io/job-name"] == "calc" and labels["controller-uid"] == uid
    assert (job.spec.completions, job.spec.parallelism, job.spec.backoffLimit, job.spec.completionMode) == (
        1,
        1,
        6,
        "NonIndexed",
    )


def test_a_job_must_not_restart_its_pods_always(store):
    spec = bm.JobSpec(template=pod_template("calc", "busybox"))
    with pytest.raises(
        Invalid,
        match=re.escape(
            'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'
        ),
    ):
        store.create(batch_v1.Job(metadata=meta_v1.ObjectMeta(name="calc", namespace="default"), spec=spec))


@pytest.mark.parametrize(
    ("policy", "finalizers", "stays"),
    [
        (None, None, False),
        ("Background", None, False),
        ("Foreground", ["foregroundDeletion"], True),
        ("Orphan", ["orphan"], True),
    ],
)
def test_a_propagation_policy_asks_for_the_garbage_collectors_finalizer(store, policy, finalizers, stays):
    store.create(deployment("web"))
    result = store.delete(apps_v1.Deployment, "web", namespace="default", propagation_policy=policy)
    assert result.metadata.finalizers == finalizers
    assert (result.metadata.deletionTimestamp is not None) == stays
    if stays:
        store.patch(apps_v1.Deployment, "web", {"metadata": {"finalizers": None}}, namespace="default")
    with pytest.raises(NotFound):
        store.get(apps_v1.Deployment, "web", namespace="default")


def test_an_unknown_propagation_policy_is_a_bad_request(store):
    store.create(deployment("web"))
    with pytest.raises(BadRequest, match='unsupported propagationPolicy "Sideways"'):
        store.delete(apps_v1.Deployment, "web", namespace="default", propagation_policy="Sideways")


def test_a_namespace_is_finalized_then_removed(store):
    store.create(core_v1.Namespace(metadata=meta_v1.ObjectMeta(name="team")))
    store.create(make_pod("p", namespace="team").obj)
    terminating = store.delete(core_v1.Namespace, "team")
    assert terminating.status.phase == "Terminating" and terminating.spec.finalizers == ["kubernetes"]
    with pytest.raises(Conflict, match="The system is ensuring all content is removed from this namespace"):
        store.delete(core_v1.Namespace, "team")
    assert store.get(core_v1.Pod, "p", namespace="team") is not None  # emptying it is the controller's work
    store.delete(core_v1.Pod, "p", namespace="team")
    namespace = store.get(core_v1.Namespace, "team")
    store.update(replace(namespace, spec=replace(namespace.spec, finalizers=[])), subresource="finalize")
    with pytest.raises(NotFound):
        store.get(core_v1.Namespace, "team")


@pytest.mark.parametrize(
    ("obj", "generation"),
    [
        (deployment("gen-deploy"), 1),
        (make_pod("gen-pod").obj, 1),
        (make_node("gen-node").obj, None),  # nodes, namespaces and services have no generation upstream
        (core_v1.Namespace(metadata=meta_v1.ObjectMeta(name="gen-ns")), None),
        (
            core_v1.Service(
                metadata=meta_v1.ObjectMeta(name="gen-svc"), spec=m.ServiceSpec(ports=[m.ServicePort(port=80)])
            ),
            None,
        ),
        (core_v1.ConfigMap(metadata=meta_v1.ObjectMeta(name="gen-cm")), None),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, int | None) else str(v),
)
def test_only_the_kinds_that_track_a_generation_get_one(store, obj, generation):
    assert store.create(obj).metadata.generation == generation


def test_a_namespace_is_labelled_with_its_name_whatever_an_update_says(store):
    created = store.create(core_v1.Namespace(metadata=meta_v1.ObjectMeta(name="team", labels={"tier": "a"})))
    assert created.metadata.labels == {"tier": "a", "kubernetes.io/metadata.name": "team"}
    relabelled = store.patch(core_v1.Namespace, "team", {"metadata": {"labels": {"kubernetes.io/metadata.name": "x"}}})
    assert relabelled.metadata.labels["kubernetes.io/metadata.name"] == "team"
    assert store.get(core_v1.Namespace, "default").metadata.labels == {"kubernetes.io/metadata.name": "default"}


@pytest.mark.parametrize(
    ("data", "string_data", "stored"),
    [
        (None, {"password": "s3cret"}, {"password": "czNjcmV0"}),
        ({"a": "eA==", "password": "b2xk"}, {"password": "new"}, {"a": "eA==", "password": "bmV3"}),
        ({"a": "eA=="}, None, {"a": "eA=="}),
    ],
    ids=["string-data", "string-data-wins", "data-only"],
)
def test_a_secrets_string_data_is_stored_as_data(store, data, string_data, stored):
    secret = core_v1.Secret(metadata=meta_v1.ObjectMeta(name="s"), data=data, stringData=string_data)
    created = store.create(secret)
    assert (created.data, created.stringData, created.type) == (stored, None, "Opaque")
    again = store.update(replace(created, stringData={"extra": "1"}))
    assert again.data == {**stored, "extra": "MQ=="} and again.stringData is None
