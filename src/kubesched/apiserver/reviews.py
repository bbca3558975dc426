"""The review APIs clients ask before they act: access reviews (`kubectl auth can-i`, with
`--list` the rules review) and the self-subject review (`kubectl auth whoami`).

Access reviews are decided by the server's authorizer: with AlwaysAllow (the default) every one is
allowed and the rules review grants everything; with RBAC they say what RBAC would decide for the
user asked about, and the rules review lists the user's rules. Reviews are create-only and stored
nowhere: each POST is answered with the review and its status.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from lightkube.models import rbac_v1

from kubesched.api.errors import FieldError
from kubesched.apiserver.authn import User
from kubesched.apiserver.jsontypes import JsonObject
from kubesched.apiserver.rbac import Attributes
from kubesched.cluster.errors import BadRequest, Invalid
from kubesched.storage.typecheck import unmarshal_error

# Any: a review's spec as posted, read as its schema has it (a malformed field fails where it is read)
Spec = dict[str, Any]

AUTHORIZATION = "authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"
VERSION = "v1"

_ALL_RULES: JsonObject = {
    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    "incomplete": False,
}


class Policy(Protocol):
    """What the server's authorizer decides; `rules` None: everything is allowed."""

    def allows(self, user: User, attrs: Attributes) -> bool: ...

    def rules(self, user: User, namespace: str) -> list[rbac_v1.PolicyRule] | None: ...


@dataclass(frozen=True, slots=True)
class Review:
    group: str
    plural: str
    kind: str
    namespaced: bool
    status: Callable[[Spec, User, Policy], JsonObject]  # (spec, the requesting user, the policy) -> status

    @property
    def api_version(self) -> str:
        return f"{self.group}/{VERSION}"


def _attributes(spec: Spec) -> Attributes:
    """The attributes an access review asks about, once it names exactly one kind of them."""
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        raise _Refused(
            FieldError(
                "spec.nonResourceAttributes", non_resource, "cannot be specified in combination with resourceAttributes"
            )
        )
    if resource is None and non_resource is None:
        raise _Refused(
            FieldError(
                "spec.resourceAttributes",
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    if non_resource is not None:
        return Attributes(
            str(non_resource.get("verb", "")), resource_request=False, path=str(non_resource.get("path", ""))
        )
    assert resource is not None
    return Attributes(
        str(resource.get("verb", "")),
        api_group=str(resource.get("group", "")),
        resource=str(resource.get("resource", "")),
        subresource=str(resource.get("subresource", "")),
        namespace=str(resource.get("namespace", "")),
        name=str(resource.get("name", "")),
    )


def _access_status(spec: Spec, user: User, policy: Policy) -> JsonObject:
    return {"allowed": policy.allows(user, _attributes(spec))}


def _subject_access_status(spec: Spec, user: User, policy: Policy) -> JsonObject:
    if not (spec.get("user") or spec.get("groups")):
        raise _Refused(FieldError("spec.user", "", "at least one of user or group must be specified"))
    groups = spec.get("groups") or []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        wrong = next((g for g in groups if not isinstance(g, str)), None) if isinstance(groups, list) else groups
        raise BadRequest(unmarshal_error(wrong, "SubjectAccessReviewSpec.spec.groups", "[]string"))
    subject = User(str(spec.get("user", "")), tuple(groups), str(spec.get("uid", "")))
    return {"allowed": policy.allows(subject, _attributes(spec))}


def _rules_status(spec: Spec, user: User, policy: Policy) -> JsonObject:
    rules = policy.rules(user, str(spec.get("namespace", "")))
    if rules is None:
        return dict(_ALL_RULES)
    resource_rules, non_resource_rules = [], []
    for rule in rules:
        if rule.nonResourceURLs:
            non_resource_rules.append({"verbs": list(rule.verbs), "nonResourceURLs": list(rule.nonResourceURLs)})
        else:
            entry: JsonObject = {"verbs": list(rule.verbs), "apiGroups": list(rule.apiGroups or ())}
            entry["resources"] = list(rule.resources or ())
            if rule.resourceNames:
                entry["resourceNames"] = list(rule.resourceNames)
            resource_rules.append(entry)
    return {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}


def _whoami_status(spec: Spec, user: User, policy: Policy) -> JsonObject:
    return {"userInfo": user.to_json()}


REVIEWS: dict[tuple[str, str], Review] = {
    (r.group, r.plural): r
    for r in (
        Review(AUTHORIZATION, "selfsubjectaccessreviews", "SelfSubjectAccessReview", False, _access_status),
        Review(AUTHORIZATION, "selfsubjectrulesreviews", "SelfSubjectRulesReview", False, _rules_status),
        Review(AUTHORIZATION, "subjectaccessreviews", "SubjectAccessReview", False, _subject_access_status),
        Review(AUTHORIZATION, "localsubjectaccessreviews", "LocalSubjectAccessReview", True, _subject_access_status),
        Review(AUTHENTICATION, "selfsubjectreviews", "SelfSubjectReview", False, _whoami_status),
    )
}


class _Refused(Exception):
    def __init__(self, error: FieldError) -> None:
        self.error = error


def route(path: str) -> tuple[Review, str | None] | None:
    """The review a URL names, with its namespace (local reviews), or None."""
    parts = [p for p in path.split("/") if p]
    if len(parts) < 4 or parts[0] != "apis" or parts[2] != VERSION:
        return None
    namespace = None
    rest = parts[3:]
    if len(rest) == 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if len(rest) != 1:
        return None
    review = REVIEWS.get((parts[1], rest[0]))
    if review is None or review.namespaced != (namespace is not None):
        return None
    return review, namespace


def answer(review: Review, body: object, *, namespace: str | None, user: User, policy: Policy) -> JsonObject:
    """The review as posted, with its status (BadRequest or 422 for a malformed one)."""
    if not isinstance(body, dict):
        raise BadRequest(f"{review.kind} in version {VERSION!r} cannot be handled: the body must be an object")
    if body.get("kind") not in (None, review.kind) or body.get("apiVersion") not in (None, review.api_version):
        raise BadRequest(f"the body of the request is not a {review.api_version} {review.kind}")
    spec = body.get("spec") or {}
    if not isinstance(spec, dict):
        raise BadRequest(f"{review.kind}.spec must be an object")
    if namespace is not None:
        attrs = spec.get("resourceAttributes") or {}
        if attrs.get("namespace", namespace) != namespace:
            error = FieldError(
                "spec.resourceAttributes.namespace", attrs.get("namespace"), "must match metadata.namespace"
            )
            raise Invalid(f"{review.kind}.{review.group}", "", [error], group=review.group)
    try:
        status = review.status(spec, user, policy)
    except _Refused as refused:
        raise Invalid(f"{review.kind}.{review.group}", "", [refused.error], group=review.group) from None
    metadata = dict(body.get("metadata") or {})
    if namespace is not None:
        metadata["namespace"] = namespace
    out: JsonObject = {"kind": review.kind, "apiVersion": review.api_version, "metadata": metadata}
    if review.kind != "SelfSubjectReview":
        out["spec"] = spec
    out["status"] = status
    return out


def discovery_resources() -> dict[tuple[str, str], list[JsonObject]]:
    """The reviews' entries in their group-versions' resource lists."""
    out: dict[tuple[str, str], list[JsonObject]] = {}
    for review in REVIEWS.values():
        out.setdefault((review.group, VERSION), []).append(
            {
                "name": review.plural,
                "singularName": review.kind.lower(),
                "namespaced": review.namespaced,
                "kind": review.kind,
                "verbs": ["create"],
            }
        )
    return out
