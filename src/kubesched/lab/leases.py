"""5.5.8 — both artifacts, two replicas each, one lease each. Against a live cluster: the
from-scratch scheduler (`kubesched minimal --leader-elect`) and the plugin scheduler (`kubesched
run`, NodeResourcesAllocatable its only Score plugin), each as two processes campaigning for a
Lease of its own with short timings. Pods for both are bound; each leader is killed (SIGKILL: no
release); the standby takes the Lease once it has expired and binds what comes next; no pod is
bound twice."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict, TypeVar

import yaml
from lightkube.resources import coordination_v1, core_v1

from kubesched.client import KubeCluster
from kubesched.cluster import ApiError, NotFound
from kubesched.console import options
from kubesched.lab.live import all_bound, connect
from kubesched.lab.owned import OWNED, PLUGIN, owned_profile
from kubesched.lab.result import Check, LabResult
from kubesched.scheduler.discovery import plugin_registry
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.5.8", "Both artifacts, two replicas each, one lease"
MINIMAL = "minimal-scheduler"
TIMINGS = (3.0, 2.0, 0.5)  # lease duration, renew deadline, retry period (seconds)
WAIT = 30.0  # seconds for anything the lab waits for
TAKEOVER_WITHIN = TIMINGS[0] + 5.0  # a standby takes an expired Lease at its next retry
T = TypeVar("T")


@dataclass
class Replica:
    artifact: str  # the scheduler name it serves
    process: subprocess.Popen[str]
    identity: str = ""


class _Seen(TypedDict):
    """What the lab saw: per Lease, how long the takeover took (None: nobody took it over) and its
    holders with their leaseTransitions, the first and the one after the kill (None: nobody); the
    lab's pods, and how many Scheduled events each got."""

    takeover: dict[str, float | None]
    holders: dict[str, list[tuple[str | None, int]]]
    pods: list[str]
    scheduledEvents: NotRequired[dict[str, int]]


def _config(path: Path) -> Path:
    duration, renew, retry = TIMINGS
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {
                    "leaderElect": True,
                    "resourceName": OWNED,
                    "resourceNamespace": "default",
                    "leaseDuration": f"{duration}s",
                    "renewDeadline": f"{renew}s",
                    "retryPeriod": f"{retry}s",
                },
                "profiles": [owned_profile("Least")],
            }
        )
    )
    return path


def _start(kubeconfig: str, config: Path, *, each: int) -> list[Replica]:
    kubesched = [sys.executable, "-m", "kubesched"]
    plugin = [*kubesched, "run", "--config", str(config), "--kubeconfig", kubeconfig, "--metrics-bind", "127.0.0.1:0"]
    timings = ",".join(f"{t:g}" for t in TIMINGS)
    minimal = [*kubesched, "minimal", "--kubeconfig", kubeconfig, "--scheduler-name", MINIMAL, "--leader-elect"]
    minimal += ["--lease", f"default/{MINIMAL}", "--lease-timings", timings]
    replicas = []
    for artifact, command in [(OWNED, plugin)] * each + [(MINIMAL, minimal)] * each:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        replicas.append(Replica(artifact, process))
    for r in replicas:
        assert r.process.stdout is not None
        line = r.process.stdout.readline()  # each says who it is first
        found = re.search(r" as (\S+?);?(?: |$)", line.strip())
        if found is None:
            for other in replicas:  # none is left running
                other.process.kill()
                other.process.wait(timeout=10)
            raise options.UsageError(f"lab {ID}: a replica did not start: {line.strip() or 'no output'}")
        r.identity = found.group(1).rstrip(";")
    return replicas


async def _first(probe: Callable[[], Awaitable[T | None]], *, within: float) -> T | None:
    """`probe()`'s first truthy answer; None after `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        found = await probe()
        if found:
            return found
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(0.2)


async def _eventually(probe: Callable[[], Awaitable[T | None]], what: str, *, within: float = WAIT) -> T:
    """`probe()`'s first truthy answer; after `within` seconds UsageError saying `what`."""
    found = await _first(probe, within=within)
    if found is None:
        raise options.UsageError(f"lab {ID}: {what} within {within:g} s")
    return found


async def _holder(cluster: KubeCluster, name: str) -> tuple[str, int] | None:
    try:
        lease = await cluster.get(coordination_v1.Lease, name, namespace="default")
    except NotFound:
        return None
    spec = lease.spec
    return (spec.holderIdentity, spec.leaseTransitions or 0) if spec and spec.holderIdentity else None


async def _scheduled_events(cluster: KubeCluster, names: list[str]) -> dict[str, int]:
    """How many `Scheduled` events each pod got: one per binding a scheduler made."""
    counts = dict.fromkeys(names, 0)
    for e in (await cluster.list(core_v1.Event, namespace="default")).items:
        if e.reason == "Scheduled" and e.involvedObject.name in counts:
            counts[e.involvedObject.name] += 1
    return counts


