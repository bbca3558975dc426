"""5.4.2 — the queue state machine, written before any code is opened. The learner writes the
states and transitions in a small YAML file; `kubesched lab check 5.4.2 --answer FILE` compares it
with the machine the queue implements (`kubesched.queue.machine`), transition by transition, and
`lab run 5.4.2` prints that machine after. Without an answer the check holds the table against
the queue itself: pods are driven through every move the table says the lab shows, and every move
the trace records must be in the table."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import msgspec
import yaml
from lightkube.resources import core_v1

from kubesched.api.objects import meta_of, present
from kubesched.console import options
from kubesched.lab.harness import NODE, LabCluster, lab_cluster
from kubesched.lab.result import Check, LabResult
from kubesched.plugin import CycleState, FilterPlugin, NodeInfo, PluginSpec, PodInfo, Status
from kubesched.queue.machine import KEYS, MACHINE, STATES, TRIGGERS, Transition, transition_of
from kubesched.sim import NodeTemplate, make_nodes
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.4.2", "The queue state machine, written before any code is opened"
EXAMPLE = """\
# kubesched lab check 5.4.2 --answer queue.yaml
# states: new, activeQ, backoffQ, unschedulablePods, gated, inFlight
# triggers: add, pop, attemptFailed, backoffCompleted, clusterEvent, podUpdated,
#           unschedulableTimeout, activate
transitions:
- {from: new, to: activeQ, trigger: add}
- {from: activeQ, to: inFlight, trigger: pop}
"""


class Faulty(FilterPlugin):
    """Filter answers Error for pods labelled `fault=yes`: an attempt that errs, so backs off."""

    name: ClassVar[str] = "Faulty"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if (pod.pod.metadata.labels or {}).get("fault") == "yes":
            return Status.error("the disk this pod needs cannot be read")
        return None


class AnswerTransition(msgspec.Struct, forbid_unknown_fields=True, rename={"source": "from"}):
    source: str
    to: str
    trigger: str


class Answer(msgspec.Struct, forbid_unknown_fields=True):
    transitions: list[AnswerTransition]


def read_answer(path: str | Path) -> set[tuple[str, str, str]]:
    """The learner's transitions; UsageError naming the file and the field at fault."""
    where = f"--answer {path}"
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as e:
        raise options.UsageError(f"{where}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise options.UsageError(f"{where}: not YAML ({str(e).splitlines()[0]})") from None
    try:
        answer = msgspec.convert(data, Answer)
    except msgspec.ValidationError as e:
        raise options.UsageError(f"{where}: {e}") from None
    out = set()
    for i, t in enumerate(answer.transitions):
        for field, value, allowed in (
            ("from", t.source, STATES),
            ("to", t.to, STATES),
            ("trigger", t.trigger, TRIGGERS),
        ):
            if value not in allowed:
                raise options.UsageError(
                    f"{where}: transitions[{i}].{field}: unknown {value!r} (one of {', '.join(allowed)})"
                )
        out.add((t.source, t.to, t.trigger))
    return out


async def _label(lab: LabCluster, node: str, disk: str) -> None:
    await lab.cluster.patch(core_v1.Node, node, {"metadata": {"labels": {"disk": disk}}})


def _drive(seed: int) -> set[tuple[str, str, str]]:
    """Pods driven through the queue's moves; the (from, to, trigger) the trace recorded."""
    lab = lab_cluster(
        seed=seed,
        nodes=make_nodes(2, NODE),
        plugins=[PluginSpec(lambda args, handle: Faulty(), name=Faulty.name)],
        profiles=[{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "Faulty"}]}}}],
        attempt_seconds=0.05,
    )

    async def body() -> None:
        await lab.clock.sleep(0.5)
        nowhere = {"nodeSelector": {"disk": "none"}}
        await lab.cluster.create(make_pod("web", {"cpu": "100m"}))  # new, activeQ, inFlight: bound
        await lab.cluster.create(make_pod("gated", {"cpu": "100m"}, schedulingGates=[{"name": "example.com/wait"}]))
        await lab.cluster.create(make_pod("stuck", {"cpu": "100m"}, **nowhere))  # waits out the five minutes
        await lab.cluster.create(make_pod("activated", {"cpu": "100m"}, **nowhere))
        await lab.cluster.create(make_pod("faulty", {"cpu": "100m"}, {"fault": "yes"}))  # errs: backoffQ
        await lab.clock.sleep(0.5)
        await lab.cluster.create(make_pod("big", {"cpu": "6"}))  # fits no 4-CPU node
        await lab.clock.sleep(0.2)
        # a node big fits, while it still backs off; a burst keeps the loop busy past its backoff
        await lab.cluster.create(NodeTemplate(capacity={"cpu": "8", "memory": "32Gi", "pods": "110"}).make("wide", 9))
        for i in range(40):
            await lab.cluster.create(make_pod(f"filler-{i}", {"cpu": "10m"}))
        await lab.clock.sleep(3.0)
        await lab.cluster.patch(core_v1.Pod, "gated", {"spec": {"schedulingGates": []}}, namespace="default")
        activated = lab.pod("activated")
        lab.scheduler.queue.activate(present(meta_of(activated).uid, "its uid"), "default/activated")
        for disk in ("ssd", "hdd"):
            await lab.cluster.create(make_pod(disk, {"cpu": "100m"}, nodeSelector={"disk": disk}))
        await lab.clock.sleep(0.2)
        await _label(lab, "node-0", "ssd")  # ssd still backs off: to backoffQ, then popped from there
        await lab.clock.sleep(4.0)
        await _label(lab, "node-1", "hdd")  # hdd's backoff is over: straight to activeQ
        await lab.clock.sleep(1.0)
        await lab.cluster.delete(core_v1.Pod, "faulty", namespace="default")
        await lab.clock.sleep(330.0)  # stuck's five minutes, and the thirty-second flush after

    lab.run(body)
    observed = set()
    for record in lab.records("queue.move", "queue.pop"):
        key = transition_of(record.kind, record.details)
        if key is not None:
            observed.add(key)
    return observed


