"""RBAC decides as kube-apiserver's authorizer: rules by verb, group, resource and subresource,
resource names and non-resource URLs; roles reached through bindings; and the 403's wording."""

import pytest
from lightkube import codecs

from kubesched.apiserver.authn import ADMIN, service_account_user
from kubesched.apiserver.rbac import BOOTSTRAP, Attributes, RbacAuthorizer, forbidden
from kubesched.clock import VirtualClock
from kubesched.cluster.errors import Invalid
from kubesched.storage import MemoryStore

SA = service_account_user("team", "bot")
RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
    {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["mine"], "verbs": ["update"]},
    {"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["patch"]},
    {"nonResourceURLs": ["/metrics", "/debug/*"], "verbs": ["get"]},
]


@pytest.fixture
def authorizer():
    store = MemoryStore(clock=VirtualClock())
    for policy in BOOTSTRAP:
        store.create(codecs.from_dict(policy))
    store.create(codecs.from_dict({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
    store.create(
        codecs.from_dict(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": "bot"},
                "rules": RULES,
            }
        )
    )
    store.create(
        codecs.from_dict(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "bot", "namespace": "team"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bot"},
                "subjects": [{"kind": "ServiceAccount", "name": "bot"}],  # the binding's namespace
            }
        )
    )
    return RbacAuthorizer(store)


@pytest.mark.parametrize(
    ("attrs", "allowed"),
    [
        (Attributes("list", resource="pods", namespace="team"), True),
        (Attributes("list", resource="pods", namespace="other"), False),  # a RoleBinding grants in its namespace only
        (Attributes("watch", resource="pods", namespace="team"), False),
        (Attributes("create", resource="pods", subresource="binding", namespace="team"), True),
        (Attributes("create", resource="pods", subresource="eviction", namespace="team"), False),
        (Attributes("update", api_group="coordination.k8s.io", resource="leases", namespace="team", name="mine"), True),
        (Attributes("update", api_group="coordination.k8s.io", resource="leases", namespace="team", name="x"), False),
        (Attributes("patch", api_group="apps", resource="deployments", subresource="scale", namespace="team"), True),
        (Attributes("patch", api_group="apps", resource="deployments", namespace="team"), False),
        (Attributes("get", resource_request=False, path="/version"), True),  # system:public-info-viewer
        (Attributes("get", resource_request=False, path="/apis/apps/v1"), True),  # system:discovery
        (Attributes("get", resource_request=False, path="/metrics"), False),  # a ClusterRole bound in a namespace
    ],
)
def test_a_rule_allows_what_it_names_and_nothing_else(authorizer, attrs, allowed):
    assert authorizer.allows(SA, attrs) is allowed
    assert authorizer.allows(ADMIN, attrs)  # system:masters may do anything


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (
            Attributes("list", resource="secrets", namespace="team"),
            'secrets is forbidden: User "system:serviceaccount:team:bot" cannot list resource "secrets" in API group '
            '"" in the namespace "team"',
        ),
        (
            Attributes("get", api_group="coordination.k8s.io", resource="leases", namespace="team", name="x"),
            'leases.coordination.k8s.io "x" is forbidden: User "system:serviceaccount:team:bot" cannot get resource '
            '"leases" in API group "coordination.k8s.io" in the namespace "team"',
        ),
        (
            Attributes("create", resource="pods", subresource="eviction", namespace="team", name="p"),
            'pods "p" is forbidden: User "system:serviceaccount:team:bot" cannot create resource "pods/eviction" in '
            'API group "" in the namespace "team"',
        ),
        (
            Attributes("list", resource="nodes"),
            'nodes is forbidden: User "system:serviceaccount:team:bot" cannot list resource "nodes" in API group "" '
            "at the cluster scope",
        ),
        (
            Attributes("get", resource_request=False, path="/metrics"),
            'forbidden: User "system:serviceaccount:team:bot" cannot get path "/metrics"',
        ),
    ],
)
def test_a_denial_is_worded_as_kube_apiserver_words_it(attrs, message):
    error = forbidden(SA, attrs)
    assert (error.code, str(error)) == (403, message)


@pytest.mark.parametrize(("name", "valid"), [("system:discovery", True), ("a/b", False), ("..", False), ("50%", False)])
def test_rbac_names_are_path_segments(name, valid):
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name}}
    store = MemoryStore(clock=VirtualClock())
    if valid:
        store.create(codecs.from_dict(role))
    else:
        with pytest.raises(Invalid):
            store.create(codecs.from_dict(role))