async def _perform(cluster: KubeCluster, replicas: list[Replica], tag: str, *, takeover_within: float) -> _Seen:
    seen: _Seen = {"takeover": {}, "holders": {}, "pods": []}
    names: list[str] = seen["pods"]

    async def create(round_: int) -> list[str]:
        made = []
        for artifact in (OWNED, MINIMAL):
            for i in range(4):
                name = f"{tag}-{artifact.split('-')[0]}-{round_}-{i}"
                await cluster.create(make_pod(name, {"cpu": "50m"}, schedulerName=artifact))
                made.append(name)
        names.extend(made)
        return made

    try:
        for lease in (OWNED, MINIMAL):
            holder = await _eventually(functools.partial(_holder, cluster, lease), f"no holder of {lease}")
            seen["holders"][lease] = [holder]
        first = await create(1)
        await _eventually(lambda: all_bound(cluster, first), "the first pods were not all bound")
        killed = {}
        for lease in (OWNED, MINIMAL):
            identity = seen["holders"][lease][0][0]
            leader = next(r for r in replicas if r.artifact == lease and r.identity == identity)
            leader.process.send_signal(signal.SIGKILL)
            killed[lease] = time.monotonic()

        async def taken_over(lease: str) -> None:
            old = seen["holders"][lease][0][0]

            async def changed() -> tuple[str, int] | None:
                now = await _holder(cluster, lease)
                return now if now is not None and now[0] != old else None

            took = await _first(changed, within=takeover_within)
            seen["holders"][lease].append(took or (None, seen["holders"][lease][0][1]))
            seen["takeover"][lease] = round(time.monotonic() - killed[lease], 1) if took else None

        await asyncio.gather(*(taken_over(lease) for lease in (OWNED, MINIMAL)))
        if None not in seen["takeover"].values():  # else nothing binds the next pods
            second = await create(2)
            await _eventually(lambda: all_bound(cluster, second), "the pods after the takeover were not all bound")
        seen["scheduledEvents"] = await _scheduled_events(cluster, names)
    finally:
        for name in names:
            with contextlib.suppress(ApiError):
                await cluster.delete(core_v1.Pod, name, namespace="default", grace_period_seconds=0)
    return seen


def run(*, seed: int = 1, kubeconfig: str, replicas: int = 2, takeover_within: float = TAKEOVER_WITHIN) -> LabResult:
    """`replicas` of each artifact against the cluster of `kubeconfig`, a standby given
    `takeover_within` seconds to take a Lease over; with one each there is no standby to take
    over, which makes the claim false. UsageError when the plugin package is not
    installed or the first pods are not bound in time. `seed` is unused."""
    if plugin_registry().get(PLUGIN) is None:
        raise options.UsageError(
            f"lab {ID} runs the out-of-tree plugin {PLUGIN}: pip install contrib/scheduler-plugins"
        )
    tag = f"lease-{uuid.uuid4().hex[:4]}"
    with tempfile.TemporaryDirectory() as directory:
        started = _start(kubeconfig, _config(Path(directory) / "config.yaml"), each=replicas)

        async def main() -> _Seen:
            cluster = connect(kubeconfig)
            try:
                return await _perform(cluster, started, tag, takeover_within=takeover_within)
            finally:
                for lease in (OWNED, MINIMAL):
                    with contextlib.suppress(ApiError):
                        await cluster.delete(coordination_v1.Lease, lease, namespace="default")
                await cluster.close()

        try:
            seen = asyncio.run(main())
        finally:
            for r in started:
                if r.process.poll() is None:
                    r.process.send_signal(signal.SIGKILL)
                r.process.wait(timeout=10)
    steps = []
    for lease, ((before, n0), (after, n1)) in seen["holders"].items():
        took = (
            f"{after} took over in {seen['takeover'][lease]} s (leaseTransitions {n0} -> {n1})"
            if after is not None
            else f"nobody took it over within {takeover_within:g} s"
        )
        steps.append(
            Step(
                0.0,
                f"Lease default/{lease}: {before} led and was killed (SIGKILL); {took}",
                upstream=(cite("LeaderElector"),),
            )
        )
    twice = sorted(n for n, count in seen.get("scheduledEvents", {}).items() if count > 1)
    duration = TIMINGS[0]
    check = Check(
        claim="each artifact's standby takes its Lease over once the killed leader's has expired, and binds what "
        "comes next; every pod is bound, none twice",
        evidence={
            "takeoverSeconds": seen["takeover"],
            "leaseDuration": duration,
            "pods": len(seen["pods"]),
            "boundTwice": twice,
        },
        passed=all(h[1][0] is not None and h[1][1] > h[0][1] for h in seen["holders"].values())
        and all(t is not None for t in seen["takeover"].values())
        and not twice,
    )
    return LabResult(ID, TITLE, steps, check)
