"""A capacity answer as cluster-capacity gives it: the ClusterCapacityReview document (the same
field names and nesting, so what reads cluster-capacity's `-o json` reads this) and its text.

Two additions, both ignored by readers that do not know them: each `status.pods` entry carries
the `replicas` placed and its own `failReason` (several templates each stop for a reason of their
own); the top-level `failReason` is that of the first template that stopped short of its count,
else the last template's.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import NotRequired, TypedDict

from kubesched.api import yamlfile
from kubesched.api.quantity import format_bytes, format_milli_cpu, parse_quantity, to_milli, to_units
from kubesched.plugins.resource_scoring import is_scalar_resource_name
from kubesched.whatif.capacity import LIMIT_REACHED, Placed, StopReason
from kubesched.whatif.documents import mapping, mappings, metadata, section

GPU = "nvdia.com/gpu"  # cluster-capacity's spelling: its reports always carry this key, at zero
FORMATS = ("json", "yaml")


class FailReason(TypedDict):
    failType: str
    failMessage: str


class Resources(TypedDict):
    primaryResources: dict[str, str]
    scalarResources: dict[str, int] | None


class Requirements(TypedDict):
    podName: object
    resources: Resources
    nodeSelectors: dict[str, object] | None


class ReviewSpec(TypedDict):
    templates: list[dict[str, object]]
    replicas: int
    podRequirements: list[Requirements]


class OnNode(TypedDict):
    nodeName: str
    replicas: int


class PodReview(TypedDict):
    podName: str
    replicasOnNodes: list[OnNode]
    failSummary: None
    replicas: int
    failReason: FailReason | None


class ReviewStatus(TypedDict):
    creationTimestamp: str
    replicas: int
    failReason: FailReason | None
    pods: list[PodReview]
    nodesNeeded: NotRequired[dict[str, object]]  # `capacity --nodes-needed` adds it


class Review(TypedDict):
    """A ClusterCapacityReview, as cluster-capacity's `-o json` gives it (see the module)."""

    spec: ReviewSpec
    status: ReviewStatus


def _binary(text: str) -> bool:
    return str(text).rstrip().endswith("i")


def _requests(pod: Mapping[str, object]) -> list[dict[str, object]]:
    """Each container's requests (empty for one without)."""
    return [section(section(c, "resources"), "requests") for c in mappings(section(pod, "spec"), "containers")]


def _quantity(value: object) -> str | int | float:
    """`value` as parse_quantity reads it: a number as it is, anything else as its text."""
    return value if isinstance(value, str | int | float) else str(value)


def _total(pod: Mapping[str, object], name: str) -> tuple[Fraction, bool]:
    """The sum of the containers' requests for `name`, and whether the last container asking for
    it wrote a binary (Ki, Mi, ...) quantity, whose suffixes the sum is then printed with."""
    total, binary = Fraction(0), name == "memory"
    for requests in _requests(pod):
        value = requests.get(name)
        if value is not None:
            total += parse_quantity(_quantity(value))
            binary = _binary(str(value))
    return total, binary


def _text(amount: Fraction, *, binary: bool) -> str:
    if binary and amount.denominator == 1:
        return format_bytes(int(amount))
    return format_milli_cpu(to_milli(amount))


def requirements(pod: Mapping[str, object]) -> Requirements:
    """What one template asks for, as cluster-capacity sums it: containers' requests only."""
    cpu, cpu_binary = _total(pod, "cpu")
    memory, memory_binary = _total(pod, "memory")
    scalar: dict[str, int] = {}
    for requests in _requests(pod):
        for name, value in requests.items():
            if name not in ("cpu", "memory") and is_scalar_resource_name(name):
                scalar[name] = scalar.get(name, 0) + to_units(parse_quantity(_quantity(value)))
    selector = section(pod, "spec").get("nodeSelector")
    return {
        "podName": metadata(pod)["name"],
        "resources": {
            "primaryResources": {
                "cpu": _text(cpu, binary=cpu_binary),
                "memory": _text(memory, binary=memory_binary),
                GPU: "0",
            },
            "scalarResources": dict(sorted(scalar.items())) or None,
        },
        "nodeSelectors": None if selector is None else mapping(selector, "spec.nodeSelector"),
    }


