"""What a scenario's `wait` and `assert` steps ask of the cluster.

Each condition reads the cluster as a client would see it — the store's objects, and what a pod
watch saw of preemption victims — and says either nothing (it holds) or, in one sentence, what is
so instead: that sentence is the failure a scenario reports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from lightkube.models import core_v1 as m
from lightkube.resources import core_v1

from kubesched.api.objects import Named, meta_of, present
from kubesched.api.selectors import node_selector_map_matches
from kubesched.cluster.errors import NotFound
from kubesched.storage import MemoryStore
from kubesched.whatif.scenario.fields import ScenarioError, integer, labels, mapping, only, text

TERMINAL = ("Succeeded", "Failed")
POD_STATES = ("all", "pending", "bound", "running", "unschedulable")


@dataclass
class World:
    """What conditions read: the store, and each preemption victim seen (pod key -> priority)."""

    store: MemoryStore
    preempted: dict[str, int] = field(default_factory=dict)

    def pod(self, key: str) -> core_v1.Pod | None:
        namespace, name = key.split("/", 1)
        try:
            return self.store.get(core_v1.Pod, name, namespace=namespace)
        except NotFound:
            return None

    def node_labels(self, name: str) -> dict[str, str]:
        try:
            node = self.store.get(core_v1.Node, name)
        except NotFound:
            return {}
        return dict(meta_of(node).labels or {})


class Condition(Protocol):
    def describe(self) -> str:
        """The condition in a few words, as the report names the step."""
        ...

    def check(self, world: World) -> str | None:
        """None when the condition holds, else what is so instead."""
        ...


@dataclass(frozen=True)
class Bounds:
    """How many there may be: any of at least, at most, exactly."""

    at_least: int | None = None
    at_most: int | None = None
    equals: int | None = None

    def describe(self) -> str:
        if self.equals is not None:
            return f"= {self.equals}"
        parts = [f">= {self.at_least}"] if self.at_least is not None else []
        parts += [f"<= {self.at_most}"] if self.at_most is not None else []
        return " and ".join(parts)

    def holds(self, n: int) -> bool:
        return (
            (self.equals is None or n == self.equals)
            and (self.at_least is None or n >= self.at_least)
            and (self.at_most is None or n <= self.at_most)
        )


def pod_key(value: object, where: str) -> str:
    """`name` (in `default`) or `namespace/name`."""
    name = text(value, where)
    return name if "/" in name else f"default/{name}"


def _node_of(pod: core_v1.Pod) -> str | None:
    return present(pod.spec, "the pod's spec").nodeName


def _scheduled(pod: core_v1.Pod) -> m.PodCondition | None:
    """The pod's PodScheduled condition, or None."""
    return next((c for c in (pod.status.conditions if pod.status else None) or () if c.type == "PodScheduled"), None)


def _waiting(pod: core_v1.Pod) -> str:
    """Why an unbound pod is not bound, as its PodScheduled condition says."""
    scheduled = _scheduled(pod)
    if scheduled is None or scheduled.status != "False":
        return "the scheduler has not said why"
    return f"{scheduled.reason}: {scheduled.message}" if scheduled.message else str(scheduled.reason)


def _matches(obj: Named, selector: Mapping[str, str]) -> bool:
    return node_selector_map_matches(selector, meta_of(obj).labels)


def _selector_text(selector: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in selector.items())


@dataclass(frozen=True)
class PodBound:
    pod: str
    node: str | None = None
    node_labels: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        where = f" to {self.node}" if self.node else ""
        where += f" on a node with {_selector_text(self.node_labels)}" if self.node_labels else ""
        return f"pod {self.pod} bound{where}"

    def check(self, world: World) -> str | None:
        pod = world.pod(self.pod)
        if pod is None:
            return f"pod {self.pod} does not exist"
        bound = _node_of(pod)
        if not bound:
            return f"pod {self.pod} is not bound ({_waiting(pod)})"
        if self.node and bound != self.node:
            return f"pod {self.pod} is bound to {bound}, not {self.node}"
        have = world.node_labels(bound)
        for key, want in self.node_labels.items():
            if have.get(key) != want:
                got = f"{key}={have[key]}" if key in have else f"no label {key}"
                return f"pod {self.pod} is bound to {bound}, which has {got}, not {key}={want}"
        return None


