"""Each kind's subresources come from its strategy, and the API server serves exactly those."""

import pytest
from lightkube.resources import apps_v1, core_v1

from builders import binding, make_node, make_pod, plugins_crd
from kubesched.apiserver.subresources import Subresources
from kubesched.cluster.errors import MethodNotAllowed, NotFound
from kubesched.cluster.kinds import KINDS
from kubesched.storage.subresources import Action, Delegated, Facet, Part, Unserved


def test_every_kind_serves_what_discovery_lists(store):
    store.create(plugins_crd("podgroups"))  # a CRD with a status subresource
    for kind in store.kinds():
        assert set(store.subresources(kind)) == set(kind.subresources), kind.qualified


@pytest.mark.parametrize(
    ("cls", "name", "shape"),
    [
        (core_v1.Pod, "status", Part),
        (core_v1.Pod, "binding", Action),
        (core_v1.Pod, "eviction", Action),
        (core_v1.Pod, "log", Unserved),
        (core_v1.Namespace, "finalize", Part),
        (apps_v1.Deployment, "scale", Facet),
        (core_v1.ReplicationController, "scale", Facet),
        (core_v1.ServiceAccount, "token", Delegated),
    ],
)
def test_shape_of_each_subresource(store, cls, name, shape):
    assert isinstance(store.subresources(KINDS[cls])[name], shape)


def test_post_binds_through_the_pods_binding_subresource(store):
    store.create(make_node("n1").obj)
    pod = store.create(make_pod("a").obj)
    bound = store.post(core_v1.Pod, "binding", binding(pod, "n1"))
    assert bound.spec.nodeName == "n1"
    assert store.get(core_v1.Pod, "a", namespace="default").spec.nodeName == "n1"


@pytest.mark.parametrize(
    ("cls", "name", "error", "message"),
    [
        (core_v1.Pod, "status", MethodNotAllowed, "does not allow this method"),
        (core_v1.Node, "binding", NotFound, "nodes binding subresource is not served"),
        (core_v1.ConfigMap, "status", NotFound, "configmaps status subresource is not served"),
    ],
)
def test_post_refuses_what_does_not_act(store, cls, name, error, message):
    with pytest.raises(error, match=message):
        store.post(cls, name, binding(make_pod("a").obj, "n1"))


def test_a_delegated_subresource_needs_a_handler_in_the_server(store):
    served = store.subresources(KINDS[core_v1.ServiceAccount])
    with pytest.raises(LookupError, match="no handler for the token subresource"):
        Subresources(store, whole={}, delegated={}).check(served)
