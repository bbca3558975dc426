"""A scenario file: the cluster it starts from, the scheduler it runs, and its steps at virtual
times — objects created, patched and deleted, conditions waited for and asserted.

```yaml
name: spread-over-zones
cluster:
  nodes: [{count: 6, capacity: {cpu: "4", memory: 16Gi, pods: "110"}}]
  objects: []                  # PriorityClasses, budgets, namespaces: stored before the start
scheduler: {config: config.yaml, plugins: [], seed: 0}
steps:
  - create: {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {...}}
    copies: 6                  # web-0 ... web-5
  - assert: {pods: bound, labels: {app: web}, equals: 6}
    within: 5s
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kubesched.api import yamlfile
from kubesched.sim import NodeTemplate
from kubesched.sim.nodes import DEFAULT_ZONES
from kubesched.whatif.documents import section
from kubesched.whatif.scenario.conditions import Condition, read_condition
from kubesched.whatif.scenario.fields import (
    ScenarioError,
    boolean,
    duration,
    each,
    integer,
    labels,
    mapping,
    only,
    sequence,
    text,
)

DEFAULT_WAIT = 30.0  # seconds of virtual time a `wait` step waits without a `timeout`
PATCH_TYPES = ("merge", "strategic", "json")


@dataclass(frozen=True)
class NodeGroup:
    """`count` fake nodes named `<name>-0`, `<name>-1`, ..., made from `template`."""

    count: int
    name: str
    template: NodeTemplate


@dataclass(frozen=True)
class Ref:
    """An object a step names: its kind (and apiVersion, when given), name and namespace."""

    kind: str
    name: str
    api_version: str | None = None
    namespace: str | None = None

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


@dataclass(frozen=True)
class Create:
    objects: tuple[dict[str, object], ...]
    copies: int | None = None  # each object made this many times, `<name>-<i>`

    def describe(self) -> str:
        names = [f"{o.get('kind', '?')} {section(o, 'metadata').get('name', '?')}" for o in self.objects]
        copies = f" x{self.copies}" if self.copies is not None else ""
        return f"create {', '.join(names)}{copies}"


@dataclass(frozen=True)
class AddNodes:
    """Fake nodes added (the kubelets run their pods), as `cluster.nodes` makes them."""

    group: NodeGroup

    def describe(self) -> str:
        g = self.group
        return f"add node {g.name}-0" if g.count == 1 else f"add nodes {g.name}-0..{g.name}-{g.count - 1}"


@dataclass(frozen=True)
class Patch:
    ref: Ref
    patch: object  # as the step gives it (a merge patch's mapping, a JSON patch's list)
    patch_type: str = "merge"

    def describe(self) -> str:
        return f"patch {self.ref}"


@dataclass(frozen=True)
class Delete:
    ref: Ref

    def describe(self) -> str:
        return f"delete {self.ref}"


@dataclass(frozen=True)
class Wait:
    condition: Condition
    timeout: float = DEFAULT_WAIT

    def describe(self) -> str:
        return f"wait for {self.condition.describe()} (timeout {self.timeout:g}s)"


@dataclass(frozen=True)
class Assert:
    condition: Condition
    within: float = 0.0  # seconds it may take to hold; 0: it holds when the step runs

    def describe(self) -> str:
        within = f" within {self.within:g}s" if self.within else ""
        return f"assert {self.condition.describe()}{within}"


Action = Create | AddNodes | Patch | Delete | Wait | Assert


@dataclass(frozen=True)
class Step:
    """One step: its number (from 1), its `name` if the file gives one, when it runs — not before
    `at` seconds from the start, or `after` seconds after the step before ends — and what it does."""

    number: int
    action: Action
    name: str = ""
    at: float | None = None
    after: float = 0.0

    @property
    def title(self) -> str:
        """How the report names the step: `step 3 "zone a" (assert pod default/web bound)`."""
        named = f' "{self.name}"' if self.name else ""
        return f"step {self.number}{named} ({self.action.describe()})"


@dataclass(frozen=True)
class Scenario:
    path: Path
    name: str
    steps: tuple[Step, ...]
    description: str = ""
    snapshot: Path | None = None
    nodes: tuple[NodeGroup, ...] = ()
    objects: tuple[dict[str, object], ...] = ()
    kubelets: bool = True
    controllers: str = "*"  # kube-controller-manager's --controllers syntax
    config: Path | dict[str, object] | None = None  # a file, or the KubeSchedulerConfiguration itself
    plugins: tuple[str, ...] = ()  # `module:attr` or `file.py:attr` (files relative to the scenario)
    seed: int = 0


_TOP = {"name", "description", "cluster", "scheduler", "steps"}
_CLUSTER = {"snapshot", "nodes", "objects", "kubelets", "controllers"}
_SCHEDULER = {"config", "plugins", "seed"}
_GROUP = {"count", "name", "capacity", "allocatable", "labels", "taints", "zones", "unschedulable"}
_ACTIONS = ("create", "addNodes", "patch", "delete", "wait", "assert")
_STEP = {"name", "at", "after", "copies", "timeout", "within", *_ACTIONS}
_OPTIONS = {"copies": "create", "timeout": "wait", "within": "assert"}  # each belongs with one action


def load(path: str | Path) -> Scenario:
    """The scenario in `path`; ScenarioError naming the file and the field when it is not one."""
    path = Path(path)
    try:
        document = yamlfile.load(path)
    except yamlfile.YamlError as e:
        raise ScenarioError(str(e)) from None
    try:
        return parse(document, path)
    except ScenarioError as e:
        raise ScenarioError(f"{path}: {e}") from None


def parse(document: object, path: Path) -> Scenario:
    body = mapping(document, "the scenario")
    only(body, _TOP, "the scenario")
    if "steps" not in body:
        raise ScenarioError("steps: a scenario needs steps")
    cluster = mapping(body.get("cluster") or {}, "cluster")
    only(cluster, _CLUSTER, "cluster")
    scheduler = mapping(body.get("scheduler") or {}, "scheduler")
    only(scheduler, _SCHEDULER, "scheduler")
    here = path.parent
    steps = tuple(_step(item, i) for i, item in enumerate(sequence(body["steps"], "steps")))
    if not steps:
        raise ScenarioError("steps: a scenario needs at least one step")
    groups = tuple(each(cluster.get("nodes", []), "cluster.nodes", read_node_group))
    names = [g.name for g in groups]
    if len(set(names)) != len(names):
        raise ScenarioError("cluster.nodes: each group needs a name of its own (the nodes are named <name>-<i>)")
    given = scheduler.get("config")
    config: Path | dict[str, object] | None = None
    if isinstance(given, Mapping):
        config = dict(given)
    elif given is not None:
        config = here / text(given, "scheduler.config")
    return Scenario(
        path=path,
        name=text(body["name"], "name") if "name" in body else path.stem,
        description=str(body.get("description") or ""),
        steps=steps,
        snapshot=here / text(cluster["snapshot"], "cluster.snapshot") if "snapshot" in cluster else None,
        nodes=groups,
        objects=tuple(_manifests(cluster.get("objects", []), "cluster.objects")),
        kubelets=boolean(cluster.get("kubelets", True), "cluster.kubelets"),
        controllers=_controllers(cluster.get("controllers", "*")),
        config=config,
        plugins=tuple(each(scheduler.get("plugins", []), "scheduler.plugins", lambda p, at: plugin_ref(p, here, at))),
        seed=integer(scheduler.get("seed", 0), "scheduler.seed"),
    )


def _controllers(value: object) -> str:
    """kube-controller-manager's `--controllers` list as given ("" runs none)."""
    if not isinstance(value, str):
        raise ScenarioError(f'cluster.controllers: expected a list such as "*,-job" in a string, got {value!r}')
    return value