def _reason(stop: StopReason | None) -> FailReason | None:
    return None if stop is None else {"failType": stop.fail_type, "failMessage": stop.fail_message.strip()}


def headline(results: Sequence[Placed]) -> StopReason | None:
    """The stop reason the review leads with (see the module)."""
    for placed in results:
        if placed.stop is not None and placed.stop.fail_type != LIMIT_REACHED:
            return placed.stop
    return results[-1].stop if results else None


def review(results: Sequence[Placed], *, max_limit: int, now: datetime.datetime | None = None) -> Review:
    """The ClusterCapacityReview of a simulation."""
    stamp = (now or datetime.datetime.now(datetime.UTC)).isoformat().replace("+00:00", "Z")
    return {
        "spec": {
            "templates": [p.template.pod for p in results],
            "replicas": max_limit,
            "podRequirements": [requirements(p.template.pod) for p in results],
        },
        "status": {
            "creationTimestamp": stamp,
            "replicas": sum(len(p.nodes) for p in results),
            "failReason": _reason(headline(results)),
            "pods": [
                {
                    "podName": p.template.name,
                    "replicasOnNodes": [{"nodeName": n, "replicas": c} for n, c in p.on_nodes()],
                    "failSummary": None,
                    "replicas": len(p.nodes),
                    "failReason": _reason(p.stop),
                }
                for p in results
            ],
        },
    }


def dumps(document: Mapping[str, object], output: str) -> str:
    """The review in `output` (json: one line, as cluster-capacity prints it; yaml: keys sorted)."""
    if output == "json":
        return json.dumps(document, separators=(",", ":")) + "\n"
    return yamlfile.dumps(document)


def _selector(labels: Mapping[str, object]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _go_map(values: dict[str, int]) -> str:
    return "map[" + " ".join(f"{k}:{v}" for k, v in sorted(values.items())) + "]"


def text(document: Review, *, verbose: bool) -> str:
    """The review as cluster-capacity prints it without `-o`: one count a template, or, verbose,
    each template's requirements, the counts, the termination reason and the distribution."""
    lines: list[str] = []
    spec, status = document["spec"], document["status"]
    if verbose:
        for req in spec["podRequirements"]:
            primary = req["resources"]["primaryResources"]
            lines += [f"{req['podName']} pod requirements:", f"\t- CPU: {primary['cpu']}"]
            lines.append(f"\t- Memory: {primary['memory']}")
            if req["resources"]["scalarResources"] is not None:
                lines.append(f"\t- ScalarResources: {_go_map(req['resources']['scalarResources'])}")
            if req["nodeSelectors"] is not None:
                lines.append(f"\t- NodeSelector: {_selector(req['nodeSelectors'])}")
            lines.append("")
    for pod in status["pods"]:
        count = sum(r["replicas"] for r in pod["replicasOnNodes"])
        lines.append(
            f"The cluster can schedule {count} instance(s) of the pod {pod['podName']}." if verbose else str(count)
        )
    if verbose:
        reason = status["failReason"] or {"failType": "", "failMessage": ""}
        lines += ["", f"Termination reason: {reason['failType']}: {reason['failMessage']}"]
        if len(status["pods"]) > 1:
            for pod in status["pods"]:
                if pod["failReason"] is not None:
                    own = pod["failReason"]
                    lines.append(f"\t- {pod['podName']}: {own['failType']}: {own['failMessage']}")
    if verbose and status["replicas"] > 0:
        lines += ["", "Pod distribution among nodes:"]
        for pod in status["pods"]:
            lines.append(pod["podName"])
            lines += [f"\t- {r['nodeName']}: {r['replicas']} instance(s)" for r in pod["replicasOnNodes"]]
    return "\n".join(lines) + "\n"


def nodes_needed_text(needed: dict[str, object]) -> str:
    """The line `capacity --nodes-needed` adds to the text."""
    if needed["nodes"] is None:
        return f"\nAdding up to {needed['maxNodes']} node(s) like {needed['like']} does not place every replica.\n"
    return f"\nTo place every replica: add {needed['nodes']} node(s) like {needed['like']}.\n"
