"""`kubesched capacity`: how many more of these pods a cluster takes, as cluster-capacity answers it,
simulated on a copy of the cluster (a live one read with list requests only, or a snapshot file)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from rich.console import Console

from kubesched.api import yamlfile
from kubesched.cli.commands import Subparsers
from kubesched.client import ConfigError as KubeConfigError
from kubesched.client import KubeCluster
from kubesched.cluster.errors import ApiError
from kubesched.config import SchedulerConfig
from kubesched.console import options
from kubesched.framework.registry import Registry
from kubesched.whatif import review
from kubesched.whatif.capacity import CapacityError, Template, simulate
from kubesched.whatif.counterfactual import Search, common_node, nodes_needed
from kubesched.whatif.snapshot import Snapshot, SnapshotError, load, read

# Kinds whose `spec.template` is a pod and whose replica count is `spec.<field>` (default 1).
WORKLOADS = {
    "Deployment": "replicas",
    "ReplicaSet": "replicas",
    "StatefulSet": "replicas",
    "ReplicationController": "replicas",
    "Job": "parallelism",
}


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    cap = sub.add_parser(
        name,
        help=help,
        description="Simulate placing copies of each pod spec, one by one, with kubesched's scheduler on a "
        "copy of the cluster, until a copy does not fit or the limit is reached. The cluster is only read.",
    )
    cap.set_defaults(run=capacity_command)
    source = cap.add_mutually_exclusive_group()
    source.add_argument("--kubeconfig", metavar="K", help="the cluster to read (default: in-cluster, $KUBECONFIG)")
    source.add_argument("--snapshot", metavar="FILE", help="instead: a file of kubesched snapshot save")
    cap.add_argument(
        "--podspec",
        action="append",
        required=True,
        metavar="FILE",
        help="a Pod (as many copies as fit), or a Deployment, ReplicaSet, StatefulSet, ReplicationController or "
        "Job (its replica count of copies of its template), YAML or JSON; several documents, or the option "
        "repeated, are placed in order, each seeing the copies before it",
    )
    cap.add_argument(
        "--max-limit",
        type=int,
        default=0,
        metavar="N",
        help="copies of a Pod after which to stop (default 0: as many as fit)",
    )
    cap.add_argument(
        "--exclude-nodes",
        action="append",
        default=[],
        metavar="A,B",
        help="nodes left out of the simulation, with their pods (comma-separated, repeatable)",
    )
    cap.add_argument(
        "--config",
        "--default-config",
        dest="config",
        metavar="FILE",
        help="a KubeSchedulerConfiguration (default: upstream's default profile)",
    )
    cap.add_argument("--verbose", action="store_true", help="requirements, termination reason and distribution")
    cap.add_argument(
        "-o",
        "--output",
        default="",
        metavar="FORMAT",
        help="json or yaml: the ClusterCapacityReview (default: the counts, as text)",
    )
    _nodes_needed_options(cap)
    cap.add_argument("--seed", type=int, default=0, help="seed of the simulated scheduler (default 0)")
    options.add_plugin_option(cap)


def _nodes_needed_options(cap: argparse.ArgumentParser) -> None:
    cap.add_argument(
        "--nodes-needed",
        action="store_true",
        help="also find the fewest nodes to add for every replica count to be placed (each template needs one)",
    )
    cap.add_argument(
        "--node-template", metavar="FILE", help="with --nodes-needed: the Node to add (default: the most common)"
    )
    cap.add_argument(
        "--max-nodes", type=int, default=1000, help="with --nodes-needed: the most nodes tried (default 1000)"
    )


def templates(path: str) -> list[Template]:
    """The templates in the file `path`; UsageError naming the file and what is wrong."""
    try:
        documents = yamlfile.load_all(path)
    except yamlfile.YamlError as e:
        raise options.UsageError(f"--podspec: {e}") from None
    if len(documents) == 1 and isinstance(documents[0], dict) and documents[0].get("kind") == "List":
        documents = documents[0].get("items") or []
    if not documents:
        raise options.UsageError(f"--podspec: {path}: no pod spec in the file")
    return [_template(path, i, d) for i, d in enumerate(documents)]


def _template(path: str, index: int, document: object) -> Template:
    where = f"--podspec: {path}" + (f": document {index + 1}" if index else "")
    if not isinstance(document, dict):
        raise options.UsageError(f"{where}: expected a Pod or a workload, got {type(document).__name__}")
    kind = document.get("kind", "Pod")
    if kind == "Pod":
        return Template(document)
    if kind not in WORKLOADS:
        raise options.UsageError(f"{where}: kind {kind} is not a Pod, {', '.join(WORKLOADS)}")
    meta, spec = document.get("metadata") or {}, document.get("spec") or {}
    template = spec.get("template")
    if not isinstance(template, dict):
        raise options.UsageError(f"{where}: spec.template: a pod template is required")
    count = spec.get(WORKLOADS[kind], 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise options.UsageError(f"{where}: spec.{WORKLOADS[kind]}: a count of zero or more, not {count!r}")
    pod_meta = {**(template.get("metadata") or {}), "name": meta.get("name")}
    if meta.get("namespace"):
        pod_meta["namespace"] = meta["namespace"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": template.get("spec") or {}}
    return Template(pod, count)


def node_manifest(path: str | None) -> dict[str, object] | None:
    """`--node-template`: a Node manifest nodes are added like (None without the option)."""
    if not path:
        return None
    try:
        node = yamlfile.load(path)
    except yamlfile.YamlError as e:
        raise options.UsageError(f"--node-template: {e}") from None
    if not isinstance(node, dict) or node.get("kind", "Node") != "Node":
        raise options.UsageError(f"--node-template: {path}: expected a Node manifest")
    node.setdefault("apiVersion", "v1")
    node.setdefault("kind", "Node")
    node.setdefault("metadata", {}).setdefault("name", "template")
    return node


def kube_cluster(kubeconfig: str | None, *, option: str = "--kubeconfig") -> KubeCluster:
    """The cluster `--kubeconfig` names (in-cluster credentials without one, inside a pod)."""
    try:
        if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
            return KubeCluster.in_cluster()
        return KubeCluster.from_kubeconfig(kubeconfig)
    except (KubeConfigError, OSError) as e:
        raise options.UsageError(f"{option}: {e}") from None


def read_cluster(kubeconfig: str | None, *, selector: str = "") -> Snapshot:
    """The snapshot of the cluster `kubeconfig` names (see `kube_cluster`), read with lists only."""
    cluster = kube_cluster(kubeconfig)

    async def go() -> Snapshot:
        try:
            return await read(cluster, selector=selector)
        finally:
            await cluster.close()

    try:
        return asyncio.run(go())
    except ApiError as e:
        raise options.UsageError(f"reading the cluster: {e}") from None


def source(args: argparse.Namespace) -> Snapshot:
    if args.snapshot:
        try:
            return load(Path(args.snapshot))
        except SnapshotError as e:
            raise options.UsageError(f"--snapshot: {e}") from None
    return read_cluster(args.kubeconfig)


def capacity_command(console: Console, args: argparse.Namespace) -> int:
    try:
        if args.output not in ("", *review.FORMATS):
            raise options.UsageError(f"-o: output format {args.output!r} not recognized (json or yaml)")
        registry = options.registry(args.plugin)
        config = options.scheduler_config("--config", args.config, registry)
        wanted = [t for path in args.podspec for t in templates(path)]
        excluded = [n for value in args.exclude_nodes for n in value.split(",") if n]
        snapshot = source(args)
        results = simulate(
            snapshot,
            wanted,
            config=config,
            registry=registry,
            max_limit=max(args.max_limit, 0),
            exclude_nodes=excluded,
            seed=args.seed,
        )
    except options.UsageError as e:
        options.print_error(console, str(e))
        return 2
    except CapacityError as e:
        options.print_error(console, f"--podspec: {e}")
        return 2
    document = review.review(results, max_limit=max(args.max_limit, 0))
    if args.nodes_needed:
        try:
            document["status"]["nodesNeeded"] = _nodes_needed(
                args, snapshot, wanted, excluded=excluded, config=config, registry=registry
            )
        except options.UsageError as e:
            options.print_error(console, str(e))
            return 2
    if args.output:
        sys.stdout.write(review.dumps(document, args.output))
    else:
        sys.stdout.write(review.text(document, verbose=args.verbose))
        if args.nodes_needed:
            sys.stdout.write(review.nodes_needed_text(document["status"]["nodesNeeded"]))
    return 0


def _nodes_needed(
    args: argparse.Namespace,
    snapshot: Snapshot,
    wanted: list[Template],
    *,
    excluded: list[str],
    config: SchedulerConfig,
    registry: Registry,
) -> dict[str, object]:
    """`status.nodesNeeded`: how many nodes like which one would place every replica count."""
    if any(t.replicas is None for t in wanted):
        raise options.UsageError("--nodes-needed: every --podspec needs a replica count (a workload's replicas)")
    node = node_manifest(args.node_template)
    space = Search(
        snapshot,
        config,
        registry,
        node_template=node,
        max_nodes=options.at_least("--max-nodes", args.max_nodes, 1),
        exclude_nodes=tuple(excluded),
    )
    metadata = (node or common_node(space.snapshot) or {}).get("metadata", {})
    like = metadata.get("name") if isinstance(metadata, dict) else None
    if like is None:
        raise options.UsageError("--nodes-needed: the cluster has no node to copy; give --node-template")
    return {"nodes": nodes_needed(space, wanted), "like": like, "maxNodes": space.max_nodes}
