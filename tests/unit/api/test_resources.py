from typing import Any

import pytest
from lightkube.models import core_v1

from kubesched.api import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    FieldError,
    pod_non_zero_requests,
    pod_requests,
    validate_pod_resources,
)

Mi = 1024 * 1024
Gi = 1024 * Mi


def c(
    requests: dict[str, Any] | None = None, *, limits: dict[str, Any] | None = None, sidecar: bool = False
) -> dict[str, Any]:
    """A container dict; ``sidecar`` marks an init container as restartable."""
    container: dict[str, Any] = {"name": "c"}
    if requests is not None or limits is not None:
        container["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    if sidecar:
        container["restartPolicy"] = "Always"
    return container


def pod(
    *containers: dict[str, Any],
    init: tuple[dict[str, Any], ...] = (),
    overhead: dict[str, Any] | None = None,
    pod_level: dict[str, Any] | None = None,
) -> core_v1.Pod:
    spec: dict[str, Any] = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    if overhead is not None:
        spec["overhead"] = overhead
    if pod_level is not None:
        spec["resources"] = {"requests": pod_level}
    return core_v1.Pod.from_dict({"spec": spec})


CASES = [
    # name, pod, requests, non-zero (milli-CPU, memory)
    ("no requests", pod(c()), {}, (100, 200 * Mi)),
    ("no containers", pod(), {}, (0, 0)),
    (
        "app containers summed",
        pod(c({"cpu": "100m", "memory": "1Gi"}), c({"cpu": "1.5", "memory": "500Mi"})),
        {"cpu": 1600, "memory": Gi + 500 * Mi},
        (1600, Gi + 500 * Mi),
    ),
    (
        "missing cpu defaults per container",
        pod(c({"memory": "1Gi"}), c({"cpu": "250m"})),
        {"cpu": 250, "memory": Gi},
        (350, Gi + 200 * Mi),
    ),
    ("explicit zero stays zero", pod(c({"cpu": "0", "memory": 0})), {"cpu": 0, "memory": 0}, (0, 0)),
    (
        "init container bigger than app",
        pod(c({"cpu": "100m", "memory": "100Mi"}), init=(c({"cpu": "2", "memory": "50Mi"}),)),
        {"cpu": 2000, "memory": 100 * Mi},
        (2000, 100 * Mi),
    ),
    (
        "init containers do not add up",
        pod(c({"cpu": "100m"}), init=(c({"cpu": "1"}), c({"cpu": "500m"}))),
        {"cpu": 1000},
        (1000, 200 * Mi),
    ),
    (
        "init container without requests counts the default",
        pod(c({"cpu": "10m", "memory": "10Mi"}), init=(c(),)),
        {"cpu": 10, "memory": 10 * Mi},
        (100, 200 * Mi),
    ),
    (
        "sidecar adds to the app sum",
        pod(c({"cpu": "1"}), init=(c({"cpu": "500m"}, sidecar=True),)),
        {"cpu": 1500},
        (1500, 400 * Mi),
    ),
    (
        "init after sidecar sees it",
        pod(c({"cpu": "100m"}), init=(c({"cpu": "500m"}, sidecar=True), c({"cpu": "2"}))),
        {"cpu": 2500},
        (2500, 400 * Mi),
    ),
    (
        "init before sidecar does not see it",
        pod(c({"cpu": "100m"}), init=(c({"cpu": "2"}), c({"cpu": "500m"}, sidecar=True))),
        {"cpu": 2000},
        (2000, 400 * Mi),
    ),
    (
        "sidecars accumulate",
        pod(
            c({"cpu": "0"}),
            init=(c({"cpu": "1"}, sidecar=True), c({"cpu": "1"}, sidecar=True), c({"cpu": "1500m"})),
        ),
        {"cpu": 3500},
        (3500, 600 * Mi),
    ),
    (
        "overhead added",
        pod(c({"cpu": "1", "memory": "1Gi"}), overhead={"cpu": "250m", "memory": "120Mi"}),
        {"cpu": 1250, "memory": Gi + 120 * Mi},
        (1250, Gi + 120 * Mi),
    ),
    (
        "overhead added to defaults",
        pod(c(), overhead={"cpu": "250m"}),
        {"cpu": 250},
        (350, 200 * Mi),
    ),
    (
        "extended and hugepages resources",
        pod(
            c({"cpu": "1", "example.com/gpu": 1, "hugepages-2Mi": "4Mi", "ephemeral-storage": "1G"}),
            c({"example.com/gpu": "2", "nvidia.com/gpu": "1"}),
        ),
        {
            "cpu": 1000,
            "example.com/gpu": 3,
            "hugepages-2Mi": 4 * Mi,
            "ephemeral-storage": 10**9,
            "nvidia.com/gpu": 1,
        },
        (1100, 400 * Mi),
    ),
    (
        "pod-level requests replace cpu and memory",
        pod(
            c({"cpu": "100m", "memory": "100Mi", "example.com/gpu": 1}),
            pod_level={"cpu": "2", "memory": "1Gi"},
        ),
        {"cpu": 2000, "memory": Gi, "example.com/gpu": 1},
        (2000, Gi),
    ),
    (
        "pod-level cpu only keeps container memory",
        pod(c({"cpu": "100m", "memory": "100Mi"}), pod_level={"cpu": "500m"}),
        {"cpu": 500, "memory": 100 * Mi},
        (500, 100 * Mi),
    ),
    (
        "pod-level set: default only where missing everywhere",
        pod(c(), c(), pod_level={"cpu": "500m"}),
        {"cpu": 500},
        (500, 400 * Mi),
    ),
    (
        "pod-level set: container memory mention suppresses the default",
        pod(c({"memory": "0"}), c(), pod_level={"cpu": "500m"}),
        {"cpu": 500, "memory": 0},
        (500, 0),
    ),
    (
        "pod-level requests smaller than containers still win",
        pod(c({"cpu": "4"}), pod_level={"cpu": "1"}),
        {"cpu": 1000},
        (1000, 200 * Mi),
    ),
    (
        "pod-level plus overhead",
        pod(c(), pod_level={"cpu": "1", "memory": "1Gi"}, overhead={"cpu": "100m"}),
        {"cpu": 1100, "memory": Gi},
        (1100, Gi),
    ),
    (
        "pod-level unsupported resource is ignored",
        pod(c({"cpu": "1"}), pod_level={"example.com/gpu": 5}),
        {"cpu": 1000},
        (1000, 200 * Mi),
    ),
    (
        "sub-milli amounts are summed before rounding",
        pod(c({"cpu": "0.5m"}), c({"cpu": "0.5m"})),
        {"cpu": 1},
        (1, 400 * Mi),
    ),
]


@pytest.mark.parametrize(("p", "requests", "non_zero"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_pod_requests(p: core_v1.Pod, requests: dict[str, int], non_zero: tuple[int, int]) -> None:
    assert pod_requests(p) == requests
    assert pod_non_zero_requests(p) == non_zero


def test_defaults() -> None:
    assert (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST) == (100, 209715200)


def test_pod_without_spec() -> None:
    assert pod_requests(core_v1.Pod()) == {}
    assert pod_non_zero_requests(core_v1.Pod()) == (0, 0)


@pytest.mark.parametrize(
    ("p", "field", "value"),
    [
        (pod(c({"cpu": "abc"})), "spec.containers[0].resources.requests[cpu]", "abc"),
        (
            pod(c(), init=(c(), c({"memory": "1KB"}))),
            "spec.initContainers[1].resources.requests[memory]",
            "1KB",
        ),
        (pod(c(), overhead={"cpu": "x"}), "spec.overhead[cpu]", "x"),
        (pod(c(), pod_level={"memory": "1 Gi"}), "spec.resources.requests[memory]", "1 Gi"),
    ],
)
def test_invalid_quantity_names_its_field(p: core_v1.Pod, field: str, value: str) -> None:
    for compute in (pod_requests, pod_non_zero_requests):
        with pytest.raises(FieldError) as caught:
            compute(p)
        assert (caught.value.field, caught.value.value) == (field, value)
    assert str(caught.value).startswith(f'{field}: Invalid value: "{value}": quantities must match')


def test_validate_pod_resources() -> None:
    p = pod(
        c({"cpu": "1", "memory": "-1Gi"}, limits={"cpu": "abc"}),
        init=(c({"cpu": "--1"}),),
        overhead={"cpu": "-100m"},
        pod_level={"cpu": "x"},
    )
    negative = "must be greater than or equal to 0"
    assert [(e.field, e.value, e.detail) for e in validate_pod_resources(p)] == [
        ("spec.containers[0].resources.requests[memory]", "-1Gi", negative),
        ("spec.containers[0].resources.limits[cpu]", "abc", ERR_FORMAT_WRONG),
        ("spec.initContainers[0].resources.requests[cpu]", "--1", ERR_SUFFIX),
        ("spec.overhead[cpu]", "-100m", negative),
        ("spec.resources.requests[cpu]", "x", ERR_FORMAT_WRONG),
    ]


def test_validate_pod_resources_clean() -> None:
    assert validate_pod_resources(pod(c({"cpu": "1"}, limits={"cpu": 2}), overhead={"memory": "1Mi"})) == []
    assert validate_pod_resources(core_v1.Pod()) == []
