"""RBAC, as kube-apiserver's RBAC authorizer decides: a request is allowed when a rule of a role
bound to its user allows it — ClusterRoles through ClusterRoleBindings anywhere, Roles and
ClusterRoles through RoleBindings in the request's namespace — and `system:masters` may do
anything. Denials are 403s worded as kube-apiserver words them. `BOOTSTRAP` holds the policy
kube-apiserver creates at start that every client leans on: discovery, health and version for
everyone signed in, the self reviews, and cluster-admin for `system:masters`.

Not modelled: aggregated ClusterRoles (`aggregationRule`), and the escalation checks on writing
roles and bindings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from lightkube.models import rbac_v1 as rbac_m
from lightkube.resources import rbac_authorization_v1 as rbac_v1

from kubesched.apiserver.authn import AUTHENTICATED, MASTERS, UNAUTHENTICATED, User
from kubesched.apiserver.jsontypes import JsonObject
from kubesched.cluster.errors import Forbidden, NotFound
from kubesched.storage import MemoryStore

ALWAYS_ALLOW, RBAC = "AlwaysAllow", "RBAC"
MODES = (ALWAYS_ALLOW, RBAC)


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do, as the authorizer sees it."""

    verb: str
    resource_request: bool = True
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""


def _matches(values: Iterable[str] | None, value: str) -> bool:
    listed = list(values or ())
    return "*" in listed or value in listed


def _rule_allows(rule: rbac_m.PolicyRule, attrs: Attributes) -> bool:
    if not _matches(rule.verbs, attrs.verb):
        return False
    if not attrs.resource_request:
        return any(
            u == "*" or u == attrs.path or (u.endswith("*") and attrs.path.startswith(u[:-1]))
            for u in rule.nonResourceURLs or ()
        )
    if not _matches(rule.apiGroups, attrs.api_group):
        return False
    resources = list(rule.resources or ())
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if not ("*" in resources or combined in resources or (attrs.subresource and f"*/{attrs.subresource}" in resources)):
        return False
    names = list(rule.resourceNames or ())
    return not names or attrs.name in names


def _binds(subjects: Iterable[rbac_m.Subject] | None, user: User, namespace: str) -> bool:
    for s in subjects or ():
        if s.kind == "User" and s.name == user.name:
            return True
        if s.kind == "Group" and s.name in user.groups:
            return True
        if s.kind == "ServiceAccount" and user.name == f"system:serviceaccount:{s.namespace or namespace}:{s.name}":
            return True
    return False


class RbacAuthorizer:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def _role_rules(self, kind: str, name: str, namespace: str) -> list[rbac_m.PolicyRule]:
        role: object
        try:
            if kind == "ClusterRole":
                role = self.store.get(rbac_v1.ClusterRole, name)
            else:
                role = self.store.get(rbac_v1.Role, name, namespace=namespace)
        except NotFound:  # a binding to a role that does not exist grants nothing
            return []
        return list(role.rules or ())

    def granted(self, user: User, namespace: str) -> Iterator[rbac_m.PolicyRule]:
        """Every rule granted to `user` cluster-wide and, with `namespace`, in that namespace."""
        for binding in self.store.list(rbac_v1.ClusterRoleBinding).items:
            if _binds(binding.subjects, user, ""):
                yield from self._role_rules("ClusterRole", binding.roleRef.name, "")
        if namespace:
            for binding in self.store.list(rbac_v1.RoleBinding, namespace=namespace).items:
                if _binds(binding.subjects, user, namespace):
                    yield from self._role_rules(binding.roleRef.kind, binding.roleRef.name, namespace)

    def allows(self, user: User, attrs: Attributes) -> bool:
        if MASTERS in user.groups:
            return True
        return any(_rule_allows(rule, attrs) for rule in self.granted(user, attrs.namespace))

    def rules(self, user: User, namespace: str) -> list[rbac_m.PolicyRule] | None:
        """The rules review's answer: `user`'s rules (None for `system:masters`: everything)."""
        return None if MASTERS in user.groups else list(self.granted(user, namespace))


class AlwaysAllow:
    def allows(self, user: User, attrs: Attributes) -> bool:
        return True

    def rules(self, user: User, namespace: str) -> list[rbac_m.PolicyRule] | None:
        return None


def forbidden(user: User, attrs: Attributes) -> Forbidden:
    """The 403 kube-apiserver answers a denied request with."""
    if not attrs.resource_request:
        return Forbidden(f'forbidden: User "{user.name}" cannot {attrs.verb} path "{attrs.path}"')
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    scope = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    reason = f'User "{user.name}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" {scope}'
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    return Forbidden(f"{subject} is forbidden: {reason}", kind=attrs.resource, group=attrs.api_group, name=attrs.name)


def _cluster_role(name: str, rules: list[JsonObject]) -> JsonObject:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rules,
    }


def _binding(name: str, *groups: str) -> JsonObject:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in groups],
    }


_PUBLIC = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
BOOTSTRAP: tuple[JsonObject, ...] = (
    _cluster_role(
        "cluster-admin",
        [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, {"nonResourceURLs": ["*"], "verbs": ["*"]}],
    ),
    _binding("cluster-admin", MASTERS),
    _cluster_role(
        "system:discovery",
        [
            {
                "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", *_PUBLIC],
                "verbs": ["get"],
            }
        ],
    ),
    _binding("system:discovery", AUTHENTICATED),
    _cluster_role(
        "system:basic-user",
        [
            {
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                "verbs": ["create"],
            },
            {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
        ],
    ),
    _binding("system:basic-user", AUTHENTICATED),
    _cluster_role("system:public-info-viewer", [{"nonResourceURLs": _PUBLIC, "verbs": ["get"]}]),
    _binding("system:public-info-viewer", AUTHENTICATED, UNAUTHENTICATED),
)
