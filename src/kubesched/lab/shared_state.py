"""5.3.3 — why a plugin cannot keep state in a package variable. A plugin reserves something for
the pod at Reserve (say, a volume on the chosen node) and checks it at PreBind. Written with a
module-level variable, the note of pod A is overwritten by pod B's Reserve while A's binding cycle
still waits in PreBind — binding cycles overlap the next scheduling cycles, and every profile's
instance shares the module — so A's PreBind reads B's note and refuses a good binding. Written
with CycleState, each attempt carries its own note."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from kubesched.lab.harness import NODE, lab_cluster
from kubesched.lab.result import Check, LabResult
from kubesched.plugin import CycleState, Handle, PluginSpec, PodInfo, PreBindPlugin, ReservePlugin, Status
from kubesched.sim import make_nodes
from kubesched.trace import extension_point
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.3.3", "Why a plugin cannot keep state in a package variable"
PREBIND_SECONDS = 0.5  # a PreBind that waits on an API call
NOTED: dict[str, str] = {}  # the package variable: pod -> node, as the first version keeps it


@dataclass(frozen=True)
class Note:
    """What the second version keeps in CycleState."""

    node: str

    def clone(self) -> Note:
        return self


class Reservation:
    """Reserve notes the node; PreBind waits (an API call) and refuses a binding to any other."""

    name: ClassVar[str]

    def __init__(self, args: object, handle: Handle, *, slow: bool = True) -> None:
        self.clock = handle.clock
        self.slow = slow

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        pass

    async def _check(self, note: Callable[[], str | None], node_name: str) -> Status | None:
        """Wait on the API call, then read the note and compare."""
        if self.slow:
            await self.clock.sleep(PREBIND_SECONDS)
        noted = note()
        if noted != node_name:
            return Status.unschedulable(f"reserved on {noted}, not on {node_name}")
        return None


class PackageVariable(Reservation, ReservePlugin, PreBindPlugin):
    name: ClassVar[str] = "PackageVariable"

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        NOTED["last"] = node_name  # one slot for every pod, every profile
        return None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return await self._check(lambda: NOTED.get("last"), node_name)


class InCycleState(Reservation, ReservePlugin, PreBindPlugin):
    name: ClassVar[str] = "InCycleState"

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        state.write(self.name, Note(node_name))
        return None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        note: Note | None = state.get(self.name)
        return await self._check(lambda: note.node if note else None, node_name)


def _run(plugin: type[Reservation], *, seed: int, slow: bool) -> tuple[int, list[Step]]:
    """Two profiles (`a` and `b`) with the plugin, six pods alternating between them on three
    nodes; the binding refusals the plugin made."""
    NOTED.clear()
    points = {"reserve": {"enabled": [{"name": plugin.name}]}, "preBind": {"enabled": [{"name": plugin.name}]}}
    lab = lab_cluster(
        seed=seed,
        nodes=make_nodes(3, NODE),
        plugins=[PluginSpec(lambda args, handle: plugin(args, handle, slow=slow), name=plugin.name)],
        profiles=[{"schedulerName": name, "plugins": points} for name in ("a", "b")],
    )
    names = [f"pod-{i}" for i in range(6)]

    async def body() -> None:
        await lab.clock.sleep(0.5)
        for i, name in enumerate(names):
            await lab.cluster.create(make_pod(name, {"cpu": "500m"}, schedulerName="ab"[i % 2]))
        await lab.clock.sleep(0.8)  # the first attempts and their PreBinds; no retry yet (1 s backoff)

    lab.run(body)
    refused = lab.records("bind.failed")
    return len(refused), lab.told(*names, kinds=("cycle.reserved", "bind.failed"))


def run(*, seed: int = 1, slow: bool = True) -> LabResult:
    """Both versions on the same cluster and pods. Without the slow PreBind (`slow` False) no
    binding cycle is still open when the next pod reserves, the package variable happens to hold the
    right node, and the claim is false."""
    wrong, told = _run(PackageVariable, seed=seed, slow=slow)
    right, _ = _run(InCycleState, seed=seed, slow=slow)
    steps = [
        Step(0.0, f"PackageVariable: {wrong} of 6 good bindings refused", "", (extension_point("reserve"),)),
        Step(0.0, f"InCycleState: {right} refused", "", (extension_point("preBind"),)),
        *told,
    ]
    check = Check(
        claim="the package-variable version refuses good bindings (another pod's Reserve overwrote its note while "
        "its binding cycle waited); the CycleState version refuses none",
        evidence={"refusedWithPackageVariable": wrong, "refusedWithCycleState": right},
        passed=wrong > 0 and right == 0,
    )
    return LabResult(ID, TITLE, steps, check)
