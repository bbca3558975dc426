"""The protobuf codec against the JSON one, per object: µs to decode and to encode a Pod and a
Node (upstream's fully populated serialization fixtures, and pods and nodes as kubesched's
benchmarks make them). Protobuf as the API server reads and writes it (`apiserver.codec`): a
request body from bytes to the JSON shape the server works on, a stored model to bytes; JSON as
msgspec alone does the same. With the garbage collector tuned as every `kubesched` process tunes it.

    .venv/bin/python -m bench.protobuf [--repeat N]
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from lightkube.resources import core_v1

from kubesched.apiserver.codec import decode_protobuf, encode_protobuf
from kubesched.cli.runtime import tune_gc
from kubesched.workloads.templates import make_node, make_pod_from

FIXTURES = Path(__file__).parent.parent / "tests" / "unit" / "cluster" / "protobuf" / "upstream"


def _fixture(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def _per_call(fn: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tune_gc()  # the collector's thresholds as the API server process has them
    objects: dict[str, Any] = {
        "Pod (upstream fixture)": msgspec.convert(_fixture("core.v1.Pod"), core_v1.Pod),
        "Node (upstream fixture)": msgspec.convert(_fixture("core.v1.Node"), core_v1.Node),
        "Pod (pod-default.yaml)": make_pod_from("pod-default.yaml", 1, "default"),
        "Node (node-default.yaml)": make_node("node-default.yaml", 1),
    }
    for name, model in objects.items():
        as_json, as_pb = msgspec.json.encode(model), encode_protobuf(model)
        calls = 2000 if "fixture" not in name else 300
        rows: dict[str, Callable[[], Any]] = {
            "JSON decode": functools.partial(msgspec.json.decode, as_json),
            "protobuf decode": functools.partial(decode_protobuf, as_pb),
            "JSON encode": functools.partial(msgspec.json.encode, model),
            "protobuf encode": functools.partial(encode_protobuf, model),
        }
        report = []
        for label, fn in rows.items():
            runs = [_per_call(fn, calls) for _ in range(args.repeat)]
            report.append(f"{label} {statistics.median(runs):.2f} µs ({min(runs):.2f} to {max(runs):.2f})")
        print(f"{name}, {len(as_json)} B JSON / {len(as_pb)} B protobuf: " + "; ".join(report))


if __name__ == "__main__":
    main()
