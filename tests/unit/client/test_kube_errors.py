"""A `Status` reply becomes the same typed error the memory backend raises."""

from __future__ import annotations

import msgspec
import pytest

from kubesched.api.errors import FieldError
from kubesched.client.errors import ServiceUnavailable, error_from_reply, error_from_status
from kubesched.cluster.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    InternalError,
    Invalid,
    NotFound,
    Timeout,
    TooLargeResourceVersion,
    TooManyRequests,
    Unauthorized,
    conflict,
)


@pytest.mark.parametrize(
    "error",
    [
        NotFound('pods "a" not found', kind="pods", name="a"),
        AlreadyExists('pods "a" already exists', kind="pods", name="a"),
        conflict("pods/binding", "a", 'pod a is already assigned to node "n1"', kind="pods/binding"),
        Gone("too old resource version: 3 (10)"),
        BadRequest("the body of the request could not be decoded"),
        Forbidden('pods is forbidden: User "x" cannot list resource "pods"'),
        Unauthorized("Unauthorized"),
        InternalError("Internal error occurred: boom"),
        TooManyRequests(
            "Cannot evict pod as it would violate the pod's disruption budget.",
            causes=[{"reason": "DisruptionBudget", "message": "needs 1 healthy pods"}],
        ),
        Invalid(
            "Pod",
            "a",
            [
                FieldError("spec.containers", None, "", kind="Required value"),
                FieldError("metadata.name", "A", "a lowercase RFC 1123 subdomain"),
            ],
        ),
        Invalid("Binding", "a", [FieldError("target.name", None, "", kind="Required value")]),
    ],
    ids=lambda e: type(e).__name__,
)
def test_round_trip_through_the_wire_status(error):
    body = msgspec.json.encode(error.status())
    got = error_from_reply(error.code, body)
    assert type(got) is type(error)
    assert (got.message, str(got), got.kind, got.name, got.group) == (
        error.message,
        str(error),
        error.kind,
        error.name,
        error.group,
    )
    assert got.status() == error.status()


def test_gone_comes_from_the_code_whatever_the_reason_says():
    assert isinstance(error_from_status(410, {"reason": "Gone", "message": "x"}), Gone)
    assert isinstance(error_from_status(410, {"reason": "Expired", "message": "x"}), Gone)
    assert isinstance(error_from_status(410, {"message": "x"}), Gone)


def test_conflict_and_already_exists_share_409_and_are_told_apart_by_reason():
    assert type(error_from_status(409, {"reason": "AlreadyExists"})) is AlreadyExists
    assert type(error_from_status(409, {"reason": "Conflict"})) is Conflict
    assert type(error_from_status(409, {})) is Conflict


def test_a_reason_that_contradicts_the_code_yields_to_the_code():
    assert type(error_from_status(404, {"reason": "Conflict"})) is NotFound


def test_codes_without_a_class_fall_back_by_range():
    assert type(error_from_status(418, {"message": "teapot"})) is BadRequest
    assert type(error_from_status(502, {"message": "bad gateway"})) is InternalError
    assert type(error_from_status(503, {})) is ServiceUnavailable


def test_a_reply_that_is_not_a_status_keeps_its_text():
    error = error_from_reply(502, b"<html>Bad Gateway</html>")
    assert type(error) is InternalError
    assert error.message == "the server responded with HTTP 502: <html>Bad Gateway</html>"
    assert error_from_reply(500, b"").message == "the server responded with HTTP 500"


def test_too_large_resource_version_is_recognised_by_its_cause_as_client_go_does():
    status = TooLargeResourceVersion(5000, 12).status()
    assert (status["code"], status["reason"], status["details"]["retryAfterSeconds"]) == (504, "Timeout", 1)
    assert status["message"] == "Timeout: Too large resource version: 5000, current: 12"
    assert status["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
    error = error_from_status(504, status)
    assert type(error) is TooLargeResourceVersion and str(error) == status["message"]
    plain = error_from_status(504, {"kind": "Status", "code": 504, "reason": "Timeout", "message": "slow"})
    assert type(plain) is Timeout
