"""An object's identity and kind: what `api.objects` reads and refuses."""

from __future__ import annotations

import pytest
from lightkube.generic_resource import create_namespaced_resource
from lightkube.models import meta_v1
from lightkube.resources import apps_v1, core_v1

from builders import make_pod
from kubesched.api.objects import decoded, key_of, meta_of, present, served


@pytest.mark.parametrize(
    ("document", "cls"),
    [
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}}, core_v1.Pod),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}, core_v1.Namespace),
    ],
)
def test_a_document_of_a_built_in_kind_decodes_to_its_class(document, cls):
    obj = decoded(document)
    assert type(obj) is cls and key_of(obj)[1] == "a"


def test_a_document_of_a_generic_resource_is_refused_by_its_kind():
    create_namespaced_resource("objects.test", "v1", "Gizmo", "gizmos")  # untyped: a dict, no model
    with pytest.raises(TypeError, match=r"^Gizmo: not a kind with a model$"):
        decoded({"apiVersion": "objects.test/v1", "kind": "Gizmo", "metadata": {"name": "w", "namespace": "ns"}})


@pytest.mark.parametrize(
    ("cls", "expected"),
    [(core_v1.Pod, True), (apps_v1.Deployment, True), (meta_v1.ObjectMeta, False), (dict, False)],
)
def test_served_tells_a_kind_from_a_model(cls, expected):
    assert served(cls) is expected


def test_an_object_without_metadata_has_no_identity_to_read():
    with pytest.raises(ValueError, match="a Pod without metadata"):
        meta_of(core_v1.Pod())


def test_present_gives_a_set_field_and_names_an_unset_one() -> None:
    pod = make_pod("p").obj
    assert present(pod.spec, "the pod's spec") is pod.spec
    with pytest.raises(ValueError, match=r"^the pod's status\.nodeName is not set$"):
        present(None, "the pod's status.nodeName")
