"""ReplicaSets and Deployments on the virtual clock: replicas kept, rolling updates within their
bounds, Recreate, adoption, and the status `kubectl rollout status` reads."""

import pytest
from lightkube.models import apps_v1 as apps
from lightkube.resources import apps_v1, core_v1

from builders import ControllerLab, deployment, make_pod
from kubesched.controllers.deployment import POD_TEMPLATE_HASH, surge_and_unavailable


def _get(lab, cls, name):
    return lab.store.get(cls, name, namespace="default")


def _events(lab, kind):
    return [e.message for e in lab.store.list(core_v1.Event).items if e.involvedObject.kind == kind]


def _set_image(lab, name, image):
    patch = {"spec": {"template": {"spec": {"containers": [{"name": name, "image": image}]}}}}
    lab.store.patch(apps_v1.Deployment, name, patch, namespace="default", patch_type="strategic")


def test_a_deployment_gets_its_pods_running_and_says_so(clock):
    lab = ControllerLab(clock)
    lab.create(deployment("web", replicas=3))
    lab.advance(5)
    running = lab.running(app="web")
    assert len(running) == 3 and all(p.spec.nodeName for p in running)
    d = _get(lab, apps_v1.Deployment, "web")
    assert (d.status.replicas, d.status.updatedReplicas, d.status.availableReplicas) == (3, 3, 3)
    assert d.status.observedGeneration == d.metadata.generation == 1
    conditions = {c.type: (c.status, c.reason) for c in d.status.conditions}
    assert conditions == {
        "Available": ("True", "MinimumReplicasAvailable"),
        "Progressing": ("True", "NewReplicaSetAvailable"),
    }
    (rs,) = lab.store.list(apps_v1.ReplicaSet).items
    assert rs.metadata.name == f"web-{rs.metadata.labels[POD_TEMPLATE_HASH]}"
    assert rs.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    assert _events(lab, "Deployment") == [f"Scaled up replica set {rs.metadata.name} from 0 to 3"]
    assert len(_events(lab, "ReplicaSet")) == 3 and all(
        m.startswith("Created pod: web-") for m in _events(lab, "ReplicaSet")
    )


@pytest.mark.parametrize("replicas", [5, 1, 0])
def test_scaling_ends_with_as_many_running_pods(clock, replicas):
    lab = ControllerLab(clock)
    lab.create(deployment("web", replicas=3))
    lab.advance(5)
    lab.store.patch(apps_v1.Deployment, "web", {"spec": {"replicas": replicas}}, namespace="default")
    lab.advance(10)
    assert len(lab.running(app="web")) == replicas
    assert _get(lab, apps_v1.Deployment, "web").status.availableReplicas == replicas


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "expected"),
    [
        (4, "25%", "25%", (1, 1)),
        (3, "25%", "25%", (1, 0)),
        (10, 3, 0, (3, 0)),
        (5, 0, 0, (0, 1)),  # both zero: one may be unavailable
        (10, "10%", "34%", (1, 3)),
    ],
)
def test_surge_rounds_up_and_unavailable_rounds_down(replicas, surge, unavailable, expected):
    strategy = apps.DeploymentStrategy(
        type="RollingUpdate", rollingUpdate=apps.RollingUpdateDeployment(maxSurge=surge, maxUnavailable=unavailable)
    )
    assert surge_and_unavailable(deployment("web", replicas=replicas, strategy=strategy)) == expected


def test_a_rolling_update_stays_within_surge_and_unavailable(clock):
    strategy = apps.DeploymentStrategy(
        type="RollingUpdate", rollingUpdate=apps.RollingUpdateDeployment(maxSurge=1, maxUnavailable=1)
    )
    lab = ControllerLab(clock, nodes=4)
    lab.create(deployment("web", replicas=4, strategy=strategy))
    lab.advance(5)
    _set_image(lab, "web", "nginx:1.28")
    most, fewest = 0, 4
    for _ in range(200):
        lab.advance(0.1)
        pods = [p for p in lab.pods(app="web") if not p.metadata.deletionTimestamp]
        most = max(most, len(pods))
        fewest = min(fewest, len(lab.running(app="web")))
    assert most <= 5 and fewest >= 3
    assert sorted(p.spec.containers[0].image for p in lab.running(app="web")) == ["nginx:1.28"] * 4
    sets = {rs.spec.template.spec.containers[0].image: rs for rs in lab.store.list(apps_v1.ReplicaSet).items}
    assert (sets["nginx:1.27"].spec.replicas, sets["nginx:1.28"].spec.replicas) == (0, 4)
    assert sets["nginx:1.28"].metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    d = _get(lab, apps_v1.Deployment, "web")
    assert (d.metadata.generation, d.status.observedGeneration, d.status.updatedReplicas) == (2, 2, 4)


def test_recreate_removes_every_old_pod_before_a_new_one(clock):
    lab = ControllerLab(clock)
    lab.create(deployment("web", replicas=3, strategy=apps.DeploymentStrategy(type="Recreate")))
    lab.advance(5)
    _set_image(lab, "web", "nginx:1.28")
    overlap = False
    for _ in range(100):
        lab.advance(0.1)
        images = {p.spec.containers[0].image for p in lab.pods(app="web")}
        overlap = overlap or images == {"nginx:1.27", "nginx:1.28"}
    assert not overlap
    assert [p.spec.containers[0].image for p in lab.running(app="web")] == ["nginx:1.28"] * 3


def test_a_replica_set_adopts_a_matching_orphan_instead_of_creating_a_pod(clock):
    lab = ControllerLab(clock)
    lab.create(make_pod("stray").labels(app="web").obj)
    lab.create(
        apps_v1.ReplicaSet(
            metadata=deployment("web").metadata,
            spec=apps.ReplicaSetSpec(
                replicas=2, selector=deployment("web").spec.selector, template=deployment("web").spec.template
            ),
        )
    )
    lab.advance(5)
    pods = lab.pods(app="web")
    assert len(pods) == 2
    stray = next(p for p in pods if p.metadata.name == "stray")
    assert [(r.kind, r.name, r.controller) for r in stray.metadata.ownerReferences] == [("ReplicaSet", "web", True)]
