"""The admission plugins a create passes before the kind's own rules, as kube-apiserver's chain
runs them: NamespaceLifecycle (the namespace must exist and not be terminating) and Priority (a
pod's priority resolved from its PriorityClass). Each plugin names the kinds it sees; a store is
built with the chain less those `--disable-admission-plugins` turns off."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, ClassVar, Protocol

import msgspec
from lightkube.models import core_v1 as m
from lightkube.resources import core_v1, scheduling_v1

from kubesched.api.objects import Served
from kubesched.api.priority import DEFAULT_PRIORITY
from kubesched.cluster.errors import Forbidden, NotFound
from kubesched.cluster.kinds import Kind
from kubesched.storage.podspecs import POD_SPECS

# Any: a kind's stored objects (their metadata set), by (namespace, name)
Tables = Callable[[type[Served]], Mapping[tuple[str, str], Any]]
Admitted = tuple[str | None, int, str]  # priorityClassName, priority, preemptionPolicy


class AdmissionPlugin(Protocol):
    name: ClassVar[str]
    kinds: ClassVar[frozenset[type[Served]] | None]  # the kinds it sees (None: every kind)

    def admit(self, kind: Kind, obj: object, tables: Tables) -> None:
        """Change the new object (the store's own copy, its name and namespace set) or refuse it
        by raising."""


class NamespaceLifecycle:
    name: ClassVar[str] = "NamespaceLifecycle"
    kinds: ClassVar[frozenset[type[Served]] | None] = None

    def admit(self, kind: Kind, obj: Any, tables: Tables) -> None:  # Any: the new object, its metadata set
        if not kind.namespaced:
            return
        meta = obj.metadata
        ns = meta.namespace
        home = tables(core_v1.Namespace).get(("", ns))
        if home is None:
            raise NotFound(f'namespaces "{ns}" not found', kind="namespaces", name=ns)
        if home.metadata.deletionTimestamp is not None:
            raise Forbidden(
                f'{kind.qualified} "{meta.name or ""}" is forbidden: unable to create new content in '
                f"namespace {ns} because it is being terminated",
                kind=kind.plural,
                name=meta.name or "",
            )


# Any: stored PriorityClasses, their metadata set
def admitted_priority(spec: m.PodSpec, name: str, priority_classes: Iterable[Any]) -> Admitted:
    """The priority class name, value and preemption policy a pod with `spec` is given (from its
    PriorityClass or the global default); an unknown class or a contradicting value is Forbidden."""
    class_name = spec.priorityClassName
    if class_name:
        found = next((pc for pc in priority_classes if pc.metadata.name == class_name), None)
        if found is None:
            raise Forbidden(
                f'pods "{name}" is forbidden: no PriorityClass with name {class_name} was found',
                kind="pods",
                name=name,
            )
        value, policy = found.value, found.preemptionPolicy
    else:
        default = next((pc for pc in priority_classes if pc.globalDefault), None)
        value = default.value if default else DEFAULT_PRIORITY
        policy = default.preemptionPolicy if default else None
        if default:
            class_name = default.metadata.name
    if spec.priority is not None and spec.priority != value:
        raise Forbidden(
            f'pods "{name}" is forbidden: the integer value of priority ({spec.priority}) must not be '
            "provided in pod spec; priority admission controller computed "
            f"{value} from the given PriorityClass name",
            kind="pods",
            name=name,
        )
    return class_name, value, spec.preemptionPolicy or policy or "PreemptLowerPriority"


class Priority:
    """A pod's priorityClassName, priority and preemptionPolicy set from its class. The pods of one
    spec that are given one outcome share one admitted spec (the store never changes a spec in
    place), derived from the spec's prepared form."""

    name: ClassVar[str] = "Priority"
    kinds: ClassVar[frozenset[type[Served]] | None] = frozenset({core_v1.Pod})

    def admit(self, kind: Kind, obj: Any, tables: Tables) -> None:  # Any: the new pod, its metadata set
        spec = obj.spec
        if spec is None:
            return  # validation says what is missing
        outcome = admitted_priority(spec, obj.metadata.name or "", tables(scheduling_v1.PriorityClass).values())
        class_name, value, policy = outcome
        obj.spec = POD_SPECS.derive(
            spec,
            outcome,
            lambda: msgspec.structs.replace(
                spec, priorityClassName=class_name, priority=value, preemptionPolicy=policy
            ),
        )


PLUGINS: tuple[type[AdmissionPlugin], ...] = (NamespaceLifecycle, Priority)  # in the order they run


class AdmissionChain:
    def __init__(self, *, disabled: Collection[str] = ()) -> None:
        known = {p.name for p in PLUGINS}
        unknown = set(disabled) - known
        if unknown:
            raise ValueError(f"disable_admission: unknown admission plugin(s) {sorted(unknown)}")
        self._plugins = [p() for p in PLUGINS if p.name not in disabled]
        self._by_kind: dict[type[Served], list[AdmissionPlugin]] = {}

    def admit(self, kind: Kind, obj: object, tables: Tables) -> None:
        plugins = self._by_kind.get(kind.cls)
        if plugins is None:
            plugins = self._by_kind[kind.cls] = [p for p in self._plugins if p.kinds is None or kind.cls in p.kinds]
        for plugin in plugins:
            plugin.admit(kind, obj, tables)
