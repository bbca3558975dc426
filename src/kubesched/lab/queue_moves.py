"""The queue's labs.

5.4.3 — a pod moving between queues, timed: each transition with its virtual time, the event that
caused it and the QueueingHint that decided.
5.4.6 — ten cluster changes, one retry: a pod waits in unschedulablePods while ten things change;
the rejecting plugin's hints let only the one change that can help retry it.
5.4.4 — the backoff doubling: initial * 2^(n-1), capped at podMaxBackoffSeconds, for a pod whose
binding keeps failing with an error; and, for a rejected pod requeued by events, how an idle
scheduler takes it out of backoffQ at once (SchedulerPopFromBackoffQ)."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar

from lightkube.resources import core_v1

from kubesched.lab.harness import NODE, LabCluster, lab_cluster
from kubesched.lab.result import Check, LabResult
from kubesched.plugin import CycleState, Handle, PodInfo, PreBindPlugin, Status
from kubesched.sim import NodeTemplate, make_nodes
from kubesched.trace.narrate import say
from kubesched.workloads.runner import make_pod

QUEUE_KINDS = ("queue.move", "queue.stayed", "queue.pop", "cycle.failed", "bind.done", "bind.failed")

# -- 5.4.3 ---------------------------------------------------------------------------------------

PATH_ID, PATH_TITLE = "5.4.3", "A pod moving between queues, timed"
# (from, to, event) of each move the pod makes when room is freed inside its first backoff
WITHIN_BACKOFF = [
    ("", "activeQ", "PodAdd"),
    ("inFlight", "unschedulablePods", "ScheduleAttemptFailure"),
    ("unschedulablePods", "backoffQ", "AssignedPodDelete"),
]


def run_path(*, seed: int = 1, free_at: float = 0.5) -> LabResult:
    """One 4-CPU node running a 2-CPU `holder`; `mover` asks for 3 CPUs and waits. A 1-CPU node
    joins at t+0.2 (NodeResourcesFit's hint: QueueSkip, it is too small); `holder` is deleted at
    `free_at` seconds after the failure. Inside the one-second backoff the pod goes to backoffQ, and
    the idle scheduler pops it from there at once; at `free_at` past the backoff (say 5) it goes
    straight to activeQ, which makes the claim false."""
    holder = make_pod("holder", {"cpu": "2"}, nodeName="node-0")
    lab = lab_cluster(seed=seed, nodes=[NODE.make("node-0", 0)], pods=[holder])
    small = NodeTemplate(capacity={"cpu": "1", "memory": "16Gi", "pods": "110"}, zones=())

    async def body() -> None:
        await lab.clock.sleep(0.5)
        await lab.cluster.create(make_pod("mover", {"cpu": "3"}))
        await lab.clock.sleep(0.2)
        await lab.cluster.create(small.make("node-1", 1))
        await lab.clock.sleep(max(free_at - 0.2, 0.0))
        await lab.cluster.delete(core_v1.Pod, "holder", namespace="default", grace_period_seconds=0)
        await lab.clock.sleep(5.0)

    lab.run(body)
    told = lab.told("mover", kinds=QUEUE_KINDS)
    moves = [
        (r.details.get("from") or "", r.details["to"], r.details["event"])
        for r in lab.records("queue.move", pod="default/mover")
    ]
    popped = [r.details.get("from") for r in lab.records("queue.pop", pod="default/mover")]
    stayed = [
        (r.details["event"], r.details.get("plugin"), r.details.get("hint"))
        for r in lab.records("queue.stayed", pod="default/mover")
    ]
    check = Check(
        claim="freed inside its backoff, the pod goes unschedulablePods → backoffQ on the deletion (NodeResourcesFit "
        "hint: Queue), the node too small to help leaves it where it was (QueueSkip), and the idle scheduler pops it "
        "from backoffQ at once",
        evidence={"moves": moves, "poppedFrom": popped, "stayed": stayed, "node": lab.node_of("mover")},
        passed=moves == WITHIN_BACKOFF
        and popped == ["activeQ", "backoffQ"]
        and stayed == [("NodeAdd", "NodeResourcesFit", "QueueSkip")]
        and lab.node_of("mover") == "node-0",
    )
    return LabResult(PATH_ID, PATH_TITLE, told, check)


# -- 5.4.6 ---------------------------------------------------------------------------------------

RETRY_ID, RETRY_TITLE = "5.4.6", "Ten cluster changes, one retry"
NVME = {"disktype": "nvme"}


@dataclass(frozen=True)
class Change:
    what: str
    make: Callable[[LabCluster], Awaitable[object]]


def _label(node: str, labels: dict[str, str]) -> Callable[[LabCluster], Awaitable[object]]:
    return lambda lab: lab.cluster.patch(core_v1.Node, node, {"metadata": {"labels": labels}})


def _changes(*, taint: bool) -> list[Change]:
    small = NodeTemplate(capacity={"cpu": "2", "memory": "8Gi", "pods": "110"}, zones=())
    ninth = (
        Change("taint node-1", lambda lab: lab.cluster.patch(core_v1.Node, "node-1", {"spec": {"taints": [TAINT]}}))
        if taint
        else Change("label node-1 tier=gold", _label("node-1", {"tier": "gold"}))
    )
    return [
        Change("label node-0 team=a", _label("node-0", {"team": "a"})),
        Change("add node-2, no disk label", lambda lab: lab.cluster.create(small.make("node-2", 2))),
        Change(
            "bind a pod on node-0", lambda lab: lab.cluster.create(make_pod("other", {"cpu": "1"}, nodeName="node-0"))
        ),
        Change("label node-1 team=b", _label("node-1", {"team": "b"})),
        Change(
            "delete that pod",
            lambda lab: lab.cluster.delete(core_v1.Pod, "other", namespace="default", grace_period_seconds=0),
        ),
        Change("label node-2 disktype=hdd", _label("node-2", {"disktype": "hdd"})),
        Change("delete node-2", lambda lab: lab.cluster.delete(core_v1.Node, "node-2")),
        Change("label node-0 team=c", _label("node-0", {"team": "c"})),
        ninth,
        Change("label node-1 disktype=nvme", _label("node-1", NVME)),
    ]


TAINT = {"key": "maintenance", "value": "soon", "effect": "PreferNoSchedule"}


def run_retries(*, seed: int = 1, taint: bool = False) -> LabResult:
    """Two nodes; a pod whose node affinity wants disktype=nvme waits in unschedulablePods (NodeAffinity
    rejected it). Ten changes, ten seconds apart; only the last gives a node the label. With `taint`
    the ninth change taints node-1 instead of labelling it: NodeAffinity registered Node/Add, so the
    scheduler adds Node/UpdateNodeTaint for it with no hint function, which means Queue — a second
    retry that makes the claim false."""
    lab = lab_cluster(seed=seed, nodes=make_nodes(2, NODE))
    changes = _changes(taint=taint)
    at: list[float] = []
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["nvme"]}]}]
            }
        }
    }

    async def body() -> None:
        await lab.clock.sleep(0.5)
        await lab.cluster.create(make_pod("waiter", {"cpu": "500m"}, affinity=affinity))
        for change in changes:
            await lab.clock.sleep(10.0)
            at.append(lab.clock.now())
            await change.make(lab)
        await lab.clock.sleep(5.0)

    lab.run(body)
    pod = "default/waiter"
    verdicts: dict[str, str] = {}  # each change, and what the queue made of it, told by the narrator
    for change, t in zip(changes, at, strict=True):
        seen = [
            r
            for r in lab.tracer.records
            if r.pod == pod and r.kind in ("queue.move", "queue.stayed") and t <= r.time < t + 1.0
        ]
        verdicts[change.what] = say(seen[0]) if seen else "not looked at: no plugin of the profile registered it"
    attempts = len(lab.records("cycle.start", pod=pod))
    told = lab.told("waiter", kinds=QUEUE_KINDS)
    node = lab.node_of("waiter")
    check = Check(
        claim="of ten changes, only the one that gives a node the wanted label retries the pod: two attempts in all",
        evidence={"attempts": attempts, "node": node, "verdicts": verdicts},
        passed=attempts == 2 and node == "node-1",
    )
    return LabResult(RETRY_ID, RETRY_TITLE, told, check)


# -- 5.4.4 ---------------------------------------------------------------------------------------

BACKOFF_ID, BACKOFF_TITLE = "5.4.4", "Attempt 1, 3 and 6: the gaps double until they stop"
INITIAL, MAXIMUM = 1.0, 10.0  # podInitialBackoffSeconds, podMaxBackoffSeconds: the defaults


class BrokenBind(PreBindPlugin):
    """A PreBind that always fails with an error, as a webhook or volume provisioner that is down."""

    name: ClassVar[str] = "BrokenBind"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return Status.error("the volume provisioner is down")


def expected_gaps(count: int, *, initial: float = INITIAL, maximum: float = MAXIMUM) -> list[float]:
    """The backoff after each of `count` failures: initial * 2^(n-1), capped."""
    return [min(initial * 2 ** (n - 1), maximum) for n in range(1, count + 1)]


def run_backoff(*, seed: int = 1, initial: int = 1) -> LabResult:
    """Error case: a pod whose PreBind keeps failing is tried eight times; each gap is the backoff
    its failures have earned, its expiry truncated to the second and still backing off within that
    second, so released by the next whole-second flush: a gap is more than the backoff and at most a
    second more. Rejection case: a pod rejected for CPU, requeued by four deletions 0.3 s apart, is retried at
    each deletion, not after its backoff. `initial` other than 1 configures another initial backoff,
    which makes the claim about 1, 2, 4, 8, 10 s false."""
    profile = {"schedulerName": "default-scheduler", "plugins": {"preBind": {"enabled": [{"name": BrokenBind.name}]}}}
    fillers = [make_pod(f"filler-{i}", {"cpu": "1"}, nodeName="node-1") for i in range(4)]
    deleted: list[float] = []
    lab = lab_cluster(
        seed=seed,
        nodes=[NODE.make("node-0", 0)],
        plugins=[BrokenBind],
        profiles=[profile, {"schedulerName": "events"}],
        podInitialBackoffSeconds=initial,
    )

    async def body() -> None:
        await lab.clock.sleep(0.5)
        await lab.cluster.create(make_pod("unlucky", {"cpu": "100m"}))
        await lab.clock.sleep(60.0)
        await lab.cluster.create(NODE.make("node-1", 1))
        for filler in fillers:
            await lab.cluster.create(filler)
        await lab.cluster.create(
            make_pod("eager", {"cpu": "4"}, schedulerName="events", nodeSelector={"kubernetes.io/hostname": "node-1"})
        )
        await lab.clock.sleep(0.5)
        for i in range(4):
            deleted.append(lab.clock.now())
            await lab.cluster.delete(core_v1.Pod, f"filler-{i}", namespace="default", grace_period_seconds=0)
            await lab.clock.sleep(0.3)
        await lab.clock.sleep(5.0)

    lab.run(body)
    starts = [r.time for r in lab.records("cycle.start", pod="default/unlucky")][:8]
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(starts)]
    earned = expected_gaps(len(gaps))
    eager = [r.time for r in lab.records("cycle.start", pod="default/eager")]
    follows = len(eager) == 1 + len(deleted) and all(
        0 <= t - d < 0.05 for t, d in zip(eager[1:], deleted, strict=False)
    )
    told = lab.told("unlucky", kinds=("cycle.start", "bind.failed", "queue.move", "queue.pop"))[:24]
    told += lab.told("eager", kinds=("cycle.start", "queue.move", "queue.pop", "bind.done"))
    check = Check(
        claim=f"after an error the n-th gap is {INITIAL:g} s * 2^(n-1) capped at {MAXIMUM:g} s, plus up to a second: "
        "the expiry is truncated to its second and released by the first flush after that second; a rejected "
        "pod requeued by events is retried at each event, out of backoffQ at once",
        evidence={
            "errorGaps": gaps,
            "earned": earned,
            "deletions": [round(d - lab.start, 3) for d in deleted],
            "eagerAttempts": [round(t - lab.start, 3) for t in eager],
        },
        passed=len(gaps) == 7 and all(e < g <= e + 1.0 for g, e in zip(gaps, earned, strict=True)) and follows,
    )
    return LabResult(BACKOFF_ID, BACKOFF_TITLE, told, check)
