"""Effective pod requests as kube-scheduler accounts them (``resourcehelper.PodRequests``).

Amounts are aggregated exactly and converted once at the end, as upstream converts the summed
quantities: cpu to milli-CPU, every other resource to whole units (bytes for memory).
Status-reported (in-place resize) resources are not considered: requests come from the spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from lightkube.models import core_v1

from kubesched.api.errors import FieldError
from kubesched.api.quantity import parse_quantity

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
HUGEPAGES_PREFIX = "hugepages-"

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_NANO = 10**9
_NON_ZERO_DEFAULTS: Mapping[str, int] = {
    CPU: DEFAULT_MILLI_CPU_REQUEST * 10**6,
    MEMORY: DEFAULT_MEMORY_REQUEST * _NANO,
}

# Amounts are kept in nano-units: every parsed quantity is a whole number of them (finer values
# round up at parse time), so sums are exact integer arithmetic.
_Amounts = dict[str, int]


@lru_cache(maxsize=8192)
def _nano(value: str | int | float) -> int:
    return int(parse_quantity(value) * _NANO)


def _round_up(nano: int, unit: int) -> int:
    """Whole `unit`s, rounded away from zero (upstream's Value/MilliValue)."""
    return -(-nano // unit) if nano >= 0 else nano // unit


def is_pod_level_resource(name: str) -> bool:
    """Whether ``spec.resources`` may set ``name`` (cpu, memory, hugepages-*)."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


@dataclass(frozen=True, slots=True)
class _PodAmounts:
    """The request lists of one pod, parsed."""

    containers: tuple[_Amounts, ...]
    init_containers: tuple[tuple[_Amounts, bool], ...]  # (requests, is restartable sidecar)
    pod_level: _Amounts | None  # set only when it names a pod-level resource
    overhead: _Amounts


def _parse_list(resources: Mapping[str, str | int | float] | None, path: str) -> _Amounts:
    out: _Amounts = {}
    for name, q in (resources or {}).items():
        try:
            out[name] = _nano(q)
        except FieldError:
            parse_quantity(q, field=f"{path}[{name}]")  # raises, naming the field
            raise
    return out


def _container_requests(container: core_v1.Container, path: str) -> _Amounts:
    resources = container.resources
    return _parse_list(resources.requests if resources else None, f"{path}.resources.requests")


def _read(pod: core_v1.Pod) -> _PodAmounts:
    spec = pod.spec
    if spec is None:
        return _PodAmounts((), (), None, {})
    pod_level = _parse_list(spec.resources.requests if spec.resources else None, "spec.resources.requests")
    return _PodAmounts(
        containers=tuple(_container_requests(c, f"spec.containers[{i}]") for i, c in enumerate(spec.containers or ())),
        init_containers=tuple(
            (_container_requests(c, f"spec.initContainers[{i}]"), c.restartPolicy == "Always")
            for i, c in enumerate(spec.initContainers or ())
        ),
        pod_level=pod_level if any(is_pod_level_resource(n) for n in pod_level) else None,
        overhead=_parse_list(spec.overhead, "spec.overhead"),
    )


def _add(into: _Amounts, amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        into[name] = into.get(name, 0) + amount


def _raise_to(into: _Amounts, amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def _aggregate(pod: _PodAmounts, defaults: Mapping[str, int]) -> _Amounts:
    """Upstream's aggregation; ``defaults`` fill requests a container leaves out entirely."""

    def filled(requests: _Amounts) -> _Amounts:
        missing = {n: a for n, a in defaults.items() if n not in requests}
        return {**requests, **missing} if missing else requests

    total: _Amounts = {}
    for requests in pod.containers:
        _add(total, filled(requests))
    sidecars: _Amounts = {}
    init_peak: _Amounts = {}
    for requests, restartable in pod.init_containers:
        requests = filled(requests)
        if restartable:
            # A sidecar keeps running: it adds to the pod total and to what later init containers see.
            _add(total, requests)
            _add(sidecars, requests)
            _raise_to(init_peak, sidecars)
        else:
            candidate = dict(requests)
            _add(candidate, sidecars)
            _raise_to(init_peak, candidate)
    _raise_to(total, init_peak)
    if pod.pod_level is not None:
        total.update({n: a for n, a in pod.pod_level.items() if is_pod_level_resource(n)})
    _add(total, pod.overhead)
    return total


def _to_int(amounts: _Amounts) -> dict[str, int]:
    return {n: _round_up(a, 10**6) if n == CPU else _round_up(a, _NANO) for n, a in amounts.items()}


def pod_requests(pod: core_v1.Pod) -> dict[str, int]:
    """The pod's effective requests: cpu in milli-CPU, everything else in whole units.

    Containers are summed; init containers contribute their peak (a regular one on top of the
    sidecars started before it, sidecars cumulatively and also to the running sum); the larger
    of the two wins per resource. Pod-level requests then replace cpu, memory and hugepages-*
    when set, and ``spec.overhead`` is added. Raises ``FieldError`` for a malformed quantity.
    """
    return _to_int(_aggregate(_read(pod), {}))


def cpu_and_memory(pod: core_v1.Pod) -> dict[str, int]:
    """The pod's cpu (milli-CPU) and memory requests as `pod_requests` counts them, for showing;
    {} when a quantity does not parse."""
    try:
        amounts = pod_requests(pod)
    except FieldError:
        return {}
    return {CPU: amounts.get(CPU, 0), MEMORY: amounts.get(MEMORY, 0)}


def pod_non_zero_requests(pod: core_v1.Pod) -> tuple[int, int]:
    """(milli-CPU, memory bytes) as the scheduler's NonZeroRequested counts them.

    Like ``pod_requests``, but a container that does not mention cpu counts 100m and one that
    does not mention memory 200Mi (an explicit 0 stays 0). With pod-level requests set, a default
    applies only when the resource appears nowhere in the pod's requests (pod level, containers
    or overhead).
    """
    return pod_request_summary(pod)[1:]


def pod_request_summary(pod: core_v1.Pod) -> tuple[dict[str, int], int, int]:
    """`pod_requests` and `pod_non_zero_requests` together, reading the pod once."""
    parsed = _read(pod)
    requests = _aggregate(parsed, {})
    if parsed.pod_level is None:
        defaults = _NON_ZERO_DEFAULTS
    else:
        defaults = {n: a for n, a in _NON_ZERO_DEFAULTS.items() if n not in requests}
    non_zero = _aggregate(parsed, defaults) if defaults else requests
    return _to_int(requests), _round_up(non_zero.get(CPU, 0), 10**6), _round_up(non_zero.get(MEMORY, 0), _NANO)


def validate_pod_resources(pod: core_v1.Pod) -> list[FieldError]:
    """Every malformed or negative quantity in container requests/limits, overhead and pod level."""
    return validate_spec_resources(pod.spec) if pod.spec is not None else []


def validate_spec_resources(spec: core_v1.PodSpec) -> list[FieldError]:
    """`validate_pod_resources` for a pod spec."""
    lists: list[tuple[Mapping[str, str | int | float] | None, str, int, str]] = []
    for kind, containers in (("containers", spec.containers), ("initContainers", spec.initContainers)):
        for i, container in enumerate(containers or ()):
            if res := container.resources:
                lists.append((res.requests, kind, i, "requests"))
                lists.append((res.limits, kind, i, "limits"))
    lists.append((spec.overhead, "overhead", -1, ""))
    if res := spec.resources:
        lists.append((res.requests, "resources", -1, "requests"))
        lists.append((res.limits, "resources", -1, "limits"))
    errors: list[FieldError] = []
    for resources, kind, i, part in lists:
        for name, value in (resources or {}).items():
            if (problem := _quantity_problem(value)) is not None:
                path = f"spec.{kind}[{i}].resources.{part}" if i >= 0 else f"spec.{kind}.{part}".rstrip(".")
                errors.append(FieldError(f"{path}[{name}]", value, problem))
    return errors


@lru_cache(maxsize=4096)
def _quantity_problem(value: str | int | float) -> str | None:
    """Why a quantity is not acceptable in a resource list, or None (cached: lists repeat values)."""
    try:
        amount = parse_quantity(value)
    except FieldError as exc:
        return exc.detail
    return "must be greater than or equal to 0" if amount < 0 else None
