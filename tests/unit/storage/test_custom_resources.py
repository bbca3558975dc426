"""CustomResourceDefinitions in the memory store: once created, the kind is served like a built-in
one (typed views of it too), objects are checked against its schema, and deleting it removes them."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from lightkube.models import meta_v1
from lightkube.resources import apiextensions_v1

from builders import plugins_crd
from kubesched.cluster import AlreadyExists, Invalid
from kubesched.cluster.custom import custom_resource

PodGroup = custom_resource(group="scheduling.x-k8s.io", version="v1alpha1", kind="PodGroup", plural="podgroups")


class Spec(msgspec.Struct, omit_defaults=True):
    minMember: int = 0
    scheduleTimeoutSeconds: int | None = None


class Status(msgspec.Struct, omit_defaults=True):
    phase: str = ""


TypedPodGroup = custom_resource(
    group="scheduling.x-k8s.io", version="v1alpha1", kind="PodGroup", plural="podgroups", spec=Spec, status=Status
)


def group(name: str, **spec: Any) -> Any:
    return PodGroup(metadata=meta_v1.ObjectMeta(name=name, namespace="default"), spec=spec)


@pytest.fixture
def served(store):
    store.create(plugins_crd("podgroups"))
    return store


def test_a_kind_is_served_once_its_crd_is_established(store):
    with pytest.raises(TypeError, match="not served"):
        store.list(PodGroup)
    created = store.create(plugins_crd("podgroups"))
    conditions = {c.type: c.status for c in created.status.conditions}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert created.status.acceptedNames.shortNames == ["pg", "pgs"]
    kind = store.kind_of(PodGroup)
    assert (kind.plural, kind.group, kind.version, kind.namespaced, kind.short_names) == (
        "podgroups",
        "scheduling.x-k8s.io",
        "v1alpha1",
        True,
        ("pg", "pgs"),
    )
    assert kind.has_status


def test_objects_are_created_listed_and_watched(served, clock):
    watch = served.watch(PodGroup)
    made = served.create(group("g1", minMember=4))
    assert made.metadata.uid and made.metadata.resourceVersion
    assert made.apiVersion == "scheduling.x-k8s.io/v1alpha1" and made.kind == "PodGroup"
    assert [g.metadata.name for g in served.list(PodGroup).items] == ["g1"]
    assert served.get(PodGroup, "g1", namespace="default").spec == {"minMember": 4}
    clock.run_until_idle()
    assert [(e.type, e.object.metadata.name) for e in watch.drain()] == [("ADDED", "g1")]


def test_a_typed_class_of_the_same_kind_is_a_view_of_the_same_objects(served):
    served.create(group("g1", minMember=4, scheduleTimeoutSeconds=30))
    typed = served.get(TypedPodGroup, "g1", namespace="default")
    assert isinstance(typed, TypedPodGroup) and typed.spec == Spec(minMember=4, scheduleTimeoutSeconds=30)
    typed.status = Status(phase="Scheduling")
    served.update(typed, subresource="status")
    assert served.get(PodGroup, "g1", namespace="default").status == {"phase": "Scheduling"}


def test_an_update_without_the_status_subresource_keeps_the_status(served):
    served.create(group("g1", minMember=4))
    current = served.get(PodGroup, "g1", namespace="default")
    served.update(msgspec.structs.replace(current, status={"phase": "Running"}), subresource="status")
    current = served.get(PodGroup, "g1", namespace="default")
    served.update(msgspec.structs.replace(current, spec={"minMember": 5}, status={"phase": "Pending"}))
    after = served.get(PodGroup, "g1", namespace="default")
    assert (after.spec, after.status) == ({"minMember": 5}, {"phase": "Running"})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"minMember": "four"},
            'spec.minMember: Invalid value: "string": spec.minMember in body must be of type integer: "string"',
        ),
        (
            {"minMember": 0},
            "spec.minMember: Invalid value: 0: spec.minMember in body should be greater than or equal to 1",
        ),
        (
            {"minMember": 2, "minResources": {"cpu": [1]}},
            "spec.minResources.cpu: Invalid value: [1]: "
            "spec.minResources.cpu in body must be of type integer,string: [1]",
        ),
    ],
)
def test_an_object_the_schema_refuses_is_invalid_naming_the_field(served, spec, message):
    with pytest.raises(Invalid) as err:
        served.create(group("bad", **spec))
    assert message in str(err.value)
    assert 'PodGroup.scheduling.x-k8s.io "bad" is invalid' in str(err.value)


def test_deleting_the_crd_deletes_its_objects_and_stops_serving_the_kind(served, clock):
    served.create(group("g1", minMember=2))
    served.create(group("g2", minMember=3))
    watch = served.watch(PodGroup, resource_version=str(served.resource_version))
    served.delete(apiextensions_v1.CustomResourceDefinition, "podgroups.scheduling.x-k8s.io")
    clock.run_until_idle()
    assert [(e.type, e.object.metadata.name) for e in watch.drain()] == [("DELETED", "g1"), ("DELETED", "g2")]
    with pytest.raises(TypeError, match="not served"):
        served.list(PodGroup)
    with pytest.raises(TypeError, match="not served"):
        served.list(TypedPodGroup)


def test_a_crd_with_a_wrong_name_or_a_kind_already_served_is_refused(served):
    wrong = plugins_crd("elasticquotas")
    wrong.metadata.name = "quotas.example.com"
    with pytest.raises(Invalid, match=r'metadata.name: Invalid value: "quotas.example.com": must be spec.names.plural'):
        served.create(wrong)
    again = plugins_crd("podgroups")
    again.metadata.name = "podgroups.scheduling.x-k8s.io"
    with pytest.raises(AlreadyExists, match=r'podgroups\.scheduling\.x-k8s\.io" already exists'):
        served.create(again)
    rival = plugins_crd("podgroups")
    rival.spec.names.plural = "groups"
    rival.metadata.name = "groups.scheduling.x-k8s.io"
    with pytest.raises(Invalid, match=r'spec.names.kind: Invalid value: "PodGroup": is already in use'):
        served.create(rival)
