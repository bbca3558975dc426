"""5.C3: a pod stuck by an unsatisfiable topology spread constraint, beside a pod stuck by scarcity,
told apart by their FailedScheduling messages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lightkube.resources import core_v1
from rich.console import Console
from rich.table import Table

from kubesched.api.objects import present
from kubesched.clock import VirtualClock
from kubesched.config import default_config
from kubesched.lab.drill.story import failed_scheduling, print_citations, print_explained
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import plugin_registry
from kubesched.scheduler.explain import explain_pod
from kubesched.sim import FakeKubelets, NodeTemplate
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.trace import cite
from kubesched.workloads.runner import make_pod

ZONE = "topology.kubernetes.io/zone"
TAINT = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
WEB = {"app": "web"}
WEB_REPLICAS = 4


def _spread(policy: str | None) -> dict[str, object]:
    constraint: dict[str, object] = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": WEB},
    }
    if policy:
        constraint["nodeTaintsPolicy"] = policy
    return constraint


@dataclass
class PodOutcome:
    name: str
    node: str | None
    message: str = ""  # the last FailedScheduling message, if any
    rejected_by: list[str] = field(default_factory=list)


@dataclass
class DrillResult:
    nodes: dict[str, str]  # node -> zone (and taint, if any)
    pods: list[PodOutcome]
    explained: Mapping[str, object] = field(default_factory=dict)  # `kubesched explain default/web-1`

    def to_json(self) -> dict[str, object]:
        return {"nodes": self.nodes, "pods": [p.__dict__ for p in self.pods], "explain": self.explained}


CITATIONS = {
    "the spread constraint's Filter (skew against the global minimum)": cite("PodTopologySpread.Filter"),
    "the untolerated taint": cite("TaintToleration.Filter"),
    "Insufficient cpu": cite("fitsRequest"),
    "the nodes' verdicts, one per node": cite("findNodesThatPassFilters"),
    "the FailedScheduling message": cite("FitError.Error"),
    "the FailedScheduling event": cite("FailedScheduling event"),
}


def run_c3(*, taints_policy: str | None = None, horizon: float = 30.0) -> DrillResult:
    """Zone a has two nodes, zone b one node tainted `dedicated=batch:NoSchedule`. Four `app=web`
    replicas must spread over zones with maxSkew 1; a fifth pod asks for more CPU than any node
    has. With upstream's default `nodeTaintsPolicy: Ignore` the tainted node's zone still counts
    (with 0 web pods), so a second web pod in zone a would make the skew 2: it is stuck though
    every node has room. `taints_policy="Honor"` leaves zone b out and the replicas schedule."""
    clock = VirtualClock()
    store = MemoryStore(clock=clock, seed=3)
    cluster = MemoryCluster(store)
    nodes = {"a-1": "zone-a", "a-2": "zone-a", "b-1": "zone-b"}
    for index, (name, zone) in enumerate(nodes.items()):
        template = NodeTemplate(labels={ZONE: zone}, zones=(), taints=[TAINT] if name == "b-1" else ())
        store.create(template.make(name, index))
    registry = plugin_registry()
    scheduler = Scheduler(cluster, clock, default_config(registry), registry, seed=3, identity="drill")
    spread = {"topologySpreadConstraints": [_spread(taints_policy)]}
    names = [f"web-{i}" for i in range(WEB_REPLICAS)]
    pods = [make_pod(name, {"cpu": "100m"}, WEB, **spread) for name in names]
    pods.append(make_pod("big", {"cpu": "8"}))
    names.append("big")
    rejected: dict[str, list[str]] = {}

    async def main() -> None:
        await clock.sleep(1.0)
        for pod in pods:
            await cluster.create(pod)
            await clock.sleep(1.0)
        await clock.sleep(horizon)
        for waiting in scheduler.queue.snapshot():
            rejected[waiting.key.split("/", 1)[1]] = waiting.rejected_by

    clock.run_alongside(main(), [scheduler.run, FakeKubelets(cluster, clock).run])
    messages = failed_scheduling(store)
    outcomes = []
    for name in names:
        stored = store.get(core_v1.Pod, name, namespace="default")
        bound = present(stored.spec, "the pod's spec").nodeName
        outcomes.append(PodOutcome(name, bound, "" if bound else messages.get(name, ""), rejected.get(name, [])))
    taint = f"{TAINT['key']}={TAINT['value']}:{TAINT['effect']}"
    return DrillResult(
        {n: f"{z}, tainted {taint}" if n == "b-1" else z for n, z in nodes.items()},
        outcomes,
        explain_pod(scheduler, "default/web-1"),
    )


def _table(result: DrillResult) -> Table:
    table = Table(show_lines=True)
    for column in ("POD", "NODE", "REJECTED BY", "FailedScheduling"):
        table.add_column(column)
    for pod in result.pods:
        table.add_row(pod.name, pod.node or "[red]pending[/red]", ", ".join(pod.rejected_by), pod.message)
    return table


def print_c3(console: Console) -> None:
    """The drill, narrated: the stuck pods, then the same replicas with the policy that fixes it."""
    result = run_c3()
    console.rule("[bold]5.C3 — unschedulable for a reason that is not scarcity")
    console.print(
        "Nodes: " + "; ".join(f"{n} ({z})" for n, z in result.nodes.items()) + ". "
        f"{WEB_REPLICAS} replicas of app=web spread over zones (maxSkew 1, DoNotSchedule); "
        "`big` asks for 8 CPUs, more than any node has.\n"
    )
    console.print(_table(result))
    console.print(
        "\nBoth pods are pending, for different reasons. `big` is [bold]Insufficient cpu[/bold] on the "
        "untainted nodes: scarcity, which more capacity would cure. The web replicas were rejected by "
        "[bold]PodTopologySpread[/bold] ([italic]didn't match pod topology spread constraints[/italic]) on "
        "nodes with plenty of room: zone-b counts as a domain with 0 web pods (nodeTaintsPolicy defaults "
        "to Ignore) though its only node is tainted, so a second replica in zone-a would make the skew 2.\n"
    )
    print_explained(console, result.explained, last=1)
    print_citations(console, CITATIONS)
    fixed = run_c3(taints_policy="Honor")
    console.rule("[bold]The same replicas with nodeTaintsPolicy: Honor")
    console.print(_table(fixed))