@dataclass(frozen=True)
class PodPending:
    pod: str
    reason: str | None = None
    message: str | None = None
    contains: str | None = None

    def describe(self) -> str:
        said = f" ({self.reason})" if self.reason else ""
        if self.message is not None:
            said += f" with message {self.message!r}"
        if self.contains is not None:
            said += f" with a message containing {self.contains!r}"
        return f"pod {self.pod} pending{said}"

    def check(self, world: World) -> str | None:
        pod = world.pod(self.pod)
        if pod is None:
            return f"pod {self.pod} does not exist"
        if bound := _node_of(pod):
            return f"pod {self.pod} is bound to {bound}"
        if self.reason is None and self.message is None and self.contains is None:
            return None
        scheduled = _scheduled(pod)
        if scheduled is None or scheduled.status != "False":
            return f"pod {self.pod} is pending, but the scheduler has not said why"
        said = scheduled.message or ""
        if self.reason is not None and scheduled.reason != self.reason:
            return f"pod {self.pod} is pending as {scheduled.reason}, not {self.reason} ({said})"
        if self.message is not None and said != self.message:
            return f"pod {self.pod}'s PodScheduled message is {said!r}, not {self.message!r}"
        if self.contains is not None and self.contains not in said:
            return f"pod {self.pod}'s PodScheduled message {said!r} does not contain {self.contains!r}"
        return None


@dataclass(frozen=True)
class PodRunning:
    pod: str

    def describe(self) -> str:
        return f"pod {self.pod} running"

    def check(self, world: World) -> str | None:
        pod = world.pod(self.pod)
        if pod is None:
            return f"pod {self.pod} does not exist"
        phase = pod.status.phase if pod.status else None
        if phase == "Running":
            return None
        return f"pod {self.pod} is {phase}" if phase else f"pod {self.pod} has no phase"


@dataclass(frozen=True)
class PodGone:
    pod: str

    def describe(self) -> str:
        return f"pod {self.pod} gone"

    def check(self, world: World) -> str | None:
        pod = world.pod(self.pod)
        if pod is None:
            return None
        state = "terminating" if meta_of(pod).deletionTimestamp else "still there"
        bound = _node_of(pod)
        return f"pod {self.pod} is {state}" + (f" on {bound}" if bound else "")


def _state_of(pod: core_v1.Pod) -> set[str]:
    phase = pod.status.phase if pod.status else None
    states = {"all"}
    if phase in TERMINAL:
        return states
    if _node_of(pod):
        states.add("bound")
    else:
        states.add("pending")
        scheduled = _scheduled(pod)
        if scheduled is not None and scheduled.status == "False" and scheduled.reason == "Unschedulable":
            states.add("unschedulable")
    if phase == "Running":
        states.add("running")
    return states


@dataclass(frozen=True)
class PodCount:
    state: str
    bounds: Bounds
    selector: Mapping[str, str] = field(default_factory=dict)
    namespace: str | None = None
    node_labels: Mapping[str, str] = field(default_factory=dict)  # only pods bound to nodes with these

    def describe(self) -> str:
        which = f" with {_selector_text(self.selector)}" if self.selector else ""
        which += f" in {self.namespace}" if self.namespace else ""
        which += f" on nodes with {_selector_text(self.node_labels)}" if self.node_labels else ""
        return f"{self.state} pods{which} {self.bounds.describe()}"

    def _on_nodes(self, world: World, pod: core_v1.Pod) -> bool:
        if not self.node_labels:
            return True
        bound = _node_of(pod)
        have = world.node_labels(bound) if bound else {}
        return node_selector_map_matches(self.node_labels, have)

    def check(self, world: World) -> str | None:
        pods: list[core_v1.Pod] = world.store.list(core_v1.Pod, namespace=self.namespace).items
        counted = [
            p for p in pods if _matches(p, self.selector) and self.state in _state_of(p) and self._on_nodes(world, p)
        ]
        if self.bounds.holds(len(counted)):
            return None
        shown = ", ".join(f"{meta_of(p).namespace}/{meta_of(p).name}" for p in counted[:5])
        more = f" and {len(counted) - 5} more" if len(counted) > 5 else ""
        listed = f" ({shown}{more})" if counted else ""
        return f"{len(counted)} {self.state} pods{listed}, expected {self.bounds.describe()}"