def plugin_ref(value: object, here: Path, where: str) -> str:
    """`module:attr` as given; `file.py:attr` with the file taken relative to `here` (the file's folder)."""
    spec = text(value, where)
    module, _, attr = spec.rpartition(":")
    if not module or not attr:
        raise ScenarioError(f"{where}: expected module:attr or file.py:attr, got {spec!r}")
    if module.endswith(".py") and not Path(module).is_absolute():
        return f"{here / module}:{attr}"
    return spec


def read_node_group(value: object, where: str) -> NodeGroup:
    """A node group (`count`, `name`, `capacity`, `labels`, `taints`, `zones`...) as a file gives it."""
    body = mapping(value, where)
    only(body, _GROUP, where)
    zones = body.get("zones", list(DEFAULT_ZONES))
    defaults = NodeTemplate()
    template = NodeTemplate(
        capacity=_resources(body.get("capacity", dict(defaults.capacity)), f"{where}.capacity"),
        allocatable=_resources(body["allocatable"], f"{where}.allocatable") if "allocatable" in body else None,
        labels=labels(body.get("labels", {}), f"{where}.labels"),
        taints=tuple(each(body.get("taints", []), f"{where}.taints", mapping)),
        unschedulable=boolean(body.get("unschedulable", False), f"{where}.unschedulable"),
        zones=tuple(each(zones, f"{where}.zones", text)),
    )
    return NodeGroup(
        count=integer(body.get("count", 1), f"{where}.count"),
        name=text(body.get("name", "node"), f"{where}.name"),
        template=template,
    )


