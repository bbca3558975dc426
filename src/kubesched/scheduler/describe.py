"""What a registry's plugins are: where each comes from, the points, batch paths and hooks it
declares, its arguments' defaults, and where a configuration's profiles enable it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TypedDict

import msgspec

from kubesched.cache import Snapshot
from kubesched.clock import RealClock
from kubesched.config import SchedulerConfig
from kubesched.framework.args import decode_args
from kubesched.framework.conformance import declared_points, declares
from kubesched.framework.handle import FrameworkHandle, Services
from kubesched.framework.interface import (
    EnqueueExtensions,
    ExtensionPoint,
    FailureSignatures,
    FilterBatchPlugin,
    HintKeys,
    NormalizeScoreBatch,
    PreFilterExtensions,
    QueueSortKey,
    ScoreBatchPlugin,
    ScoreExtensions,
)
from kubesched.framework.registry import Registry
from kubesched.scheduler.profiles import build_frameworks

BATCH = (
    (FilterBatchPlugin, "filter_batch"),
    (FailureSignatures, "failure_signatures"),
    (ScoreBatchPlugin, "score_batch"),
    (NormalizeScoreBatch, "normalize_score_batch"),
)
EXTENSIONS = (
    (PreFilterExtensions, "add_pod/remove_pod"),
    (ScoreExtensions, "normalize_score"),
    (EnqueueExtensions, "events_to_register"),
    (HintKeys, "hint_key"),
    (QueueSortKey, "sort_key"),
)


class Enabled(TypedDict):
    """Where a profile enables a plugin: the profile, the point, the weight (Score only)."""

    profile: str
    point: str
    weight: int | None


@dataclass
class PluginInfo:
    name: str
    source: str
    points: list[str] = field(default_factory=list)
    batch: list[str] = field(default_factory=list)
    extensions: list[str] = field(default_factory=list)
    args_type: str | None = None
    args: object = None  # the defaults, as a configuration spells them
    enabled: list[Enabled] = field(default_factory=list)
    error: str = ""

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _defaults(args_type: type[object]) -> object:
    value = decode_args(None, args_type)
    data = msgspec.to_builtins(value)
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if k not in ("kind", "apiVersion") and v is not None}
    return data


def describe(registry: Registry, config: SchedulerConfig) -> list[PluginInfo]:
    """Every plugin of `registry`, and where `config`'s profiles (built as `run` builds them) enable it.
    FrameworkError when a profile cannot be built."""
    services = Services(snapshot=Snapshot(), clock=RealClock())
    frameworks = build_frameworks(config, registry, services)
    out: list[PluginInfo] = []
    for name in sorted(registry):
        entry = registry.get(name)
        assert entry is not None
        info = PluginInfo(name, entry.source)
        if entry.args_type is not None:
            info.args_type = entry.args_type.__name__
            info.args = _defaults(entry.args_type)
        try:
            plugin = entry.factory(None, FrameworkHandle(services))
        except Exception as e:
            info.error = f"its factory failed without arguments: {type(e).__name__}: {e}"
        else:
            info.points = [str(p) for p in declared_points(plugin)]
            info.batch = [label for proto, label in BATCH if declares(plugin, proto)]
            info.extensions = [label for proto, label in EXTENSIONS if declares(plugin, proto)]
        for profile, fwk in frameworks.items():
            for point in ExtensionPoint:
                if name in fwk.names(point):
                    weight = fwk.weights.get(name) if point == ExtensionPoint.SCORE else None
                    info.enabled.append({"profile": profile, "point": str(point), "weight": weight})
        out.append(info)
    return out
