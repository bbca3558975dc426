"""The OpenAPI documents kubectl reads: Swagger 2.0 (JSON and gnostic protobuf) and OpenAPI 3.0 per
group-version.

kubectl needs them for three things. Client-side validation looks a kind's schema up by the
`x-kubernetes-group-version-kind` of its definition. Before validating it asks whether the server
validates fields itself: it looks for the `fieldValidation` query parameter among the parameters of
the PATCH operation whose `x-kubernetes-group-version-kind` names the kind, and when it is there it
leaves validation to the server. `kubectl apply` builds strategic merge patches from the
`x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` of list fields, and only does so
when the kind's PATCH operation consumes `application/strategic-merge-patch+json`.

The definitions are `storage.schemas`'; this package writes the documents around them: the paths
and operations of every served kind (`v2`), the v3 documents converted from them (`v3`), and the
v2 document's gnostic protobuf encoding (`gnostic`).
"""

from kubesched import K8S_VERSION
from kubesched.apiserver.openapi.v2 import (
    V2_PROTOBUF_ACCEPT,
    swagger_v2,
    swagger_v2_json,
    swagger_v2_protobuf,
)
from kubesched.apiserver.openapi.v3 import openapi_v3_group_version, openapi_v3_group_version_json, openapi_v3_paths

__all__ = [
    "K8S_VERSION",
    "V2_PROTOBUF_ACCEPT",
    "openapi_v3_group_version",
    "openapi_v3_group_version_json",
    "openapi_v3_paths",
    "swagger_v2",
    "swagger_v2_json",
    "swagger_v2_protobuf",
]
