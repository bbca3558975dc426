"""Who a request is, from its bearer token: the holder of the cluster's own token (the admin, in
`system:masters`), a ServiceAccount through a token the TokenRequest API issued
(`kubectl create token`), or, on a cluster without a token, anyone (`system:anonymous`).

ServiceAccount tokens are opaque random strings, not signed JWTs: valid on this server until they
expire or their ServiceAccount is deleted (or recreated: the token names its UID), as a bound
token is.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from kubesched.apiserver.jsontypes import JsonObject
from kubesched.cluster.errors import Unauthorized

MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
DEFAULT_TOKEN_SECONDS = 3600  # TokenRequest's default expirationSeconds
MIN_TOKEN_SECONDS = 600  # the shortest expiration the TokenRequest API accepts


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...]
    uid: str = ""

    def to_json(self) -> JsonObject:
        out: JsonObject = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        return out


ADMIN = User("kubesched-admin", (MASTERS, AUTHENTICATED))
ANONYMOUS = User("system:anonymous", (UNAUTHENTICATED,))


def service_account_user(namespace: str, name: str, uid: str = "") -> User:
    """A ServiceAccount's user, as the service-account authenticator names it."""
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED)
    return User(f"system:serviceaccount:{namespace}:{name}", groups, uid)


@dataclass(frozen=True)
class _Issued:
    namespace: str
    name: str
    uid: str
    expires: float


class Authenticator:
    """`admin_token` None: no token is asked for and everyone is anonymous. `service_account_uid`
    tells whether a ServiceAccount still exists (its UID, or None)."""

    def __init__(
        self,
        admin_token: str | None,
        *,
        now: Callable[[], float],
        service_account_uid: Callable[[str, str], str | None],
    ) -> None:
        self._admin = admin_token
        self._now = now
        self._uid_of = service_account_uid
        self._issued: dict[str, _Issued] = {}

    @property
    def required(self) -> bool:
        return self._admin is not None

    def authenticate(self, authorization: str) -> User:
        """The user of an `Authorization` header; Unauthorized when a token is required and this
        one is missing, unknown or expired."""
        if self._admin is None:
            return ANONYMOUS
        scheme, _, given = authorization.partition(" ")
        token = given.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("Unauthorized")
        if hmac.compare_digest(token.encode(), self._admin.encode()):
            return ADMIN
        issued = self._issued.get(token)
        if issued is None or issued.expires <= self._now() or self._uid_of(issued.namespace, issued.name) != issued.uid:
            raise Unauthorized("Unauthorized")
        return service_account_user(issued.namespace, issued.name, issued.uid)

    def issue(self, namespace: str, name: str, uid: str, seconds: int) -> tuple[str, float]:
        """A token for the ServiceAccount, valid `seconds`; the token and when it expires."""
        token = f"kubesched-sa.{secrets.token_urlsafe(32)}"
        expires = self._now() + seconds
        self._issued[token] = _Issued(namespace, name, uid, expires)
        return token, expires
