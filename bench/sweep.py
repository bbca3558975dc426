"""How a sweep's throughput scales with workers: 64 small points run with 1, 2, ... all cores.

    .venv/bin/python -m bench.sweep [--points 64] [--repeat 3] [--nodes 50] [--pods 200] [--ray ADDRESS]

Each point is a full simulation (N nodes, M pods arriving, the default scheduler on virtual
time); the same 64 points are run by the local executor with each worker count in turn,
alternating, `--repeat` times; the figure is points per second from the pool's start to the last
result (the workers' start included). Printed: per worker count the median and range, and the
speed-up over one worker with the share of the ideal (N workers: N x). With `--ray`, the same
points as tasks on the Ray cluster at ADDRESS (`ray start --head`) too, in the same rounds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from kubesched.whatif.sweep.executors import Executor, LocalExecutor, RayExecutor, cores
from kubesched.whatif.sweep.spec import load


def sweep_file(folder: Path, *, points: int, nodes: int, pods: int) -> Path:
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "250m"}}}]},
    }
    document = {
        "name": "scaling",
        "cluster": {
            "nodes": [{"name": "node", "count": nodes, "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}]
        },
        "workloads": {
            "web": {
                "horizon": "60s",
                "pods": [{"count": pods, "name": "web-{i}", "every": 0.001, "template": template}],
            }
        },
        "axes": {"seed": {"path": "seed", "range": {"from": 1, "to": points}}},
    }
    path = folder / "scaling.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def run(path: Path, runner: Executor) -> float:
    sweep = load(path)
    jobs = [sweep.job(p) for p in sweep.points()]
    began = time.perf_counter()
    results = list(runner.run(jobs))
    elapsed = time.perf_counter() - began
    assert all(r["status"] == "ok" for r in results), [r for r in results if r["status"] != "ok"][:1]
    return len(results) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--pods", type=int, default=200)
    parser.add_argument("--ray", metavar="ADDRESS", help="also run the points on this Ray cluster")
    args = parser.parse_args()
    counts = sorted({1, 2, cores()} & set(range(1, cores() + 1)))
    with tempfile.TemporaryDirectory() as folder:
        path = sweep_file(Path(folder), points=args.points, nodes=args.nodes, pods=args.pods)
        rates: dict[int, list[float]] = {n: [] for n in counts}
        on_ray: list[float] = []
        for _ in range(args.repeat):
            for n in counts:
                rates[n].append(run(path, LocalExecutor(n)))
            if args.ray:
                on_ray.append(run(path, RayExecutor(args.ray)))
    one = statistics.median(rates[1])
    print(f"{args.points} points of {args.nodes} nodes and {args.pods} pods; {cores()} cores; {args.repeat} runs each")
    for n in counts:
        median = statistics.median(rates[n])
        speedup = median / one
        print(
            f"  {n} worker{'s' if n > 1 else ' '}: {median:6.2f} points/s ({min(rates[n]):.2f}-{max(rates[n]):.2f})"
            f"  {speedup:.2f}x one worker, {speedup / n:.0%} of ideal"
        )
    if on_ray:
        median = statistics.median(on_ray)
        print(
            f"  ray      : {median:6.2f} points/s ({min(on_ray):.2f}-{max(on_ray):.2f})  {median / one:.2f}x one worker"
        )


if __name__ == "__main__":
    main()
