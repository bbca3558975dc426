"""Fake-node creation time.

.venv/bin/python -m bench.nodes [--nodes N] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time

from kubesched.clock import VirtualClock
from kubesched.sim import make_nodes
from kubesched.storage import MemoryStore


def create_nodes_seconds(n: int) -> float:
    store = MemoryStore(clock=VirtualClock())
    start = time.perf_counter()
    for node in make_nodes(n):
        store.create(node)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    times = [create_nodes_seconds(args.nodes) for _ in range(args.repeat)]
    print(
        f"{args.nodes} fake nodes made and stored, {args.repeat} runs: median {statistics.median(times):.3f} s"
        f" (min {min(times):.3f}, max {max(times):.3f})"
    )


if __name__ == "__main__":
    main()
