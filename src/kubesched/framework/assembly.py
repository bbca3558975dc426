"""A profile's plugins put together: each built once by its registry factory and checked, then
enrolled at the extension points it is enabled for, in upstream's order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubesched.framework.args import decode_args
from kubesched.framework.conformance import ConformanceError, check, declared_points, declares
from kubesched.framework.handle import FrameworkHandle
from kubesched.framework.interface import (
    MULTI_POINT,
    POINT_PROTOCOLS,
    BindPlugin,
    ExtensionPoint,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.registry import Registry


class FrameworkError(ValueError):
    """A profile that cannot be built (no bind plugin, two queue sorts, an unknown plugin, a plugin
    that does not conform to what it declares or whose factory fails...)."""


@dataclass
class ProfilePlugins:
    """A profile's plugin configuration after merging with the defaults: per extension point
    (and `multiPoint`) the enabled plugins in order with their weights, the disabled names
    (`*` for all), and each plugin's arguments."""

    enabled: dict[str, list[tuple[str, int | None]]] = field(default_factory=dict)
    disabled: dict[str, set[str]] = field(default_factory=dict)
    args: dict[str, object] = field(default_factory=dict)


@dataclass
class Points:
    """The plugins enrolled at each extension point, in the order they run."""

    pre_enqueue: list[PreEnqueuePlugin] = field(default_factory=list)
    queue_sort: list[QueueSortPlugin] = field(default_factory=list)
    pre_filter: list[PreFilterPlugin] = field(default_factory=list)
    filter: list[FilterPlugin] = field(default_factory=list)
    post_filter: list[PostFilterPlugin] = field(default_factory=list)
    pre_score: list[PreScorePlugin] = field(default_factory=list)
    score: list[ScorePlugin] = field(default_factory=list)
    reserve: list[ReservePlugin] = field(default_factory=list)
    permit: list[PermitPlugin] = field(default_factory=list)
    pre_bind: list[PreBindPlugin] = field(default_factory=list)
    bind: list[BindPlugin] = field(default_factory=list)
    post_bind: list[PostBindPlugin] = field(default_factory=list)

    def at(self, point: ExtensionPoint) -> list[Plugin]:
        plugins: list[Plugin] = getattr(self, _FIELDS[point])  # the point's field: a list of its plugins
        return plugins


_FIELDS = {
    ExtensionPoint.PRE_ENQUEUE: "pre_enqueue",
    ExtensionPoint.QUEUE_SORT: "queue_sort",
    ExtensionPoint.PRE_FILTER: "pre_filter",
    ExtensionPoint.FILTER: "filter",
    ExtensionPoint.POST_FILTER: "post_filter",
    ExtensionPoint.PRE_SCORE: "pre_score",
    ExtensionPoint.SCORE: "score",
    ExtensionPoint.RESERVE: "reserve",
    ExtensionPoint.PERMIT: "permit",
    ExtensionPoint.PRE_BIND: "pre_bind",
    ExtensionPoint.BIND: "bind",
    ExtensionPoint.POST_BIND: "post_bind",
}


def build(name: str, args: object, registry: Registry, handle: FrameworkHandle) -> Plugin:
    """The plugin `name` made by its factory with `args` (its defaults when None), checked to
    conform to what it declares."""
    entry = registry.get(name)
    if entry is None:
        raise FrameworkError(f'plugin "{name}" does not exist')
    try:
        if args is None and entry.args_type is not None:
            args = decode_args(None, entry.args_type)  # no pluginConfig: the defaults
        plugin: Plugin = entry.factory(args, handle)
    except Exception as e:
        raise FrameworkError(f'plugin "{name}": its factory failed: {type(e).__name__}: {e}') from None
    try:
        check(plugin, name)
    except ConformanceError as e:
        raise FrameworkError(str(e)) from None
    if plugin.name != name:
        raise FrameworkError(f'plugin "{name}": its factory built a plugin named "{plugin.name}"')
    return plugin


def expand(
    point: ExtensionPoint, plugins: ProfilePlugins, instances: Mapping[str, Plugin], weights: dict[str, int]
) -> list[Plugin]:
    """The plugins at one extension point: those enabled there explicitly, merged with the
    multiPoint plugins that declare it (upstream's order: explicit overrides of multiPoint
    plugins, then multiPoint plugins, then the other explicit ones); the score plugins' weights
    go into `weights`."""
    proto = POINT_PROTOCOLS[point]
    explicit: list[str] = []
    for name, weight in plugins.enabled.get(point, []):
        if not declares(instances[name], proto):
            declared = ", ".join(declared_points(instances[name])) or "none"
            raise FrameworkError(
                f'plugin "{name}" does not extend {point} plugin (its class does not declare '
                f"{proto.__name__}; it declares: {declared})"
            )
        if name in explicit:
            raise FrameworkError(f'plugin "{name}" already registered as "{point}"')
        explicit.append(name)
        if point == ExtensionPoint.SCORE:
            weights[name] = weight or 1
    disabled = plugins.disabled.get(point, set())
    if "*" in disabled:
        return [instances[n] for n in explicit]
    overrides: list[str] = []
    multi: list[str] = []
    for name, weight in plugins.enabled.get(MULTI_POINT, []):
        if not declares(instances[name], proto) or name in disabled:
            continue
        if name in explicit:
            overrides.append(name)
            continue
        if name in multi:
            raise FrameworkError(f'plugin "{name}" already registered as "{point}"')
        multi.append(name)
        if point == ExtensionPoint.SCORE:
            weights[name] = weight or 1
    first = [n for n in explicit if n in overrides]  # in the explicit list's order
    rest = [n for n in explicit if n not in overrides]
    return [instances[n] for n in (*first, *multi, *rest)]