def _resources(value: object, where: str) -> dict[str, str]:
    out = {}
    for name, quantity in mapping(value, where).items():
        if isinstance(quantity, bool) or not isinstance(quantity, str | int):
            raise ScenarioError(f"{where}.{name}: expected a quantity such as 4 or 16Gi, got {quantity!r}")
        out[name] = str(quantity)
    return out


def _manifests(value: object, where: str) -> list[dict[str, object]]:
    """One manifest or a list of them, each with apiVersion, kind and metadata.name."""
    items = value if isinstance(value, list) else [value]
    out = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]" if isinstance(value, list) else where
        doc = mapping(item, at)
        for key in ("apiVersion", "kind"):
            text(doc.get(key), f"{at}.{key}")
        text(mapping(doc.get("metadata"), f"{at}.metadata").get("name"), f"{at}.metadata.name")
        out.append(doc)
    return out


def _ref(value: object, where: str, *, extra: Sequence[str] = ()) -> tuple[Ref, dict[str, object]]:
    body = mapping(value, where)
    only(body, {"apiVersion", "kind", "name", "namespace", *extra}, where)
    ref = Ref(
        kind=text(body.get("kind"), f"{where}.kind"),
        name=text(body.get("name"), f"{where}.name"),
        api_version=text(body["apiVersion"], f"{where}.apiVersion") if "apiVersion" in body else None,
        namespace=text(body["namespace"], f"{where}.namespace") if "namespace" in body else None,
    )
    return ref, body


def _action(name: str, body: Mapping[str, object], where: str) -> Action:
    value = body[name]
    at = f"{where}.{name}"
    if name == "create":
        copies = integer(body["copies"], f"{where}.copies", minimum=1) if "copies" in body else None
        return Create(tuple(_manifests(value, at)), copies)
    if name == "addNodes":
        return AddNodes(read_node_group(value, at))
    if name == "patch":
        ref, fields = _ref(value, at, extra=("type", "patch"))
        patch_type = fields.get("type", "merge")
        if not isinstance(patch_type, str) or patch_type not in PATCH_TYPES:
            raise ScenarioError(f"{at}.type: {patch_type!r} is not a patch type (known: {', '.join(PATCH_TYPES)})")
        if "patch" not in fields:
            raise ScenarioError(f"{at}.patch: the patch to apply is missing")
        return Patch(ref, fields["patch"], patch_type)
    if name == "delete":
        return Delete(_ref(value, at)[0])
    if name == "wait":
        timeout = duration(body["timeout"], f"{where}.timeout") if "timeout" in body else DEFAULT_WAIT
        return Wait(read_condition(value, at), timeout)
    within = duration(body["within"], f"{where}.within") if "within" in body else 0.0
    return Assert(read_condition(value, at), within)


def _step(value: object, index: int) -> Step:
    where = f"steps[{index}]"
    body = mapping(value, where)
    only(body, _STEP, where)
    actions = [a for a in _ACTIONS if a in body]
    if len(actions) != 1:
        what = "no action" if not actions else f"{len(actions)} actions ({', '.join(actions)})"
        raise ScenarioError(f"{where}: {what}; a step does one of {', '.join(_ACTIONS)}")
    for option, owner in _OPTIONS.items():
        if option in body and owner != actions[0]:
            raise ScenarioError(f"{where}.{option}: belongs with {owner}, not {actions[0]}")
    if "at" in body and "after" in body:
        raise ScenarioError(f"{where}: give at or after, not both")
    return Step(
        number=index + 1,
        action=_action(actions[0], body, where),
        name=text(body["name"], f"{where}.name") if "name" in body else "",
        at=duration(body["at"], f"{where}.at") if "at" in body else None,
        after=duration(body.get("after", 0), f"{where}.after"),
    )


def node_groups(groups: Sequence[NodeGroup]) -> list[tuple[str, int, NodeTemplate]]:
    """Each node to make: (name, index within its group, template)."""
    return [(f"{g.name}-{i}", i, g.template) for g in groups for i in range(g.count)]
