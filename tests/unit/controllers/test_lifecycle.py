"""Deletion as the garbage collector and the namespace controller carry it out: the three
propagation policies, and a namespace that goes through Terminating."""

import pytest
from lightkube.models import meta_v1
from lightkube.resources import apps_v1, core_v1

from builders import ControllerLab, deployment, make_pod
from kubesched.cluster.errors import Forbidden, NotFound


def _exists(lab, cls, name, namespace="default"):
    try:
        lab.store.get(cls, name, namespace=namespace)
    except NotFound:
        return False
    return True


def _started(clock):
    lab = ControllerLab(clock)
    lab.create(deployment("web", replicas=2))
    lab.advance(5)
    return lab


@pytest.mark.parametrize("policy", [None, "Background"])
def test_background_deletion_removes_the_replica_sets_and_their_pods(clock, policy):
    lab = _started(clock)
    lab.store.delete(apps_v1.Deployment, "web", namespace="default", propagation_policy=policy)
    assert not _exists(lab, apps_v1.Deployment, "web")  # at once
    lab.advance(10)
    assert lab.store.list(apps_v1.ReplicaSet).items == [] and lab.pods() == []


def test_orphan_deletion_leaves_the_dependents_without_their_owner(clock):
    lab = _started(clock)
    gone = lab.store.delete(apps_v1.Deployment, "web", namespace="default", propagation_policy="Orphan")
    assert gone.metadata.finalizers == ["orphan"]
    lab.advance(10)
    assert not _exists(lab, apps_v1.Deployment, "web")
    (rs,) = lab.store.list(apps_v1.ReplicaSet).items
    assert rs.metadata.ownerReferences is None
    assert len(lab.running(app="web")) == 2  # the ReplicaSet keeps its pods


def test_foreground_deletion_keeps_the_owner_until_its_pods_are_gone(clock):
    lab = _started(clock)
    lab.store.delete(apps_v1.Deployment, "web", namespace="default", propagation_policy="Foreground")
    lab.advance(0.1)
    d = lab.store.get(apps_v1.Deployment, "web", namespace="default")
    assert d.metadata.deletionTimestamp is not None and d.metadata.finalizers == ["foregroundDeletion"]
    assert all(p.metadata.deletionTimestamp is not None for p in lab.pods())  # being stopped by their kubelets
    lab.advance(10)
    assert lab.pods() == [] and lab.store.list(apps_v1.ReplicaSet).items == []
    assert not _exists(lab, apps_v1.Deployment, "web")


def test_a_dependent_keeps_living_while_another_owner_does(clock):
    lab = ControllerLab(clock)
    a = lab.create(core_v1.ConfigMap(metadata=meta_v1.ObjectMeta(name="a", namespace="default")))
    b = lab.create(core_v1.ConfigMap(metadata=meta_v1.ObjectMeta(name="b", namespace="default")))
    refs = [
        meta_v1.OwnerReference(apiVersion="v1", kind="ConfigMap", name=o.metadata.name, uid=o.metadata.uid)
        for o in (a, b)
    ]
    lab.create(core_v1.Secret(metadata=meta_v1.ObjectMeta(name="s", namespace="default", ownerReferences=refs)))
    lab.advance(1)
    lab.store.delete(core_v1.ConfigMap, "a", namespace="default")
    lab.advance(1)
    secret = lab.store.get(core_v1.Secret, "s", namespace="default")
    assert [r.name for r in secret.metadata.ownerReferences] == ["b"]
    lab.store.delete(core_v1.ConfigMap, "b", namespace="default")
    lab.advance(1)
    assert not _exists(lab, core_v1.Secret, "s")


def test_a_namespace_goes_through_terminating_and_refuses_new_content(clock):
    lab = ControllerLab(clock)
    lab.create(core_v1.Namespace(metadata=meta_v1.ObjectMeta(name="team")))
    assert lab.store.get(core_v1.Namespace, "team").spec.finalizers == ["kubernetes"]
    lab.create(deployment("web", replicas=2, namespace="team"))
    lab.advance(5)
    lab.store.delete(core_v1.Namespace, "team")
    ns = lab.store.get(core_v1.Namespace, "team")
    assert ns.status.phase == "Terminating"
    with pytest.raises(
        Forbidden,
        match='pods "late" is forbidden: unable to create new content in namespace team because it is being terminated',
    ):
        lab.create(make_pod("late", namespace="team").obj)
    lab.advance(0.5)
    conditions = {c.type: c.message for c in lab.store.get(core_v1.Namespace, "team").status.conditions}
    assert conditions["NamespaceContentRemaining"] == "Some resources are remaining: pods. has 2 resource instances"
    lab.advance(10)
    assert not _exists(lab, core_v1.Namespace, "team")
    assert lab.pods("team") == []


def test_without_the_namespace_controller_a_namespace_stays_terminating(clock):
    lab = ControllerLab(clock, controllers=["replicaset", "deployment", "garbagecollector"])
    lab.create(core_v1.Namespace(metadata=meta_v1.ObjectMeta(name="team")))
    lab.store.delete(core_v1.Namespace, "team")
    lab.advance(30)
    assert lab.store.get(core_v1.Namespace, "team").status.phase == "Terminating"


def test_every_active_namespace_has_a_default_service_account_made_again_when_deleted(clock):
    lab = ControllerLab(clock, controllers=["serviceaccount", "namespace"])
    assert _exists(lab, core_v1.ServiceAccount, "default", namespace="kube-system")
    lab.create(core_v1.Namespace(metadata=meta_v1.ObjectMeta(name="team")))
    lab.advance(0.1)
    assert _exists(lab, core_v1.ServiceAccount, "default", namespace="team")
    lab.store.delete(core_v1.ServiceAccount, "default", namespace="team")
    lab.advance(0.1)
    assert _exists(lab, core_v1.ServiceAccount, "default", namespace="team")
    lab.store.delete(core_v1.Namespace, "team")
    lab.advance(5)
    assert not _exists(lab, core_v1.Namespace, "team", namespace=None)
