"""Answers as the API server writes them: an object or a Status, in JSON or, when the request
asked for it and the kind has one, in protobuf."""

from __future__ import annotations

from contextvars import ContextVar

from aiohttp import web

from kubesched.apiserver import negotiation
from kubesched.apiserver.codec import encode_protobuf
from kubesched.apiserver.jsontypes import JsonObject
from kubesched.cluster.codec import encode
from kubesched.cluster.errors import ApiError

JSON = "application/json"
PROTOBUF = negotiation.PROTOBUF

# Whether the request being served asked for protobuf answers (set per request by the server).
PROTOBUF_ANSWERS: ContextVar[bool] = ContextVar("protobuf_answers", default=False)


def respond(body: object, status: int = 200) -> web.Response:
    """`body` in JSON, or in protobuf when the request's Accept prefers it and the kind has one."""
    if PROTOBUF_ANSWERS.get() and (data := encode_protobuf(body)) is not None:
        return web.Response(body=data, status=status, content_type=PROTOBUF)
    return web.Response(body=encode(body), status=status, content_type=JSON)


def status_response(error: ApiError) -> web.Response:
    return respond(error.status(), error.code)


def success(code: int) -> JsonObject:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}
