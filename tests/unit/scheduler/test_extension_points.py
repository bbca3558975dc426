"""Test plugins returning each status at each point make the framework do what upstream does."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from builders import make_pod
from kubesched.framework import Code, Registry, Status
from kubesched.framework.status import SKIP
from kubesched.plugin import BindPlugin, PermitPlugin, ReservePlugin


class Recorder(ReservePlugin, PermitPlugin, BindPlugin):
    """A plugin for every point whose verdicts the test sets; it logs each call."""

    name: ClassVar[str] = "Probe"
    log: ClassVar[list[str]] = []
    verdicts: ClassVar[dict[str, Any]] = {}

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def reserve(self, state, pod, node):
        self.log.append(f"reserve {pod.name}")
        return self.verdicts.get("reserve")

    def unreserve(self, state, pod, node):
        self.log.append(f"unreserve {pod.name} ({self.name})")

    def permit(self, state, pod, node):
        verdict = self.verdicts.get("permit")
        return (verdict, self.verdicts.get("permit_timeout", 0))

    async def bind(self, state, pod, node):
        self.log.append(f"bind {pod.name}")
        delay = self.verdicts.get("bind_delay")
        if delay:
            await asyncio.sleep(delay)
        return self.verdicts.get("bind", SKIP)


class Early(Recorder):
    name: ClassVar[str] = "Early"

    def reserve(self, state, pod, node):
        self.log.append(f"reserve {pod.name} ({self.name})")


def registry() -> Registry:
    r = Registry()
    r.register("Probe", Recorder)
    r.register("Early", Early)
    return r


def probe_config(points: list[str]) -> dict[str, Any]:
    plugins: dict[str, Any] = {p: {"enabled": [{"name": "Probe"}]} for p in points}
    if "reserve" in points:
        plugins["reserve"] = {"enabled": [{"name": "Early"}, {"name": "Probe"}]}
    if "bind" in points:
        plugins["bind"] = {"enabled": [{"name": "Probe"}], "disabled": [{"name": "*"}]}
    return {"profiles": [{"plugins": plugins}]}


def setup(harness, points, **verdicts):
    Recorder.log = []
    Recorder.verdicts = verdicts
    h = harness(config=probe_config(points), extra=registry())
    h.node("n1", cpu=4)
    h.start()
    return h


def test_reserve_failure_unreserves_in_reverse_order_and_requeues(harness):
    h = setup(harness, ["reserve"], reserve=Status(Code.UNSCHEDULABLE, "no room in the plan"))
    h.store.create(make_pod("a").req(cpu="1").obj)
    h.clock.advance(0.5)
    assert Recorder.log[:4] == ["reserve a (Early)", "reserve a", "unreserve a (Probe)", "unreserve a (Early)"]
    assert h.pod("a").spec.nodeName is None
    assert ("FailedScheduling", "0/1 nodes are available: 1 no room in the plan.") in h.events("a")
    assert h.scheduler.cache.node_count == 1 and not h.scheduler.cache.nodes["n1"].pods  # forgotten
    assert h.scheduler.queue.where("default/a") == "unschedulablePods"


def test_reserve_error_backs_off_as_an_error(harness):
    h = setup(harness, ["reserve"], reserve=Status(Code.ERROR, "boom"))
    h.store.create(make_pod("a").obj)
    h.clock.advance(0.5)
    assert ("FailedScheduling", 'running Reserve plugin "Probe": boom') in h.events("a")
    condition = next(c for c in h.pod("a").status.conditions if c.type == "PodScheduled")
    assert condition.reason == "SchedulerError"
    assert h.scheduler.queue.where("default/a") == "backoffQ"


def test_permit_wait_holds_the_binding_until_timeout(harness):
    h = setup(harness, ["permit"], permit=Status(Code.WAIT), permit_timeout=10)
    h.store.create(make_pod("a").obj)
    h.clock.advance(5)
    assert h.pod("a").spec.nodeName is None
    assert h.scheduler.cache.is_assumed(h.pod("a").metadata.uid)  # held, counted on the node
    h.clock.advance(6)
    assert (
        "FailedScheduling",
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Probe.",
    ) in h.events("a")
    assert not h.scheduler.cache.is_assumed(h.pod("a").metadata.uid)


def test_permit_wait_then_allow_binds(harness):
    h = setup(harness, ["permit"], permit=Status(Code.WAIT), permit_timeout=60)
    h.store.create(make_pod("a").obj)
    h.clock.advance(1)
    fwk = h.scheduler.profiles["default-scheduler"]
    waiting = fwk.waiting_pods.get(h.pod("a").metadata.uid)
    assert waiting is not None and waiting.pending_plugins == ["Probe"]
    waiting.allow("Probe")
    h.clock.advance(1)
    assert h.pod("a").spec.nodeName == "n1"


def test_permit_rejection_is_unschedulable(harness):
    h = setup(harness, ["permit"], permit=Status(Code.UNSCHEDULABLE, "not now"))
    h.store.create(make_pod("a").obj)
    h.clock.advance(1)
    assert ("FailedScheduling", "0/1 nodes are available: 1 not now.") in h.events("a")


def test_pod_b_is_scheduled_while_pod_a_is_still_binding(harness):
    h = setup(harness, ["bind"], bind_delay=5.0, bind=None)
    h.store.create(make_pod("a").req(cpu="3").obj)
    h.store.create(make_pod("b").req(cpu="3").obj)
    h.clock.advance(1)
    # Both were decided (assumed) before either bind finished; b did not see the node as empty.
    assert Recorder.log == ["bind a"]  # only one fits: b is unschedulable on the assumed node
    assert h.scheduler.queue.where("default/b") == "unschedulablePods"
    assert h.scheduler.cache.is_assumed(h.pod("a").metadata.uid)


def test_bind_failure_forgets_the_pod_and_retries(harness):
    h = setup(harness, ["bind"], bind=Status(Code.ERROR, "api down"))
    h.store.create(make_pod("a").req(cpu="3").obj)
    h.clock.advance(0.5)
    assert not h.scheduler.cache.nodes["n1"].pods  # resources came back
    assert ("FailedScheduling", 'running Bind plugin "Probe": api down') in h.events("a")
    Recorder.verdicts = {"bind": None}
    h.clock.advance(3)  # error backoff, then retry
    assert Recorder.log.count("bind a") >= 2
    assert h.scheduler.cache.is_assumed(h.pod("a").metadata.uid) or h.pod("a").spec.nodeName is None