@dataclass(frozen=True)
class Preemptions:
    bounds: Bounds
    min_priority: int | None = None

    def describe(self) -> str:
        which = f" of priority >= {self.min_priority}" if self.min_priority is not None else ""
        return f"preemption victims{which} {self.bounds.describe()}"

    def check(self, world: World) -> str | None:
        victims = sorted(
            (k, p) for k, p in world.preempted.items() if self.min_priority is None or p >= self.min_priority
        )
        if self.bounds.holds(len(victims)):
            return None
        shown = ", ".join(f"{k} (priority {p})" for k, p in victims)
        return f"{len(victims)} preemption victims{': ' + shown if shown else ''}, expected {self.bounds.describe()}"


@dataclass(frozen=True)
class Spread:
    selector: Mapping[str, str]
    topology_key: str
    max_skew: int
    namespace: str | None = None

    def describe(self) -> str:
        return f"pods with {_selector_text(self.selector)} spread over {self.topology_key} with skew <= {self.max_skew}"

    def check(self, world: World) -> str | None:
        nodes: list[core_v1.Node] = world.store.list(core_v1.Node).items
        domain = {
            meta_of(n).name: have[self.topology_key]
            for n in nodes
            if self.topology_key in (have := meta_of(n).labels or {})
        }
        if not domain:
            return f"no node has the label {self.topology_key}"
        counts = Counter(dict.fromkeys(domain.values(), 0))
        pods: list[core_v1.Pod] = world.store.list(core_v1.Pod, namespace=self.namespace).items
        for p in pods:
            if _matches(p, self.selector) and "bound" in _state_of(p) and (bound := _node_of(p)) in domain:
                counts[domain[bound]] += 1
        skew = max(counts.values()) - min(counts.values())
        if skew <= self.max_skew:
            return None
        shown = ", ".join(f"{d}: {n}" for d, n in sorted(counts.items()))
        return f"skew {skew} over {self.topology_key} ({shown}), expected <= {self.max_skew}"


@dataclass(frozen=True)
class EventSeen:
    reason: str
    bounds: Bounds
    involved: str | None = None  # an object's name
    contains: str | None = None

    def describe(self) -> str:
        about = f" about {self.involved}" if self.involved else ""
        said = f" containing {self.contains!r}" if self.contains else ""
        return f"{self.reason} events{about}{said} {self.bounds.describe()}"

    def check(self, world: World) -> str | None:
        events: list[core_v1.Event] = world.store.list(core_v1.Event).items
        found = [
            e
            for e in events
            if e.reason == self.reason
            and (self.involved is None or e.involvedObject.name == self.involved)
            and (self.contains is None or self.contains in (e.message or ""))
        ]
        if self.bounds.holds(len(found)):
            return None
        last = f"; the last: {found[-1].message!r}" if found else ""
        return f"{len(found)} {self.reason} events{last}, expected {self.bounds.describe()}"


# ---- reading a condition from the file -------------------------------------------------------


def _bounds(body: Mapping[str, object], where: str, *, default: Bounds | None = None) -> Bounds:
    values = {
        key: integer(body[key], f"{where}.{key}") if key in body else None for key in ("atLeast", "atMost", "equals")
    }
    if all(v is None for v in values.values()):
        if default is None:
            raise ScenarioError(f"{where}: needs one of atLeast, atMost, equals")
        return default
    if values["equals"] is not None and (values["atLeast"] is not None or values["atMost"] is not None):
        raise ScenarioError(f"{where}: equals cannot be given with atLeast or atMost")
    return Bounds(values["atLeast"], values["atMost"], values["equals"])


def _optional_text(body: Mapping[str, object], key: str, where: str) -> str | None:
    return text(body[key], f"{where}.{key}") if key in body else None


