"""How long `kubesched capacity` takes on a cluster of 1,000 nodes: ten questions of the kinds
cluster-capacity answers, each simulated on its own copy of one snapshot (saved to a file and
read back, as `capacity --snapshot` reads it); then `kubesched fit` for three unschedulable pods.

.venv/bin/python -m bench.capacity [--nodes N] [--running P] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim import NodeTemplate, make_nodes
from kubesched.whatif.capacity import Template, simulate, with_defaults
from kubesched.whatif.counterfactual import Search, search
from kubesched.whatif.snapshot import Snapshot, load

SHAPES = ({"cpu": "4", "memory": "16Gi", "pods": "110"}, {"cpu": "8", "memory": "32Gi", "pods": "110"})


def pod(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}
    container.update(spec.pop("container", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **spec.pop("metadata", {})},
        "spec": {"containers": [container], **spec},
    }


def cluster(nodes: int, running: int) -> Snapshot:
    items: list[dict[str, Any]] = []
    for i, shape in enumerate(SHAPES):
        template = NodeTemplate(capacity=shape, labels={"shape": str(i)})
        items += [n.to_dict() for n in make_nodes(nodes // len(SHAPES), template, prefix=f"s{i}-")]
    names = [n["metadata"]["name"] for n in items]
    items.append(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    )
    for j in range(running):
        items.append(
            {**pod(f"run-{j}", "500m"), "spec": {**pod("", "500m")["spec"], "nodeName": names[j % len(names)]}}
        )
    return Snapshot(tuple(items))


CASES: list[tuple[str, list[Template], dict[str, Any]]] = [
    ("2-cpu pod, as many as fit", [Template(pod("two", "2"))], {}),
    ("1-cpu pod, max-limit 2000", [Template(pod("one", "1"))], {"max_limit": 2000}),
    ("4-cpu pod on shape 1 only", [Template(pod("big", "4", nodeSelector={"shape": "1"}))], {}),
    (
        "host port 8080",
        [Template(pod("proxy", "10m", container={"ports": [{"containerPort": 8080, "hostPort": 8080}]}))],
        {},
    ),
    (
        "self anti-affinity",
        [
            Template(
                pod(
                    "db",
                    "100m",
                    metadata={"labels": {"app": "db"}},
                    affinity={
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchLabels": {"app": "db"}},
                                    "topologyKey": "kubernetes.io/hostname",
                                }
                            ]
                        }
                    },
                )
            )
        ],
        {},
    ),
    (
        "zone spread, maxSkew 1",
        [
            Template(
                pod(
                    "spread",
                    "1",
                    metadata={"labels": {"app": "s"}},
                    topologySpreadConstraints=[
                        {
                            "maxSkew": 1,
                            "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": "s"}},
                        }
                    ],
                )
            )
        ],
        {"max_limit": 1500},
    ),
    (
        "6-cpu pod, half the nodes excluded",
        [Template(pod("huge", "6"))],
        {"exclude_nodes": [f"s1-{i}" for i in range(250)]},
    ),
    (
        "three workloads with replica counts",
        [Template(pod("api", "1"), 800), Template(pod("web", "500m"), 1200), Template(pod("batch", "2"), 600)],
        {},
    ),
    ("16-cpu pod, none fit", [Template(pod("whale", "16"))], {}),
    ("priority 1000 pod, stops where it preempts", [Template(pod("vip", "3", priorityClassName="high"))], {}),
]

FIT: list[tuple[str, dict[str, Any]]] = [
    ("12-cpu pod", pod("whale", "12")),
    ("nodeSelector no node has", pod("ssd", "1", nodeSelector={"disk": "ssd"})),
    (
        "affinity to absent pods",
        pod(
            "near",
            "1",
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}
                    ]
                }
            },
        ),
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--running", type=int, default=3000, help="pods already bound, 500m each")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.yaml"
        cluster(args.nodes, args.running).save(path)
        start = time.perf_counter()
        snapshot = load(path)
        print(f"snapshot file of {path.stat().st_size / 2**20:.1f} MiB read in {time.perf_counter() - start:.2f} s")
    registry = in_tree_registry()
    config = default_config(registry)
    print(f"{args.nodes} nodes, {args.running} running pods; {args.repeat} runs a case")
    for name, templates, options in CASES:
        seconds, placed = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            results = simulate(snapshot, templates, config=config, registry=registry, **options)
            seconds.append(time.perf_counter() - start)
            placed = [len(r.nodes) for r in results]
        stop = results[-1].stop
        print(
            f"{name:44} placed {placed}  stop {stop.fail_type if stop else '-':13} "
            f"median {statistics.median(seconds):5.2f} s  range {min(seconds):.2f}-{max(seconds):.2f}"
        )
    for name, pod in FIT:
        seconds, kinds = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            kinds = [
                p.kind for p in search(Search(snapshot, config, registry), with_defaults(pod, ["default-scheduler"]))
            ]
            seconds.append(time.perf_counter() - start)
        print(
            f"fit: {name:39} {kinds}  "
            f"median {statistics.median(seconds):5.2f} s  range {min(seconds):.2f}-{max(seconds):.2f}"
        )


if __name__ == "__main__":
    main()