def _told(machine: tuple[Transition, ...]) -> list[Step]:
    return [
        Step(
            0.0,
            f"{t.source} -> {t.to} on {t.trigger}"
            + (f" ({t.when})" if t.when else "")
            + ("" if t.shown else " [not shown]"),
            upstream=(cite(t.upstream),),
        )
        for t in machine
    ]


def run(*, seed: int = 1, answer: str | Path | None = None, machine: tuple[Transition, ...] = MACHINE) -> LabResult:
    """With `answer`, the learner's YAML against the machine; without, `machine` (the queue's table
    by default) against the moves the queue makes. A table short of a move the queue makes, or an
    answer short of one, makes the claim false."""
    steps = _told(machine)
    table = {t.key for t in machine}
    if answer is not None:
        given = read_answer(answer)
        check = Check(
            claim="the answer's transitions are the queue's, every one, and nothing else",
            evidence={
                "matched": len(given & KEYS),
                "missing": sorted(" ".join(k) for k in KEYS - given),
                "notInTheQueue": sorted(" ".join(k) for k in given - KEYS),
            },
            passed=given == KEYS,
        )
        return LabResult(ID, TITLE, steps, check)
    observed = _drive(seed)
    shown = {t.key for t in machine if t.shown}
    check = Check(
        claim="the table is the queue's machine: every move it says the lab shows happens, and every move the "
        "queue made is in it",
        evidence={
            "observed": sorted(" ".join(k) for k in observed),
            "notObserved": sorted(" ".join(k) for k in shown - observed),
            "notInTheTable": sorted(" ".join(k) for k in observed - table),
        },
        passed=shown <= observed and observed <= table,
    )
    return LabResult(ID, TITLE, steps, check)


def machine_yaml() -> dict[str, list[dict[str, str]]]:
    """The queue's machine in the answer file's own form (a correct answer)."""
    return {"transitions": [{"from": t.source, "to": t.to, "trigger": t.trigger} for t in MACHINE]}