def _pod_bound(body: dict[str, object], where: str) -> Condition:
    only(body, {"podBound", "node", "nodeLabels"}, where)
    return PodBound(
        pod_key(body["podBound"], f"{where}.podBound"),
        node=_optional_text(body, "node", where),
        node_labels=labels(body.get("nodeLabels", {}), f"{where}.nodeLabels"),
    )


def _pod_pending(body: dict[str, object], where: str) -> Condition:
    only(body, {"podPending", "reason", "message", "contains"}, where)
    message = body.get("message")
    if message is not None and not isinstance(message, str):
        raise ScenarioError(f"{where}.message: expected a string, got {message!r}")
    return PodPending(
        pod_key(body["podPending"], f"{where}.podPending"),
        reason=_optional_text(body, "reason", where),
        message=message,
        contains=_optional_text(body, "contains", where),
    )


def _pod_running(body: dict[str, object], where: str) -> Condition:
    only(body, {"podRunning"}, where)
    return PodRunning(pod_key(body["podRunning"], f"{where}.podRunning"))


def _pod_gone(body: dict[str, object], where: str) -> Condition:
    only(body, {"podGone"}, where)
    return PodGone(pod_key(body["podGone"], f"{where}.podGone"))


def _pods(body: dict[str, object], where: str) -> Condition:
    only(body, {"pods", "labels", "namespace", "nodeLabels", "atLeast", "atMost", "equals"}, where)
    state = text(body["pods"], f"{where}.pods")
    if state not in POD_STATES:
        raise ScenarioError(f"{where}.pods: {state!r} is not a pod state (known: {', '.join(POD_STATES)})")
    return PodCount(
        state,
        _bounds(body, where),
        selector=labels(body.get("labels", {}), f"{where}.labels"),
        namespace=_optional_text(body, "namespace", where),
        node_labels=labels(body.get("nodeLabels", {}), f"{where}.nodeLabels"),
    )


def _preemptions(body: dict[str, object], where: str) -> Condition:
    only(body, {"preemptions"}, where)
    where = f"{where}.preemptions"
    options = mapping(body["preemptions"], where)
    only(options, {"minPriority", "atLeast", "atMost", "equals"}, where)
    minimum = options.get("minPriority")
    if minimum is not None and (isinstance(minimum, bool) or not isinstance(minimum, int)):
        raise ScenarioError(f"{where}.minPriority: expected an integer, got {minimum!r}")
    return Preemptions(_bounds(options, where), min_priority=minimum)


def _spread(body: dict[str, object], where: str) -> Condition:
    only(body, {"spread", "topologyKey", "maxSkew", "namespace"}, where)
    for key in ("topologyKey", "maxSkew"):
        if key not in body:
            raise ScenarioError(f"{where}: spread needs {key}")
    return Spread(
        labels(body["spread"], f"{where}.spread"),
        text(body["topologyKey"], f"{where}.topologyKey"),
        integer(body["maxSkew"], f"{where}.maxSkew", minimum=0),
        namespace=_optional_text(body, "namespace", where),
    )


def _event(body: dict[str, object], where: str) -> Condition:
    only(body, {"event", "object", "contains", "atLeast", "atMost", "equals"}, where)
    return EventSeen(
        text(body["event"], f"{where}.event"),
        _bounds(body, where, default=Bounds(at_least=1)),
        involved=_optional_text(body, "object", where),
        contains=_optional_text(body, "contains", where),
    )


READERS: dict[str, Callable[[dict[str, object], str], Condition]] = {
    "podBound": _pod_bound,
    "podPending": _pod_pending,
    "podRunning": _pod_running,
    "podGone": _pod_gone,
    "pods": _pods,
    "preemptions": _preemptions,
    "spread": _spread,
    "event": _event,
}


def read_condition(value: object, where: str) -> Condition:
    """The condition a `wait` or `assert` holds: a mapping with one of READERS' keys and its options."""
    body = mapping(value, where)
    named = [k for k in body if k in READERS]
    if len(named) != 1:
        what = "no condition" if not named else f"{len(named)} conditions ({', '.join(named)})"
        raise ScenarioError(f"{where}: {what}; give one of {', '.join(READERS)}")
    return READERS[named[0]](body, where)
